package object

import "log/slog"

// Redacted is what a Secret prints as.
const Redacted = "**redacted**"

// Secret holds a credential. Every way of printing it (fmt verbs, JSON,
// slog) shows "**redacted**"; only Reveal returns the value, and only the
// code that hands it to a client library should call it.
type Secret struct{ v string }

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{v: s} }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.v == "" }

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s.v == "" {
		return ""
	}
	return Redacted
}

// GoString implements fmt.GoStringer, for %#v.
func (s Secret) GoString() string { return `object.Secret("` + s.String() + `")` }

// MarshalText keeps the secret out of JSON, XML and YAML.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue keeps the secret out of structured logs.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }
