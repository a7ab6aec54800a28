//go:build !unix

package proctest

import "os"

// exists reports whether process pid exists: on Windows, whether it can be opened.
func exists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
