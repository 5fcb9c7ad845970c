package object

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://AK:SK@host/b", "https://**redacted**@host/b"},
		{"https://host/b", "https://host/b"},
		{"/local/dir", "/local/dir"},
		{"http://AK:S K%zz@host/b", "http://**redacted**@host/b"}, // does not parse
		{"AK:SK@host:/export", "**redacted**@host:/export"},
		{"http://host:9090/metrics?token=s3cr3t&format=text", "http://host:9090/metrics?token=**redacted**&format=text"},
		{"https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=abc#f", "https://b.s3.amazonaws.com/k?X-Amz-Credential=**redacted**&X-Amz-Signature=**redacted**#f"},
		{"https://u:p@host/p?api_key=1&region=x", "https://**redacted**@host/p?api_key=**redacted**&region=x"},
		{"http://host/%zz?access_token=t", "http://host/%zz?access_token=**redacted**"}, // does not parse
		{"https://host/b?region=us", "https://host/b?region=us"},
	} {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := NewSecret("hunter2")
	cfg := Config{SecretKey: s, SessionToken: NewSecret("tok3n")}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("cfg", "secret", s, "cfg", cfg)
	j, err := json.Marshal(struct{ A, B Secret }{cfg.SecretKey, cfg.SessionToken})
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %s %+v %#v %q", s, s, cfg, cfg, s), string(j), logged.String()} {
		if strings.Contains(out, "hunter2") || strings.Contains(out, "tok3n") {
			t.Errorf("secret printed: %s", out)
		}
		if !strings.Contains(out, Redacted) {
			t.Errorf("no %s in %s", Redacted, out)
		}
	}
	if s.Reveal() != "hunter2" || NewSecret("").String() != "" || !NewSecret("").IsZero() {
		t.Error("Reveal/IsZero")
	}
}

// everything claims every capability and wraps a store: the capability
// checks answer for the store below.
func everything(s Storage) Storage {
	return &prefixedAll{&prefixed{s: s, p: "p/"}, &prefixMultipart{p: "p/"}, &prefixFS{p: "p/"}}
}

func TestCapabilitiesThroughWrappers(t *testing.T) {
	wf, ws := everything(recorderFS{&recorder{}}), everything(recorderMP{&recorder{}})
	if AsFileSystem(wf) == nil || AsMultipart(wf) != nil {
		t.Error("wrapped file store: file attributes, no multipart expected")
	}
	if AsMultipart(ws) == nil || AsFileSystem(ws) != nil {
		t.Error("wrapped s3 store: multipart, no file attributes expected")
	}
}

// A program that imports no driver is told which package to import.
func TestOpenWithoutDrivers(t *testing.T) {
	regMu.Lock()
	saved := drivers
	drivers = map[string]Driver{}
	regMu.Unlock()
	defer func() {
		regMu.Lock()
		drivers = saved
		regMu.Unlock()
	}()
	_, err := Open(context.Background(), "s3", "s3://b", Config{})
	if !errors.Is(err, ErrUnknownDriver) || !strings.Contains(err.Error(), "pkg/object/all") {
		t.Errorf("err = %v, want one naming pkg/object/all", err)
	}
}
