package tools

import (
	"bufio"
	"context"
	"strings"
	"testing"
)

// countLines counts the lines eachLine would give, whatever the line endings, across
// buffer boundaries, and stops when its context ends.
func TestCountLinesAsEachLine(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, s := range []string{"", "a", "a\n", "a\nb", "a\r\nb\r\n", "\n\n\n", long + "\n" + long, strings.Repeat("ab\n", 3000) + "tail"} {
		want := 0
		if err := eachLine(bufio.NewReaderSize(strings.NewReader(s), 16), 10, func([]byte, int) bool { want++; return true }); err != nil {
			t.Fatal(err)
		}
		got, err := countLines(context.Background(), bufio.NewReaderSize(strings.NewReader(s), 16))
		if err != nil || got != want {
			t.Errorf("%.20q (%d bytes): countLines = %d, %v; eachLine gave %d", s, len(s), got, err, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := countLines(ctx, bufio.NewReader(strings.NewReader("a\nb\n"))); err == nil {
		t.Error("countLines went on after its context ended")
	}
}
