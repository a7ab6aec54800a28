//go:build unix

// This file makes stdin and stdout pollable when they are pipes or sockets.

package main

import (
	"os"
	"syscall"
)

// pollable returns a File for fd that goes through Go's network poller when fd is a pipe or
// a socket (what an editor gives its child). A goroutine waiting to read then parks instead
// of holding an OS thread in read(2), so the goroutine it wakes (a tool waiting for its
// approval) runs on the same thread at once, with no cross-thread wake-up: this halves the
// approval round trip. Terminals and files are left as they are (O_NONBLOCK on a terminal
// would leak to the shell).
func pollable(f *os.File, fd int) *os.File {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
