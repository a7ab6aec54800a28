// This file reads, on Linux, the stat fields the snapshot's cache compares besides mode,
// size and mtime: the device, the inode and the status change time, as search.ScanStat
// reports them here.

package checkpoint

import (
	"io/fs"
	"syscall"
)

// statIDs returns fi's device, inode and status change time (nanoseconds); zeros when fi
// carries no Stat_t.
func statIDs(fi fs.FileInfo) (dev, ino uint64, ctime int64) {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Dev), uint64(sys.Ino), sys.Ctim.Sec*1e9 + sys.Ctim.Nsec
	}
	return 0, 0, 0
}
