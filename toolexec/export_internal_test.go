package toolexec

import "time"

// SetQuick makes calls that execute in under quick count as quick, and the calls queued
// behind a quick call wait rescue before they get goroutines (see runConcurrently), for the
// tests that need these choices made whatever the machine's load; it returns a func that
// restores both.
func SetQuick(quick, rescue time.Duration) (restore func()) {
	oldQuick, oldRescue := quickCall.Swap(int64(quick)), rescueAfter.Swap(int64(rescue))
	return func() {
		quickCall.Store(oldQuick)
		rescueAfter.Store(oldRescue)
	}
}
