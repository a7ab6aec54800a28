package elide

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	long := `["` + strings.Repeat("a", 200) + `"]`
	for _, c := range []struct{ in, want string }{
		{"{ \"a\" :\n [1, 2] }", `{"a":[1,2]}`},
		{long, long[:QuoteMax-3] + "..."},
		{`{"a":`, `{"a":`}, // not JSON: as it is
	} {
		if got := Quote(json.RawMessage(c.in)); got != c.want {
			t.Errorf("Quote(%.30q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Quote(json.RawMessage(long)); len(got) != QuoteMax {
		t.Errorf("a long value quoted in %d bytes, want %d", len(got), QuoteMax)
	}
}
