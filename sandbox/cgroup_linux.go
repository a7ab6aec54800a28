// This file gives a sandboxed command a cgroup of its own that caps its processes, when pid
// runs as root and can make one: RLIMIT_NPROC does not hold for root (the kernel exempts
// root's processes), so such a daemon needs the pids controller; for any other user
// RLIMIT_NPROC, counted per user namespace, caps the command's processes as well, for free.
// The daemon makes the cgroup and sets pids.max, moves the helper into it while the helper
// starts (before the helper gets its policy, so before anything runs), and removes it once
// the helper has been waited for.

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// cgroupBase returns the cgroup folder under which pid makes the commands' cgroups, and
// which cgroup version it is ("v2", "v1"); "" when pid cannot make one with the pids
// controller: cgroup v2 where pid's own cgroup hands the pids controller to its children
// (cgroup.subtree_control), else the cgroup v1 pids hierarchy where pid may write. Found
// once per process.
var cgroupBase = sync.OnceValues(func() (string, string) {
	own := ownCgroups()
	mounts := cgroupMounts()
	if m, ok := mounts["v2"]; ok {
		if p, ok := own["0"]; ok {
			if dir, ok := under(m, p); ok && hasWord(readString(filepath.Join(dir, "cgroup.subtree_control")), "pids") && writableDir(dir) {
				return dir, "v2"
			}
		}
	}
	if m, ok := mounts["pids"]; ok {
		if p, ok := own["pids"]; ok {
			if dir, ok := under(m, p); ok && writableDir(dir) {
				return dir, "v1"
			}
		}
	}
	return "", ""
})

// cgroupMount is a cgroup file system's mount: where it is and which of its folders it
// shows there.
type cgroupMount struct{ point, root string }

// cgroupMounts returns the mounts of the cgroup v2 file system ("v2") and of the v1 pids
// hierarchy ("pids"), from /proc/self/mountinfo.
func cgroupMounts() map[string]cgroupMount {
	out := map[string]cgroupMount{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 {
			continue
		}
		m := cgroupMount{point: unescapeMount(a[4]), root: unescapeMount(a[3])}
		switch {
		case b[0] == "cgroup2":
			if _, ok := out["v2"]; !ok {
				out["v2"] = m
			}
		case b[0] == "cgroup" && hasWord(strings.ReplaceAll(b[2], ",", " "), "pids"):
			if _, ok := out["pids"]; !ok {
				out["pids"] = m
			}
		}
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups returns this process's cgroups by hierarchy: "0" for v2, a v1 controller's
// name ("pids") for v1.
func ownCgroups() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(readString("/proc/self/cgroup"), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			out["0"] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// under returns the folder of cgroup path p in mount m.
func under(m cgroupMount, p string) (string, bool) {
	if m.root == "/" {
		return filepath.Join(m.point, p), true
	}
	if p != m.root && !strings.HasPrefix(p, m.root+"/") {
		return "", false
	}
	return filepath.Join(m.point, strings.TrimPrefix(p, m.root)), true
}

func readString(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// writableDir reports whether a folder can be made in d (made and removed again).
func writableDir(d string) bool {
	probe := filepath.Join(d, fmt.Sprintf("pid-%d-probe", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return false
	}
	return os.Remove(probe) == nil
}

// cgroupSeq numbers the commands' cgroups.
var cgroupSeq atomic.Int64

// newCommandCgroup makes a cgroup that lets the processes in it have at most max processes
// and threads, and returns its folder and the cgroup version; "" when pid cannot make one
// (see cgroupBase).
func newCommandCgroup(max int) (string, string, error) {
	base, version := cgroupBase()
	if base == "" {
		return "", "", nil
	}
	dir := filepath.Join(base, fmt.Sprintf("pid-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("making the command's cgroup: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		os.Remove(dir)
		return "", "", fmt.Errorf("setting the command's pids.max: %v", err)
	}
	return dir, version, nil
}

// removeCgroup removes a command's cgroup once its processes are gone (a process that
// has just ended may still count for a moment).
func removeCgroup(dir string) error {
	var err error
	for i := range 50 {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(time.Duration(i+1) * time.Millisecond)
	}
	return err
}

// moveToCgroup moves the process pid, all its threads, into the cgroup dir. The daemon
// moves the helper while the helper starts, and gives it its policy only once it is in:
// the move waits for the kernel (an RCU grace period under cgroup v1, milliseconds on a
// loaded machine), which this keeps off the helper's path.
func moveToCgroup(dir string, pid int) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// sweepCgroups removes the commands' cgroups a daemon that is gone left (pid-PID-N with no
// process PID alive); a cgroup that still holds processes stays.
func sweepCgroups() {
	base, _ := cgroupBase()
	if base == "" {
		return
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "pid-")
		if !ok || !e.IsDir() {
			continue
		}
		num, _, _ := strings.Cut(rest, "-")
		if pid, err := strconv.Atoi(num); err == nil && pid != os.Getpid() && !processAlive(pid) {
			os.Remove(filepath.Join(base, e.Name()))
		}
	}
}
