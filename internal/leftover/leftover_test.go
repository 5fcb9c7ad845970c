package leftover

import (
	"os/exec"
	"testing"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/fsbench-h-1-ab": "/tmp/fsbench-h-1-ab",
		"/mnt/my data":        "'/mnt/my data'",
		"/mnt/it's":           `'/mnt/it'\''s'`,
		"":                    "''",
		"/x/$(reboot)":        "'/x/$(reboot)'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
		// The shell reads the quoted text back as the original.
		out, err := exec.Command("sh", "-c", "printf %s "+ShellQuote(in)).Output()
		if err != nil || string(out) != in {
			t.Errorf("sh reads %s as %q (%v), want %q", ShellQuote(in), out, err, in)
		}
	}
}

func TestPhrases(t *testing.T) {
	if got := Dir("/mnt/a b/fsbench-x"); got != "directory /mnt/a b/fsbench-x (remove it with: rm -rf '/mnt/a b/fsbench-x')" {
		t.Errorf("Dir = %s", got)
	}
	if got := Objects("http://127.0.0.1:9000/b/fsbench-objbench-x/"); got != "the objects under http://127.0.0.1:9000/b/fsbench-objbench-x/ (delete every key under that prefix to remove them)" {
		t.Errorf("Objects = %s", got)
	}
	var tr Tracker
	tr.Set("x")
	if tr.What() != "x" {
		t.Error("Set")
	}
	tr.Clear()
	if tr.What() != "" {
		t.Error("Clear")
	}
}

func TestLabel(t *testing.T) {
	for _, tt := range []struct {
		s, keep string
		repl    byte
		max     int
		want    string
	}{
		{"node-1.example.com", "-.", '_', 32, "node-1.example.com"},
		{"node_1.example.com", "-", '-', 24, "node-1-example-com"},
		{"a b/c", "-.", '_', 32, "a_b_c"},
		{"abcdefghijklmnopqrstuvwxyz", "-", '-', 24, "abcdefghijklmnopqrstuvwx"},
		{"", "-", '-', 24, ""},
	} {
		if got := Label(tt.s, tt.keep, tt.repl, tt.max); got != tt.want {
			t.Errorf("Label(%q, %q, %q, %d) = %q, want %q", tt.s, tt.keep, tt.repl, tt.max, got, tt.want)
		}
	}
}

func TestDirPath(t *testing.T) {
	for _, p := range []string{"/mnt/a/fsbench-h-1-ab", "/mnt/my data (old)/fsbench-x", "/x/$(reboot)", "/it's"} {
		if got, ok := DirPath(Dir(p)); !ok || got != p {
			t.Errorf("DirPath(Dir(%q)) = %q, %v", p, got, ok)
		}
	}
	for _, bad := range []string{"", "directory ", Objects("s3://b/p/"), "directory /x (remove it with: rm -rf /y)"} {
		if got, ok := DirPath(bad); ok {
			t.Errorf("DirPath(%q) = %q, want none", bad, got)
		}
	}
}
