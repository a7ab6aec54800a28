// This file holds what cmd/pid does differently on Windows: stdin and stdout stay as they
// are (no O_NONBLOCK on a pipe handle: reads hold a thread, as Go's os.Stdin does), and
// there is no signal for the stats line (SIGUSR1's number is never delivered here, so
// PID_STATS does nothing).

package main

import (
	"os"
	"syscall"
)

// statsSignal is never delivered on Windows.
var statsSignal = syscall.Signal(10)

// pollable returns f: see stdio.go for what it does on Unix.
func pollable(f *os.File, _ int) *os.File { return f }
