package nfs

import (
	"strings"
	"testing"
)

func TestParseNFSURL(t *testing.T) {
	for _, c := range []struct {
		in, host string
		port     int
		path     string
		err      string
	}{
		{"nfs://server/export/dir", "server", 0, "/export/dir", ""},
		{"nfs://10.0.0.5/export/", "10.0.0.5", 0, "/export", ""},
		{"server:/export/a/b", "server", 0, "/export/a/b", ""},
		{"nfs://server:2049/export", "server", 2049, "/export", ""},
		{"nfs://127.0.0.1:40123/tmp/x", "127.0.0.1", 40123, "/tmp/x", ""},
		{"nfs://[::1]:40123/e", "::1", 40123, "/e", ""},
		{"nfs://h:40123/e?mountport=40124", "h", 40123, "/e", ""},
		{"nfs://h:1/e?mountport=0", "", 0, "", "mountport"},
		{"nfs://h:1/e?mount=2", "", 0, "", "unknown option"},
		{"nfs://server", "", 0, "", "no export"},
		{"nfs://server:0/export", "", 0, "", "port"},
		{"nfs://server:70000/export", "", 0, "", "port"},
		{"nfs://server:x/export", "", 0, "", "invalid"},
		{"nfs://server/export?a=b", "", 0, "", "unknown option"},
		{"server", "", 0, "", "invalid"},
		{"server:2049:/export", "", 0, "", "invalid"},
		{"/just/a/path", "", 0, "", "invalid"},
		{"nfs://u:pw@server/x", "", 0, "", "invalid"},
		{"nfs://:/0", "", 0, "", "invalid"}, // found by FuzzParseNFSURL
		{"nfs://[]/export", "", 0, "", "invalid"},
	} {
		u, err := parseNFSURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "pw") {
				t.Errorf("%s: err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if strings.Contains(c.in, "mountport=") && u.mountPort != 40124 {
			t.Errorf("%s: mount port %d", c.in, u.mountPort)
		}
		if err != nil || u.host != c.host || u.port != c.port || u.path != c.path {
			t.Errorf("%s = %+v, %v; want %s %d %s", c.in, u, err, c.host, c.port, c.path)
		}
	}
}

func FuzzParseNFSURL(f *testing.F) {
	for _, s := range []string{"nfs://h/e/p", "h:/e", "nfs://h", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := parseNFSURL(s)
		if err == nil && (u.host == "" || !strings.HasPrefix(u.path, "/") || u.path == "/" || u.port < 0 || u.port > 65535) {
			t.Fatalf("%q: %+v", s, u)
		}
	})
}
