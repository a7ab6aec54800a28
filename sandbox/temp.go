// This file holds the sessions' temporary folders (a command's TMPDIR): their names say
// whose daemon made them, so that a daemon's start removes those a killed daemon left.

package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TempPrefix starts the name of every session's temporary folder, which goes on with the
// daemon's process id and a dash.
const TempPrefix = "pid-sandbox-"

// MakeTemp makes a session's temporary folder in os.TempDir() and returns its real path.
func MakeTemp() (string, error) {
	d, err := os.MkdirTemp("", TempPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(d); err == nil {
		d = real
	}
	return d, nil
}

// SweepStaleTemp removes the sessions' temporary folders in dir whose daemon is gone (a
// daemon killed with SIGKILL leaves its own): TempPrefix+PID+"-*" where no process PID is
// alive. A folder of a live process (another daemon's), or one this user does not own,
// stays. It returns the folders removed. The commands' cgroups such a daemon left go too.
func SweepStaleTemp(dir string) []string {
	sweepCgroups()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), TempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		num, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(num)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(p); err != nil || !ownedByMe(fi) {
			continue
		}
		if RemoveTemp(p) == nil {
			out = append(out, p)
		}
	}
	return out
}

// RemoveTemp removes the temporary folder p whole, giving its folders write permission back
// first when a command took it (a Go module cache's read-only folders).
func RemoveTemp(p string) error {
	err := os.RemoveAll(p)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}
