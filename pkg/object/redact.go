package object

import (
	"net/url"
	"strings"
)

// RedactURL removes the user information (credentials) from a URL the user
// typed, for messages. Text that does not parse as a URL is cut at its last
// "@" instead, so a secret never survives.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || !strings.Contains(raw, "://") {
		if i := strings.LastIndex(raw, "@"); i >= 0 {
			if j := strings.Index(raw, "://"); j >= 0 && j < i {
				return raw[:j+3] + Redacted + raw[i:]
			}
			return Redacted + raw[i:]
		}
		return raw
	}
	if u.User == nil {
		return raw
	}
	u.User = nil
	return strings.Replace(u.String(), "://", "://"+Redacted+"@", 1)
}
