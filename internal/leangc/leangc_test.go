package leangc

import (
	"runtime/debug"
	"testing"
)

// Lower sets the lean target, overlapping calls keep it until the last one ends, and then
// the target of before is back; a lower target is kept as it is.
func TestLower(t *testing.T) {
	old := debug.SetGCPercent(400)
	defer debug.SetGCPercent(old)
	a := Lower()
	b := Lower()
	if got := debug.SetGCPercent(leanPercent); got != leanPercent {
		t.Errorf("while lowered: GOGC %d, want %d", got, leanPercent)
	}
	a()
	a() // once only
	if got := debug.SetGCPercent(leanPercent); got != leanPercent {
		t.Errorf("one of two ended: GOGC %d, want %d", got, leanPercent)
	}
	b()
	if got := debug.SetGCPercent(400); got != 400 {
		t.Errorf("after both: GOGC %d, want 400", got)
	}
	debug.SetGCPercent(10)
	c := Lower()
	if got := debug.SetGCPercent(10); got != 10 {
		t.Errorf("a lower target became %d", got)
	}
	c()
}
