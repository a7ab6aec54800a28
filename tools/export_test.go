// This file exposes internals to the tests of package tools_test.

package tools

import (
	"os"
	"path/filepath"
)

// SetWatchHook makes ws call f, from the watcher's goroutine, with each recorded file a
// watcher event touched.
func SetWatchHook(ws *Workspace, f func(path string)) {
	ws.seen.mu.Lock()
	ws.seen.onEvent = f
	ws.seen.mu.Unlock()
}

// UnifiedDiff is unifiedDiff with its counts.
func UnifiedDiff(name, old, new string, created bool) (text string, added, removed, first int) {
	fd := unifiedDiff(name, old, new, created)
	return fd.text, fd.added, fd.removed, fd.firstChangedLine
}

// Ignored reports whether rel (slash-separated, from the folder of a .gitignore holding
// gitignore) is ignored.
func Ignored(gitignore, rel string, isDir bool) bool {
	s := ignoreStack{parseIgnore("/r", []byte(gitignore))}
	return s.ignored("/r/"+rel, isDir)
}

// GlobMatch reports whether a find/grep glob matches rel.
func GlobMatch(glob, rel string) (bool, error) {
	g, err := newPathGlob(glob)
	if err != nil {
		return false, err
	}
	name := rel
	for i := len(rel) - 1; i >= 0; i-- {
		if rel[i] == '/' {
			name = rel[i+1:]
			break
		}
	}
	return g.match(rel, name), nil
}

// PrepareEditArgs is the edit tool's prepareArguments.
var PrepareEditArgs = prepareEditArgs

// OpenRegularIn opens name in the folder dir as the file tools open a file for reading,
// then closes it.
func OpenRegularIn(dir, name string) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	f, _, err := openRegular(r, name, name)
	if err != nil {
		return err
	}
	return f.Close()
}

// CreateFile creates the file at the real path p the way write does once its checks have
// found no file there.
func CreateFile(ws *Workspace, p string, data []byte) error {
	r, rel, err := ws.at(p)
	if err != nil {
		return err
	}
	return ws.createFile(r, rel, filepath.Dir(p), data)
}

// TempName and TempPID are the temporary-file naming scheme.
var (
	TempName = tempName
	TempPID  = tempPID
)

// ErrAppeared is createFile's error for a name taken meanwhile.
var ErrAppeared = errAppeared
