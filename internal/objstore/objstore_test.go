package objstore

import (
	"io"
	"strings"
	"testing"
)

// body is a response body that records whether its end was seen before
// it was closed.
type body struct {
	r               io.Reader
	sawEOF, eofSeen bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.sawEOF = true
	}
	return n, err
}

func (b *body) Close() error { b.eofSeen = b.sawEOF; return nil }

// Close sees the end of a body read exactly to its length (io.ReadFull
// stops short of it), so that the connection can serve the next request.
func TestCloseSeesEOF(t *testing.T) {
	b := &body{r: strings.NewReader("0123456789")}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(b, buf); err != nil {
		t.Fatal(err)
	}
	if err := Close(b); err != nil || !b.eofSeen {
		t.Errorf("closed with the end seen %v (%v)", b.eofSeen, err)
	}
}
