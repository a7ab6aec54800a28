// Package safefile reads and writes the files pid keeps for itself (settings, remembered
// answers, trust, session files): a read never blocks on a FIFO or device and never takes
// more than a cap, and a write replaces a file atomically. Workspaces can ship any of these
// names as links to /dev/zero, /dev/stdin or a FIFO; this package is why that is harmless.
//
// The entry points are Read and WriteAtomic; OpenNoFollow opens a file that must not be a link.
package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pid-agent/pid/internal/rootfile"
)

// SettingsMax is the size cap for settings and ignore files: 1 MB.
const SettingsMax = 1 << 20

// ErrNotRegular is wrapped by Read's error for something that is not a regular file (a
// folder, a device, a FIFO, a socket), after following links.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by Read's error for a file larger than the cap.
var ErrTooLarge = errors.New("file too large")

// Read returns the content of the regular file at path (links followed), which must be at
// most max bytes. It opens the file without blocking (a FIFO would otherwise wait for a
// writer), checks what it opened, and reads at most max+1 bytes, so a file that grows while
// it is read cannot make it read more.
//
// Contract: safe for concurrent use. A missing file is an error wrapping fs.ErrNotExist; a
// file of the wrong kind wraps ErrNotRegular; one over max wraps ErrTooLarge. Errors name
// the path.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w but %s", path, ErrNotRegular, rootfile.KindOf(fi.Mode()))
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, more than the %d allowed", path, ErrTooLarge, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w: more than the %d bytes allowed", path, ErrTooLarge, max)
	}
	return data, nil
}

// TempPrefix starts the name of every temporary file WriteAtomic makes, after the target's
// own name: ".NAME.pid-tmp-PID-RANDOM".
const TempPrefix = ".pid-tmp-"

// WriteAtomic replaces the file at path with data: it writes a temporary file in the same
// folder (created with mode 0700 if missing), syncs it, gives it perm, and renames it over
// path, so a reader sees the old content or the new, and a crash leaves at worst a
// temporary file (which CleanTemps removes).
//
// Contract: safe for concurrent use for different paths; two writers of one path leave one
// of the two contents whole. On failure the file at path is unchanged.
func WriteAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+strings.TrimPrefix(base, ".")+TempPrefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// CleanTemps removes the temporary files WriteAtomic left in dir (not below it) when the
// process that made them is gone (a kill -9 between create and rename). Files of live
// processes, and files not named by WriteAtomic, are left alone. It returns how many it
// removed.
//
// Contract: safe to call at any time; it reads one folder and never fails (a folder that
// cannot be read removes nothing).
func CleanTemps(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		pid, ok := tempOwner(e.Name())
		if !ok || e.IsDir() || alive(pid) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}

// tempOwner returns the process id in a temporary file's name, and whether the name is one
// WriteAtomic makes.
func tempOwner(name string) (int, bool) {
	i := strings.LastIndex(name, TempPrefix)
	if !strings.HasPrefix(name, ".") || i < 0 {
		return 0, false
	}
	pidStr, rnd, ok := strings.Cut(name[i+len(TempPrefix):], "-")
	if !ok || len(rnd) != 12 {
		return 0, false
	}
	pid, err := strconv.Atoi(pidStr)
	return pid, err == nil && pid > 0
}
