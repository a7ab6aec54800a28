// This file holds the write tool, and the check of what is on disk before a file is
// changed, which write and edit share (the atomic create and replace are in fsroot.go).

package tools

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/rootfile"
	"github.com/pid-agent/pid/internal/udiff"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/problems"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/workspace"
)

// MaxDiffBytes bounds the diff that write and edit put in their details; a longer one is
// cut after its last whole line within the bound, and DiffTruncated is set.
const MaxDiffBytes = udiff.MaxBytes

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
	// Diagnostics: as EditDetails'.
	Diagnostics []problems.Diagnostic `json:"diagnostics,omitzero"`
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
		// Replacing a file not read yet is refused before approval is asked.
		Check:     ws.refuseUnread,
		Resources: pathResources(ws),
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
	shown := ws.Display(real)
	r, rel, err := ws.At(real)
	if err != nil {
		return toolexec.Result{}, err
	}
	old, mode, exists, err := ws.current(ctx, r, rel, real, shown, path)
	if err != nil {
		return toolexec.Result{}, err
	}
	switch {
	case ws.editor.Write != nil:
		err = ws.editor.Write(ctx, real, content)
	case exists:
		err = ws.replaceFile(r, rel, filepath.Dir(real), []byte(content), mode)
	default:
		err = ws.createFile(r, rel, filepath.Dir(real), []byte(content))
		if errors.Is(err, errAppeared) {
			err = fmt.Errorf("%s did not exist when pid checked, but a file appeared there while it was being created; it was left as it is: read it, then write again", shown)
		}
	}
	if err != nil {
		return toolexec.Result{}, ws.Explain(path, err)
	}
	ws.seen.Record(real, workspace.WholeFingerprint(workspace.SumString(content)))
	fd := udiff.Unified(shown, old.Content, content, !exists)
	det := WriteDetails{Path: shown, Created: !exists, Diff: fd.Text, DiffTruncated: fd.Truncated, Added: fd.Added, Removed: fd.Removed}
	lines := plural(len(udiff.Split(content)), "line")
	var msg string
	switch {
	case !exists:
		msg = fmt.Sprintf("Created %s (%s, %s).", shown, lines, rootfile.Size(int64(len(content))))
	case fd.Text == "":
		msg = fmt.Sprintf("Wrote %s: the content is unchanged.", shown)
	default:
		msg = fmt.Sprintf("Wrote %s (%s, %s): +%d -%d lines.", shown, lines, rootfile.Size(int64(len(content))), fd.Added, fd.Removed)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(msg)}, Details: det}, nil
}

// current returns what is at real (rel in r) before the agent changes it (on disk, or in
// the editor with EditorFiles): the content, its sha256 and, from the disk, its stamp, and
// the permission bits of an existing regular file, checked against what the agent last saw
// (workspace.StaleGuard); or exists == false when there is no file yet. path is the argument as given,
// for messages. The content is held once: read into a string of the file's size, hashed
// on the way.
func (ws *Workspace) current(ctx context.Context, r *os.Root, rel, real, shown, path string) (cur workspace.Observed, mode fs.FileMode, exists bool, err error) {
	fi, err := r.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return workspace.Observed{}, 0, false, nil
	case err != nil:
		return workspace.Observed{}, 0, false, ws.Explain(path, err)
	case fi.IsDir():
		return workspace.Observed{}, 0, false, fmt.Errorf("%s is a folder, not a file", path)
	case !fi.Mode().IsRegular():
		return workspace.Observed{}, 0, false, &rootfile.NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if ws.editor.Read != nil {
		text, err := ws.editor.Read(ctx, real)
		if err != nil {
			return workspace.Observed{}, 0, false, err
		}
		cur = workspace.Observed{Content: text, Sum: workspace.SumString(text)}
	} else {
		f, ofi, err := rootfile.OpenRegular(r, rel, path)
		if err != nil {
			return workspace.Observed{}, 0, false, ws.Explain(path, err)
		}
		cur, err = readObserved(f, ofi.Size())
		f.Close()
		if err != nil {
			return workspace.Observed{}, 0, false, err
		}
		fi = ofi
	}
	if err := ws.seen.Check(real, shown, cur, ws.editor.Read != nil); err != nil {
		return workspace.Observed{}, 0, false, err
	}
	return cur, fi.Mode().Perm(), true, nil
}

// readObserved reads the whole of f (size bytes, as fstat said; more or less if it changes
// meanwhile) into one string, hashing it on the way, and takes its stamp once it is read:
// a write during the read then shows in the stamp.
func readObserved(f *os.File, size int64) (workspace.Observed, error) {
	var sb strings.Builder
	sb.Grow(int(size))
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(&sb, h), f); err != nil {
		return workspace.Observed{}, err
	}
	cur := workspace.Observed{Content: sb.String(), Sum: workspace.Digest(h.Sum(nil))}
	if fi, err := f.Stat(); err == nil {
		cur.Stamp, cur.HasStamp = workspace.StampOf(fi)
	}
	return cur, nil
}
