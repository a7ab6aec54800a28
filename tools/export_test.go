// This file exposes internals to the tests of package tools_test.

package tools

import (
	"os"
	"path/filepath"

	"github.com/pid-agent/pid/internal/rootfile"
)

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
	f, _, err := rootfile.OpenRegular(r, name, name)
	if err != nil {
		return err
	}
	return f.Close()
}

// CreateFile creates the file at the real path p the way write does once its checks have
// found no file there.
func CreateFile(ws *Workspace, p string, data []byte) error {
	r, rel, err := ws.At(p)
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
