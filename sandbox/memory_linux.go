// This file reads the machine's memory, for the default memory limit.

package sandbox

import (
	"sync"

	"golang.org/x/sys/unix"
)

// totalMemoryMB returns the machine's memory in MiB, 0 when unknown; read once.
var totalMemoryMB = sync.OnceValue(func() int {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int(uint64(si.Totalram) * uint64(si.Unit) >> 20)
})
