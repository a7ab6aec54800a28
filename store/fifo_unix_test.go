//go:build unix

package store

import "syscall"

// mkfifo makes a FIFO at path.
func mkfifo(path string, mode uint32) error { return syscall.Mkfifo(path, mode) }
