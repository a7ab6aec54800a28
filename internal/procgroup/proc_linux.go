// This file sets the parent-death signal, which only Linux has among the systems pid
// builds for with process groups.

package procgroup

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// parentDeath makes the child get SIGKILL when the thread that starts it ends (see spawner
// for why that thread is pid's lifetime), and reports that it did, so the child must be
// started on the spawner's thread.
func parentDeath(a *syscall.SysProcAttr) bool {
	a.Pdeathsig = syscall.SIGKILL
	return true
}

// hasLiveMember reports whether the group pgid has a process that is not a zombie, from
// /proc. kill(-pgid, 0) also counts zombies, which an init that reaps slowly (in some
// containers) leaves for a while after they were killed; waiting for those would only
// delay pid's exit. Without /proc it answers true.
func hasLiveMember(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold anything, so parse after the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		if pg, err := strconv.Atoi(string(f[2])); err == nil && pg == pgid {
			return true
		}
	}
	return false
}
