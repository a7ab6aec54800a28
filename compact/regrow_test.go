package compact_test

// Tests of when an automatic compaction may come again (CompactedAt, Counter.Regrown) and of
// session/compact's answer's shape (Result).

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/compact"
)

func TestCompactedAt(t *testing.T) {
	for _, c := range []struct{ tried, lastAt, length, want int }{
		{0, 0, 5, 0}, // never
		{3, 0, 5, 3}, // a failed attempt alone
		{0, 4, 5, 4}, // a compaction alone
		{3, 4, 5, 4}, // the later of the two
		{5, 2, 5, 5}, // an attempt at this very length
		{6, 0, 5, 0}, // past the transcript: a restore started it over
		{2, 7, 5, 0},
	} {
		if got := compact.CompactedAt(c.tried, c.lastAt, c.length); got != c.want {
			t.Errorf("CompactedAt(%d, %d, %d) = %d, want %d", c.tried, c.lastAt, c.length, got, c.want)
		}
	}
}

func TestCounterRegrown(t *testing.T) {
	tr := msgs(u(100), a(100), u(100), a(100), u(100))
	var c compact.Counter
	c.Update(tr)
	n := len(tr)
	for _, k := range []struct {
		at, keep int
		want     bool
	}{
		{0, 1 << 30, true},  // never compacted: the threshold decides alone
		{n, 0, false},       // not one message since
		{n - 1, 0, true},    // one message, nothing to keep
		{n - 2, 150, true},  // two messages of about 100 tokens each
		{n - 2, 250, false}, // not yet the 250 a compaction would keep
		{1, 250, true},
	} {
		if got := c.Regrown(k.at, n, k.keep); got != k.want {
			t.Errorf("Regrown(at %d, length %d, keep %d) = %v, want %v (grown by %d tokens)", k.at, n, k.keep, got, k.want, c.Since(k.at))
		}
	}
}

func TestResultJSON(t *testing.T) {
	got, err := json.Marshal(compact.Result{Summary: "s", TokensBefore: 7, FirstKeptIndex: 3})
	want := `{"summary":"s","tokensBefore":7,"firstKeptIndex":3}`
	if err != nil || string(got) != want {
		t.Errorf("Result as JSON: %s, %v; want %s (session/compact's answer)", got, err, want)
	}
}
