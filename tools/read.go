// This file holds the read tool: a text file with line numbers, an image as an image block,
// a binary file as a one-line description.

package tools

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// The read tool's limits.
const (
	ReadDefaultLimit = 2000     // lines shown when limit is not given
	ReadMaxLineBytes = 2000     // longer lines are cut
	ReadMaxBytes     = 50 << 10 // text shown per call, whatever the limit
	ReadMaxImage     = 5 << 20  // larger images are described, not sent
	readCheckEvery   = 16 << 10 // lines between two looks at ctx
)

// ReadDetails are the details of a read result.
type ReadDetails struct {
	Path string `json:"path"`
	// Kind is "text", "image" or "binary".
	Kind     string `json:"kind"`
	Size     int64  `json:"size"`
	MimeType string `json:"mimeType,omitempty"`
	// For text: the lines shown (1-based, inclusive; 0 and 0 when none), the file's line
	// count, and whether lines were left out (after EndLine) or cut (TruncatedLines).
	StartLine      int  `json:"startLine,omitempty"`
	EndLine        int  `json:"endLine,omitempty"`
	TotalLines     int  `json:"totalLines,omitempty"`
	Truncated      bool `json:"truncated,omitempty"`
	TruncatedLines int  `json:"truncatedLines,omitempty"`
}

var readSchema = schema(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to read, relative to the cwd or absolute (inside the workspace folders)."},
    "offset": {"type": "integer", "minimum": 1, "description": "Line number to start at (1-based). Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show. Default 2000."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)

func readTool(ws *Workspace) toolexec.Tool {
	return toolexec.Tool{
		Name: NameRead,
		Description: "Read a file. Text comes back with line numbers (cat -n style): at most 2000 lines or 50KB per call, lines longer than 2000 bytes cut; a note at the end says how to read on (offset=N). " +
			"Images (PNG, JPEG, GIF, WebP) come back as images; other binary files are described, not shown. " +
			"Read a file before you edit or overwrite it: edit and write refuse files you have not read, or that changed since you read them.",
		Parameters: readSchema,
		Resources:  pathResources(ws),
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Path   string   `json:"path"`
				Offset *float64 `json:"offset"`
				Limit  *float64 `json:"limit"`
			}
			if err := decodeArgs(call, &a); err != nil {
				return toolexec.Result{}, err
			}
			return ws.read(ctx, a.Path, intArg(a.Offset, 1), intArg(a.Limit, ReadDefaultLimit))
		},
	}
}

// read reads path for the model and records what it saw.
func (ws *Workspace) read(ctx context.Context, path string, offset, limit int) (toolexec.Result, error) {
	real, err := ws.Resolve(path)
	if err != nil {
		return toolexec.Result{}, err
	}
	shown := ws.display(real)
	r, rel, err := ws.at(real)
	if err != nil {
		return toolexec.Result{}, err
	}
	// Stat first, through the root, for a clear message, and so that a FIFO or a device is
	// not even opened in the usual case; openRegular checks again what it really opened.
	fi, err := r.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return toolexec.Result{}, fmt.Errorf("file not found: %s", path)
	case err != nil:
		return toolexec.Result{}, ws.explain(path, err)
	case fi.IsDir():
		return toolexec.Result{}, fmt.Errorf("%s is a folder, not a file; use ls to list it", path)
	case !fi.Mode().IsRegular():
		return toolexec.Result{}, &notRegularError{path: path, mode: fi.Mode()}
	}
	f, fi, err := openRegular(r, rel, path)
	if err != nil {
		return toolexec.Result{}, ws.explain(path, err)
	}
	defer f.Close()
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(f, h), 64<<10)
	head, _ := br.Peek(sniffLen)
	complete := len(head) < sniffLen
	det := ReadDetails{Path: shown, Size: fi.Size()}

	if mime := imageType(head); mime != "" {
		det.Kind, det.MimeType = "image", mime
		if fi.Size() > ReadMaxImage {
			if _, err := io.Copy(io.Discard, br); err != nil {
				return toolexec.Result{}, err
			}
			ws.seen.record(real, digest(h.Sum(nil)))
			return toolexec.Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s is a %s image of %s, larger than the %s that can be shown.", shown, mime, size(fi.Size()), size(ReadMaxImage)))}, Details: det}, nil
		}
		data, err := io.ReadAll(br)
		if err != nil {
			return toolexec.Result{}, err
		}
		ws.seen.record(real, digest(h.Sum(nil)))
		return toolexec.Result{
			Content: []llm.Content{
				llm.Text(fmt.Sprintf("Image %s (%s, %s)", shown, mime, size(int64(len(data))))),
				{Type: llm.ContentImage, Data: base64.StdEncoding.EncodeToString(data), MimeType: mime},
			},
			Details: det,
		}, nil
	}
	if binary(head, complete) {
		det.Kind = "binary"
		if _, err := io.Copy(io.Discard, br); err != nil {
			return toolexec.Result{}, err
		}
		ws.seen.record(real, digest(h.Sum(nil)))
		return toolexec.Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s is a binary file (%s); its content is not shown.", shown, size(fi.Size())))}, Details: det}, nil
	}

	det.Kind = "text"
	if ws.editor.Read != nil {
		// A text file: the editor's buffer is what the agent should see (unsaved changes
		// included), and what a later edit is checked against.
		text, err := ws.editor.Read(ctx, real)
		if err != nil {
			return toolexec.Result{}, err
		}
		h.Reset()
		h.Write([]byte(text))
		br = bufio.NewReaderSize(strings.NewReader(text), 64<<10)
		det.Size = int64(len(text))
	}
	var out strings.Builder
	total, shownLines, last := 0, 0, 0
	full, cutForBytes := false, false
	var ctxErr error
	err = eachLine(br, ReadMaxLineBytes+4, func(line []byte, n int) bool {
		total++
		if total%readCheckEvery == 0 && ctx.Err() != nil {
			ctxErr = ctx.Err()
			return false
		}
		if total < offset || full {
			return true
		}
		text := validText(cutRunes(line, ReadMaxLineBytes))
		if n > ReadMaxLineBytes {
			text += fmt.Sprintf(" … [line cut: %s in all]", size(int64(n)))
			det.TruncatedLines++
		}
		entry := fmt.Sprintf("%6d\t%s\n", total, text)
		if shownLines > 0 && out.Len()+len(entry) > ReadMaxBytes {
			full, cutForBytes = true, true
			return true
		}
		out.WriteString(entry)
		shownLines++
		last = total
		if shownLines == limit {
			full = true
		}
		return true
	})
	if ctxErr != nil {
		return toolexec.Result{}, ctxErr
	}
	if err != nil {
		return toolexec.Result{}, err
	}
	ws.seen.record(real, digest(h.Sum(nil)))
	det.TotalLines = total
	if total == 0 {
		return toolexec.Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s is empty.", shown))}, Details: det}, nil
	}
	if offset > total {
		return toolexec.Result{}, fmt.Errorf("offset %d is past the end of %s, which has %s", offset, shown, plural(total, "line"))
	}
	det.StartLine, det.EndLine = offset, last
	if last < total {
		det.Truncated = true
		why := ""
		if cutForBytes {
			why = fmt.Sprintf(", output capped at %s", size(ReadMaxBytes))
		}
		fmt.Fprintf(&out, "\n[Showing lines %d-%d of %d%s. Use offset=%d to read on.]\n", offset, last, total, why, last+1)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(out.String())}, Details: det}, nil
}
