// This file prints pid's runtime figures on request, for soak tests (cmd/pidsoak): with
// PID_STATS set in the environment, each SIGUSR1 (statsSignal; none on Windows) writes one
// line to stderr.

package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
)

// statsOnSignal writes, for each signal on sigs (SIGUSR1) until done is closed, one line to
// stderr:
//
//	pid-stats goroutines=N heap_live=BYTES heap_inuse=BYTES heap_sys=BYTES sys=BYTES gc=N
//
// heap_live is the heap in use right after a forced collection (what is really retained).
// Started by run only when PID_STATS is set: the collection stops the world for a moment,
// which a soak test accepts and an editor should not get by accident.
func statsOnSignal(sigs chan os.Signal, done <-chan struct{}) {
	defer signal.Stop(sigs)
	for {
		select {
		case <-done:
			return
		case <-sigs:
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			fmt.Fprintf(os.Stderr, "pid-stats goroutines=%d heap_live=%d heap_inuse=%d heap_sys=%d sys=%d gc=%d\n",
				runtime.NumGoroutine(), m.HeapAlloc, m.HeapInuse, m.HeapSys, m.Sys, m.NumGC)
		}
	}
}
