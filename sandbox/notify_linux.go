// This file tells the Guard which folders changed since it last looked, with inotify: each
// folder it lists is watched, and a folder no event came for since is not looked at again,
// not even with an lstat. A walk of an unchanged tree then costs no system call per folder
// (a workspace with 20,000 folders, node_modules say, cost 100 to 300 ms per walk here
// otherwise, before and after every command). The events of a change are queued by the
// kernel during the system call that made it, so once every process of a command has
// ended, its changes are all in the queue. The process has one inotify instance for every
// Guard (a user may have only 128, and the editor needs its own), open while one watches a
// folder, and takes at most a quarter of the user's watches; when the kernel gives none,
// or no more watches, or the queue overflows, the Guard looks with lstat again.

package sandbox

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// notifyMask is what a watched folder reports: an entry made, removed or moved in or out,
// and the folder itself removed or moved.
const notifyMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// notifier is the process's inotify instance and who watches what.
var notifier struct {
	// mu guards the fields below, and the use of fd.
	mu sync.Mutex
	// fd is the instance, open while a Guard watches a folder (-1: closed; the test of
	// package tools checks that a process whose workspaces are all closed holds none).
	fd int
	// broken says the kernel gave no instance: the Guards look with lstat.
	broken bool
	// users are the Guards with watches.
	users map[*Guard]bool
	// byWD maps a watch to the Guards that watch its folder, and the path each knows it by.
	byWD map[int32]map[*Guard]string
	// pending are, for each Guard, the folders that changed since it last drained, and
	// whether it must look at every folder again (the queue overflowed).
	pending map[*Guard]*changes
}

func init() { notifier.fd = -1 }

// changes are the folders a Guard must look at again.
type changes struct {
	dirs map[string]bool
	all  bool
}

// openLocked opens the instance when it is closed; false when the kernel gives none.
// notifier.mu must be held.
func openLocked() bool {
	if notifier.fd >= 0 {
		return true
	}
	if notifier.broken {
		return false
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		notifier.broken = true
		return false
	}
	notifier.fd = fd
	notifier.users = map[*Guard]bool{}
	notifier.byWD = map[int32]map[*Guard]string{}
	notifier.pending = map[*Guard]*changes{}
	return true
}

// maxWatches bounds the watches pid holds for the Guards: a quarter of the user's
// (fs.inotify.max_user_watches), which the person's editor needs too, and at most 100,000.
var maxWatches = sync.OnceValue(func() int {
	n := 8192
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			n = v
		}
	}
	return min(n/4, 100_000)
})

// watchDir watches the folder path for g before g lists it, and returns its watch (-1
// when it cannot be watched, or pid holds maxWatches: g then looks at it with lstat).
func (g *Guard) watchDir(path string) int32 {
	notifier.mu.Lock()
	defer notifier.mu.Unlock()
	if !openLocked() || len(notifier.byWD) >= maxWatches() {
		return -1
	}
	wd, err := unix.InotifyAddWatch(notifier.fd, path, notifyMask)
	if err != nil {
		return -1
	}
	notifier.users[g] = true
	m := notifier.byWD[int32(wd)]
	if m == nil {
		m = map[*Guard]string{}
		notifier.byWD[int32(wd)] = m
	}
	m[g] = path
	return int32(wd)
}

// unwatchDir stops g's watch wd of the folder path (when path is still what g knows it
// by: a folder moved and watched again under its new path keeps its watch).
func (g *Guard) unwatchDir(wd int32, path string) {
	if wd < 0 {
		return
	}
	notifier.mu.Lock()
	defer notifier.mu.Unlock()
	m := notifier.byWD[wd]
	if m == nil || m[g] != path {
		return
	}
	delete(m, g)
	if len(m) == 0 {
		delete(notifier.byWD, wd)
		unix.InotifyRmWatch(notifier.fd, uint32(wd))
	}
}

// drained reads every event queued so far and returns the folders of g that changed since
// g last asked (all: every folder must be looked at again). ok is false when the kernel
// gives no inotify: g then looks with lstat.
func (g *Guard) drained() (dirs map[string]bool, all, ok bool) {
	notifier.mu.Lock()
	defer notifier.mu.Unlock()
	if notifier.broken {
		return nil, true, false
	}
	if notifier.fd < 0 {
		return nil, false, true // no watch yet: every folder is listed, and watched
	}
	var buf [64 << 10]byte
	for {
		n, err := unix.Read(notifier.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			break // EAGAIN: the queue is empty
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				for w := range notifier.users {
					pendingFor(w).all = true
				}
				continue
			}
			for w, path := range notifier.byWD[ev.Wd] {
				pendingFor(w).dirs[path] = true
			}
			if ev.Mask&unix.IN_IGNORED != 0 {
				delete(notifier.byWD, ev.Wd) // the kernel dropped the watch
			}
		}
	}
	c := pendingFor(g)
	delete(notifier.pending, g)
	return c.dirs, c.all, true
}

// pendingFor returns g's pending changes, made when missing. notifier.mu must be held.
func pendingFor(g *Guard) *changes {
	c := notifier.pending[g]
	if c == nil {
		c = &changes{dirs: map[string]bool{}}
		notifier.pending[g] = c
	}
	return c
}

// forget drops every watch and pending change of g, and closes the instance when no Guard
// watches anything any more.
func (g *Guard) forget() {
	notifier.mu.Lock()
	defer notifier.mu.Unlock()
	if notifier.fd < 0 {
		return
	}
	delete(notifier.pending, g)
	delete(notifier.users, g)
	for wd, m := range notifier.byWD {
		if _, ok := m[g]; !ok {
			continue
		}
		delete(m, g)
		if len(m) == 0 {
			delete(notifier.byWD, wd)
			unix.InotifyRmWatch(notifier.fd, uint32(wd))
		}
	}
	if len(notifier.users) == 0 {
		unix.Close(notifier.fd)
		notifier.fd = -1
		notifier.byWD, notifier.pending = nil, nil
	}
}
