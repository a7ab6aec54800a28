//go:build unix

// This file holds the Unix checks of the file's privacy: its mode, its owner and its
// folder's.

package credentials

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// notPrivate returns why the file (fi from Lstat) is not private: readable or writable by
// group or others, or in a folder group or others may write. "" when it is private.
func notPrivate(path string, fi fs.FileInfo) string {
	if p := fi.Mode().Perm(); p&0o077 != 0 {
		return fmt.Sprintf("may be read or written by others (mode %04o): run chmod 600 %s, and replace the keys it holds if others could read them", p, path)
	}
	dir := filepath.Dir(path)
	if di, err := os.Stat(dir); err == nil && di.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("is in %s, which others may write (mode %04o): run chmod 700 %s", dir, di.Mode().Perm(), dir)
	}
	return ""
}

// notOwned returns why fi is not the user's, "" when it is.
func notOwned(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Sprintf("belongs to another user (uid %d, you are %d)", st.Uid, os.Getuid())
	}
	return ""
}

// privateFolder makes dir private (0700) when group or others may use it, and reports
// whether it did; it refuses a folder that belongs to someone else.
func privateFolder(dir string) (bool, error) {
	di, err := os.Stat(dir)
	if err != nil {
		return false, err
	}
	if why := notOwned(di); why != "" {
		return false, fmt.Errorf("the folder %s %s: %w", dir, why, ErrUnsafe)
	}
	if di.Mode().Perm()&0o077 == 0 {
		return false, nil
	}
	return true, os.Chmod(dir, 0o700)
}
