// This file holds the write tool, and the checked, atomic file replacement that write and
// edit share.

package tools

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// WriteDetails are the details of a write result.
type WriteDetails struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
	// Diff is the unified diff from the old content ("" when nothing changed), cut to
	// MaxDiffBytes (DiffTruncated) when longer.
	Diff          string `json:"diff"`
	DiffTruncated bool   `json:"diffTruncated,omitempty"`
	Added         int    `json:"added"`
	Removed       int    `json:"removed"`
}

var writeSchema = schema(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to write, relative to the cwd or absolute (inside the workspace folders). Missing parent folders are created."},
    "content": {"type": "string", "description": "The whole new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`)

func writeTool(ws *Workspace) toolexec.Tool {
	return toolexec.Tool{
		Name: NameWrite,
		Description: "Write a whole file: create it (with its parent folders) or replace its content. " +
			"To replace an existing file you must have read it in this session, and it must not have changed since; otherwise read it again. " +
			"Prefer edit for changing part of a file.",
		Parameters: writeSchema,
		Resources:  pathResources(ws),
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			}
			if err := decodeArgs(call, &a); err != nil {
				return toolexec.Result{}, err
			}
			return ws.write(ctx, a.Path, a.Content)
		},
	}
}

func (ws *Workspace) write(ctx context.Context, path, content string) (toolexec.Result, error) {
	real, err := ws.Resolve(path)
	if err != nil {
		return toolexec.Result{}, err
	}
	shown := ws.display(real)
	old, mode, exists, err := ws.current(ctx, real, shown, path)
	if err != nil {
		return toolexec.Result{}, err
	}
	switch {
	case ws.editor.Write != nil:
		err = ws.editor.Write(ctx, real, content)
	case exists:
		err = replaceFile(real, []byte(content), mode)
	default:
		err = createFile(real, []byte(content))
	}
	if err != nil {
		return toolexec.Result{}, err
	}
	ws.seen.record(real, sha256.Sum256([]byte(content)))
	fd := unifiedDiff(shown, string(old), content, !exists)
	det := WriteDetails{Path: shown, Created: !exists, Diff: fd.text, DiffTruncated: fd.truncated, Added: fd.added, Removed: fd.removed}
	lines := plural(len(splitLines(content)), "line")
	var msg string
	switch {
	case !exists:
		msg = fmt.Sprintf("Created %s (%s, %s).", shown, lines, size(int64(len(content))))
	case fd.text == "":
		msg = fmt.Sprintf("Wrote %s: the content is unchanged.", shown)
	default:
		msg = fmt.Sprintf("Wrote %s (%s, %s): +%d -%d lines.", shown, lines, size(int64(len(content))), fd.added, fd.removed)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(msg)}, Details: det}, nil
}

// current returns what is at real before the agent changes it (on disk, or in the editor
// with EditorFiles): the content and
// permission bits of an existing regular file, checked against what the agent last saw
// (stale.go), or exists == false when there is no file yet. path is the argument as given,
// for messages.
func (ws *Workspace) current(ctx context.Context, real, shown, path string) (data []byte, mode fs.FileMode, exists bool, err error) {
	fi, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0, false, nil
	case err != nil:
		return nil, 0, false, err
	case fi.IsDir():
		return nil, 0, false, fmt.Errorf("%s is a folder, not a file", path)
	case !fi.Mode().IsRegular():
		return nil, 0, false, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if ws.editor.Read != nil {
		text, err := ws.editor.Read(ctx, real)
		if err != nil {
			return nil, 0, false, err
		}
		data = []byte(text)
	} else if data, err = os.ReadFile(real); err != nil {
		return nil, 0, false, err
	}
	if err := ws.seen.check(real, shown, sha256.Sum256(data)); err != nil {
		return nil, 0, false, err
	}
	return data, fi.Mode().Perm(), true, nil
}

// createFile creates a new file with its missing parent folders; it fails if the file
// appeared in the meantime rather than overwrite what it did not check.
func createFile(real string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(real, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replaceFile replaces the content of an existing file atomically: it writes a temporary
// file next to it with the same permission bits, syncs it and renames it over the file, so
// a reader sees the old content or the new, never a mix. On failure the file is untouched.
func replaceFile(real string, data []byte, mode fs.FileMode) (err error) {
	dir, base := filepath.Split(real)
	f, err := os.CreateTemp(dir, "."+strings.TrimPrefix(base, ".")+".pid-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, real)
}
