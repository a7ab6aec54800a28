//go:build !unix

package rpc

import "errors"

// mkfifo fails: there are no FIFOs here (the tests that need one run on Unix).
func mkfifo(string, uint32) error { return errors.ErrUnsupported }
