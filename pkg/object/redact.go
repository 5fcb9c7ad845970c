package object

import (
	"net/url"
	"strings"
)

// RedactURL removes the credentials from a URL the user typed, for
// messages: its user information, and the values of query parameters
// whose names say they are secrets (token=, X-Amz-Signature=, sig=,
// password=, ...), as presigned and token-carrying URLs hold them. Text
// that does not parse as a URL is cut at its last "@" instead, so a
// secret never survives.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || !strings.Contains(raw, "://") {
		raw = redactQuery(raw)
		if i := strings.LastIndex(raw, "@"); i >= 0 {
			if j := strings.Index(raw, "://"); j >= 0 && j < i {
				return raw[:j+3] + Redacted + raw[i:]
			}
			return Redacted + raw[i:]
		}
		return raw
	}
	if u.User == nil {
		return redactQuery(raw)
	}
	u.User = nil
	return redactQuery(strings.Replace(u.String(), "://", "://"+Redacted+"@", 1))
}

// redactQuery replaces the values of s's secret query parameters.
func redactQuery(s string) string {
	q := strings.IndexByte(s, '?')
	if q < 0 {
		return s
	}
	end := len(s)
	if f := strings.IndexByte(s[q:], '#'); f >= 0 {
		end = q + f
	}
	params := strings.Split(s[q+1:end], "&")
	for i, p := range params {
		if k, _, ok := strings.Cut(p, "="); ok && secretParam(k) {
			params[i] = k + "=" + Redacted
		}
	}
	return s[:q+1] + strings.Join(params, "&") + s[end:]
}

// secretWords are parts of query parameter names that hold credentials.
var secretWords = []string{"token", "secret", "pass", "key", "sig", "credential", "auth", "session"}

// secretParam reports whether a query parameter named k holds a secret.
func secretParam(k string) bool {
	if u, err := url.QueryUnescape(k); err == nil {
		k = u
	}
	k = strings.ToLower(k)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
