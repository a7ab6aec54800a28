//go:build !unix

// This file is the fallback of osdep_unix.go where there is no kill(pid, 0): no temporary
// file is ever taken as stale.

package tools

import "syscall"

func processGone(int) bool { return false }

func noHardLinks(error) bool { return true }

func signalNamed(string) syscall.Signal { return 0 }
