package toolexec

import "time"

// SetQuickCall makes calls that execute in under d count as quick (see runConcurrently),
// for the tests that need the choice made whatever the machine's load; it returns a func
// that restores the threshold.
func SetQuickCall(d time.Duration) (restore func()) {
	old := quickCall.Swap(int64(d))
	return func() { quickCall.Store(old) }
}
