// Package leangc lowers the garbage-collection target while a big session is read or sent
// to the editor. The daemon runs with GOGC 400 (cmd/pid), which lets the heap grow to five
// times what is live: cheap for a daemon holding a few MB, but loading a session of 200 MB
// would then peak near a gigabyte of garbage not yet collected (the file's lines, the
// escapes undone, the pages encoded for the editor). The entry point is Lower.
package leangc

import (
	"runtime/debug"
	"sync"
)

// leanPercent is the GC target (GOGC) while Lower is in force: the heap may grow by a
// quarter of what is live before a collection. The big objects of a load are strings, which
// the collector does not scan, so collecting more often costs little.
const leanPercent = 25

// lean counts the Lower calls in force and keeps the GC target to restore.
var lean struct {
	// mu guards depth and saved.
	mu    sync.Mutex
	depth int
	saved int
}

// Lower lowers the process's GC target to leanPercent (unless it is lower already) until
// the returned function is called; calls may overlap (the first sets it, the last to end
// restores it). A face calls it around a load and the encoding of its result.
//
// Contract: safe for concurrent use; the returned function must be called once.
func Lower() (restore func()) {
	lean.mu.Lock()
	if lean.depth == 0 {
		lean.saved = debug.SetGCPercent(leanPercent)
		if lean.saved >= 0 && lean.saved < leanPercent {
			debug.SetGCPercent(lean.saved)
		}
	}
	lean.depth++
	lean.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			lean.mu.Lock()
			defer lean.mu.Unlock()
			if lean.depth--; lean.depth == 0 {
				debug.SetGCPercent(lean.saved)
			}
		})
	}
}
