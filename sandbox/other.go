//go:build !linux

// This file is the sandbox on systems other than Linux: there is none, so a sandboxed call
// fails closed.

package sandbox

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/pid-agent/pid/internal/procgroup"
)

const reason = "pid's sandbox needs Linux (Landlock and user namespaces)"

// Probe reports that no sandbox is available here.
func Probe() Capability {
	if c := pretend.Load(); c != nil {
		return *c
	}
	return Capability{Reason: reason}
}

// Cmd is a sandboxed command; see the Linux version.
type Cmd struct {
	*exec.Cmd
	NetworkCut  string
	PidNS       bool
	ProcessesBy string
}

// Shape is what the helper starts with; see the Linux version.
type Shape struct {
	Network   bool
	Processes int
}

// Prepare fails: there is no sandbox here.
func Prepare(pol Policy, argv []string, dir string, env []string) (*Cmd, error) {
	return nil, errors.New(reason)
}

// PrepareShape fails: there is no sandbox here.
func PrepareShape(sh Shape, argv []string, dir string, env []string) (*Cmd, error) {
	return nil, errors.New(reason)
}

// Retarget is never reached here.
func (c *Cmd) Retarget(argv []string, dir string, env []string) {}

// Shape is never reached here.
func (c *Cmd) Shape() Shape { return Shape{} }

// Begin is never reached here.
func (c *Cmd) Begin() {}

// SendPolicy is never reached here.
func (c *Cmd) SendPolicy(pol Policy) error { return errors.New(reason) }

// AbortPolicy is never reached here.
func (c *Cmd) AbortPolicy() {}

// Started is never reached here.
func (c *Cmd) Started() error { return nil }

// Finish is never reached here.
func (c *Cmd) Finish() (syscall.Signal, bool) { return 0, false }

// Close is never reached here.
func (c *Cmd) Close() {}

// StartGroup is never reached here.
func (c *Cmd) StartGroup() (*procgroup.Group, error) { return nil, errors.New(reason) }

// Pid is never reached here.
func (c *Cmd) Pid() int { return 0 }

// HolderConfig is what a session's holder is made for; see the Linux version.
type HolderConfig struct {
	Network bool
	Proxy   bool
}

// Holder is a session's namespace holder; there is none here.
type Holder struct{}

// StartHolder fails: there is no sandbox here.
func StartHolder(HolderConfig) (*Holder, error) { return nil, errors.New(reason) }

// Alive is never reached here.
func (h *Holder) Alive() bool { return false }

// NetworkNamespace is never reached here.
func (h *Holder) NetworkNamespace() bool { return false }

// ProxyListener is never reached here.
func (h *Holder) ProxyListener() (net.Listener, string) { return nil, "" }

// Prepare fails: there is no sandbox here.
func (h *Holder) Prepare(Shape) (*Cmd, error) { return nil, errors.New(reason) }

// Close is never reached here.
func (h *Holder) Close() error { return nil }

// ServeTerminals fails: there is no sandbox here.
func (h *Holder) ServeTerminals(string) error { return errors.New(reason) }

// TerminalArgv fails: there is no sandbox here.
func (h *Holder) TerminalArgv(string, Policy, []string, string, []string) ([]string, error) {
	return nil, errors.New(reason)
}

// Main fails: there is no helper here.
func Main(args []string) int {
	os.Stderr.WriteString("pid sandbox-exec: " + reason + "\n")
	return 125
}

// totalMemoryMB is unknown here.
func totalMemoryMB() int { return 0 }

// fileKey is a file's identity where the Guard knows none: always zero, so that every walk
// lists every folder again.
type fileKey struct{ ino, ctime int64 }

func keyOf(fs.FileInfo) fileKey { return fileKey{} }

// processAlive says every process is alive: nothing is swept here.
func processAlive(int) bool { return true }

func ownedByMe(fs.FileInfo) bool { return false }

func sweepCgroups() {}

// openParent opens the folder holding p.
func openParent(root, p string) (*os.Root, error) { return os.OpenRoot(filepath.Dir(p)) }

// No inotify here: the Guard looks with lstat.
func (g *Guard) watchDir(string) int32                         { return -1 }
func (g *Guard) unwatchDir(int32, string)                      {}
func (g *Guard) drained() (dirs map[string]bool, all, ok bool) { return nil, true, false }
func (g *Guard) forget()                                       {}
