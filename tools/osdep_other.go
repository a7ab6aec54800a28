//go:build !unix

// This file is the fallback of osdep_unix.go where there are no FIFOs, no O_NONBLOCK and
// no kill(pid, 0): files open plainly and no temporary file is ever taken as stale.

package tools

import (
	"errors"
	"os"
	"syscall"
)

const openReadFlags = os.O_RDONLY

func setBlocking(*os.File) error { return nil }

func dupFile(*os.File, string) (*os.File, error) { return nil, errors.ErrUnsupported }

func processGone(int) bool { return false }

func noHardLinks(error) bool { return true }

func signalNamed(string) syscall.Signal { return 0 }
