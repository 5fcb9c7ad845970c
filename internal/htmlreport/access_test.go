package htmlreport

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/fsbench/fsbench/internal/report"
)

// sectionText is the text of the page's section id.
func sectionText(t *testing.T, page []byte, id string) string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var text string
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "section" && attr(n, "id") == id {
			text = nodeText(n)
		}
	})
	return text
}

// TestAccessShown: a result whose random phase drew its blocks from a
// skewed distribution shows, where its phases are (Throughput), the
// distribution, its items and picks, and the measured hot-set shares
// with the expected ones; a result without one shows no such table.
func TestAccessShown(t *testing.T) {
	r := benchFixture(t, 1, 1)
	r.Phases[1].Access = []report.Access{{Distribution: "zipf:1.2", Of: "blocks", Items: 4096, Picks: 81920,
		Top1Pct: 72.34, Top10Pct: 90.12, Want1Pct: 70.1, Want10Pct: 89.9}}
	var b bytes.Buffer
	if err := Write(&b, []*report.Result{r}, []string{"skewed"}); err != nil {
		t.Fatal(err)
	}
	got := sectionText(t, b.Bytes(), "throughput")
	for _, want := range []string{"Skewed access", "skewed Read big file zipf:1.2 4096 blocks 81920 72.3% expected 70.1% 90.1% expected 89.9%"} {
		if !strings.Contains(got, want) {
			t.Errorf("throughput section lacks %q:\n%s", want, got)
		}
	}
	b.Reset()
	if err := Write(&b, []*report.Result{benchFixture(t, 1, 1)}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Skewed access") {
		t.Error("a result without skewed access shows a table of it")
	}
}
