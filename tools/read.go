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
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/rootfile"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"

	"github.com/pid-agent/pid/internal/textcut"
	"github.com/pid-agent/pid/workspace"
)

// The read tool's limits.
const (
	ReadDefaultLimit = 2000     // lines shown when limit is not given
	ReadMaxLineBytes = 2000     // longer lines are cut
	ReadMaxBytes     = 50 << 10 // text shown per call, whatever the limit
	ReadMaxImage     = 5 << 20  // larger images are described, not sent
	readCheckEvery   = 16 << 10 // lines between two looks at ctx
	// readWholeMax is the largest file read to its end whatever was asked, for its line
	// count (TotalLines) and the sha256 of its whole content. A larger file is read only up
	// to the lines shown (Partial), when its stamp can stand for the rest (see
	// workspace.Fingerprint); otherwise it is read, counted and hashed whole too.
	readWholeMax = 4 << 20
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
	// Partial says a file larger than readWholeMax (4 MB) was read only as far as the
	// lines shown: its line count is not known (TotalLines is 0) and lines follow.
	Partial bool `json:"partial,omitempty"`
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
		Resources:  readResources(ws),
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

// read reads path for the model and records what it saw (a workspace.Fingerprint). A file
// of at most readWholeMax bytes is read whole: its lines are counted and its content
// hashed. A larger one is read only as far as needed (the lines asked for, or the sniffed
// start of an image or binary file) when its stamp can stand for the rest; the rest is
// then neither counted nor hashed, so reading the start of a huge file costs the lines
// asked. Through the editor (EditorFiles) a text file is the editor's whole text.
func (ws *Workspace) read(ctx context.Context, path string, offset, limit int) (toolexec.Result, error) {
	real, err := ws.ResolveRead(path)
	if err != nil {
		return toolexec.Result{}, err
	}
	shown := ws.Display(real)
	r, rel, err := ws.At(real)
	if err != nil {
		return toolexec.Result{}, err
	}
	// Stat first, through the root, for a clear message, and so that a FIFO or a device is
	// not even opened in the usual case; rootfile.OpenRegular checks again what it really opened.
	fi, err := r.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return toolexec.Result{}, fmt.Errorf("file not found: %s", path)
	case err != nil:
		return toolexec.Result{}, ws.Explain(path, err)
	case fi.IsDir():
		return toolexec.Result{}, fmt.Errorf("%s is a folder, not a file; use ls to list it", path)
	case !fi.Mode().IsRegular():
		return toolexec.Result{}, &rootfile.NotRegularError{Path: path, Mode: fi.Mode()}
	}
	start := time.Now()
	f, fi, err := rootfile.OpenRegular(r, rel, path)
	if err != nil {
		return toolexec.Result{}, ws.Explain(path, err)
	}
	defer f.Close()
	src := &readSource{f: f, h: sha256.New()}
	if fi.Size() > readWholeMax {
		if st, ok := workspace.StampOf(fi); ok && st.Settled(start) {
			src.stamp, src.partialOK = st, true
		}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	head, _ := br.Peek(sniffLen)
	complete := len(head) < sniffLen
	det := ReadDetails{Path: shown, Size: fi.Size()}
	// done records what was seen once reading stops: everything, or the part read when
	// the stamp may stand for the rest; otherwise the rest is read and hashed first.
	done := func() error {
		fp, err := src.finish(ctx)
		if err != nil {
			return err
		}
		ws.seen.Record(real, fp)
		return nil
	}

	if mime := imageType(head); mime != "" {
		det.Kind, det.MimeType = "image", mime
		return readImage(br, shown, fi.Size(), det, done)
	}
	if binary(head, complete) {
		det.Kind = "binary"
		if err := done(); err != nil {
			return toolexec.Result{}, err
		}
		return toolexec.Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s is a binary file (%s); its content is not shown.", shown, rootfile.Size(fi.Size())))}, Details: det}, nil
	}

	det.Kind = "text"
	if ws.editor.Read != nil {
		// A text file: the editor's buffer is what the agent should see (unsaved changes
		// included), and what a later edit is checked against: its whole text.
		text, err := ws.editor.Read(ctx, real)
		if err != nil {
			return toolexec.Result{}, err
		}
		src = &readSource{fromEditor: true, sum: workspace.SumString(text)}
		br = bufio.NewReaderSize(strings.NewReader(text), 64<<10)
		det.Size = int64(len(text))
	}
	w, err := readWindow(ctx, br, offset, limit, &det)
	if err != nil {
		return toolexec.Result{}, err
	}
	out, total, last, full, cutForBytes := &w.out, w.total, w.last, w.full, w.cutForBytes
	if full {
		// The lines asked for are out: the rest is only counted, unless the stamp can
		// stand for it (then it is not read at all).
		if _, err := br.Peek(1); err != io.EOF && src.partialOK {
			det.Partial = true
		} else {
			n, err := countLines(ctx, br)
			if err != nil {
				return toolexec.Result{}, err
			}
			total += n
		}
	}
	if err := done(); err != nil {
		return toolexec.Result{}, err
	}
	if det.Partial {
		det.StartLine, det.EndLine, det.Truncated = offset, last, true
		fmt.Fprintf(out, "\n[Showing lines %d-%d of %s (%s; read only this far, so its line count is not known)%s. Use offset=%d to read on.]\n", offset, last, shown, rootfile.Size(fi.Size()), cappedNote(cutForBytes), last+1)
		return toolexec.Result{Content: []llm.Content{llm.Text(out.String())}, Details: det}, nil
	}
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
		fmt.Fprintf(out, "\n[Showing lines %d-%d of %d%s. Use offset=%d to read on.]\n", offset, last, total, cappedNote(cutForBytes), last+1)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(out.String())}, Details: det}, nil
}

// cappedNote is what read's last line says when ReadMaxBytes, not the limit, ended the lines
// shown ("" otherwise).
func cappedNote(cutForBytes bool) string {
	if !cutForBytes {
		return ""
	}
	return fmt.Sprintf(", output capped at %s", rootfile.Size(ReadMaxBytes))
}

// readImage is read's answer for an image: the image itself, or a line saying it is too
// large to show. done records what was seen (see read).
func readImage(br *bufio.Reader, shown string, fileSize int64, det ReadDetails, done func() error) (toolexec.Result, error) {
	mime := det.MimeType
	if fileSize > ReadMaxImage {
		if err := done(); err != nil {
			return toolexec.Result{}, err
		}
		return toolexec.Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s is a %s image of %s, larger than the %s that can be shown.", shown, mime, rootfile.Size(fileSize), rootfile.Size(ReadMaxImage)))}, Details: det}, nil
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return toolexec.Result{}, err
	}
	if err := done(); err != nil {
		return toolexec.Result{}, err
	}
	return toolexec.Result{
		Content: []llm.Content{
			llm.Text(fmt.Sprintf("Image %s (%s, %s)", shown, mime, rootfile.Size(int64(len(data))))),
			{Type: llm.ContentImage, Data: base64.StdEncoding.EncodeToString(data), MimeType: mime},
		},
		Details: det,
	}, nil
}

// readLines is what readWindow took of a text: the lines shown, numbered as read shows
// them, and how far it counted.
type readLines struct {
	out strings.Builder
	// total is the lines counted (up to where reading stopped); shown those in out, last
	// the number of the last one shown.
	total, shown, last int
	// full reports whether reading stopped with lines left (limit or ReadMaxBytes reached);
	// cutForBytes whether ReadMaxBytes stopped it.
	full, cutForBytes bool
}

// readWindow reads br's lines, keeping those from offset on: at most limit of them, and
// ReadMaxBytes of output (the first always). Lines over ReadMaxLineBytes are cut and counted
// in det.TruncatedLines. It stops with ctx's error once ctx ends.
func readWindow(ctx context.Context, br *bufio.Reader, offset, limit int, det *ReadDetails) (*readLines, error) {
	w := &readLines{}
	var ctxErr error
	err := eachLine(br, ReadMaxLineBytes+4, func(line []byte, n int) bool {
		w.total++
		if w.total%readCheckEvery == 0 && ctx.Err() != nil {
			ctxErr = ctx.Err()
			return false
		}
		if w.total < offset {
			return true
		}
		text := textcut.Valid(textcut.Runes(line, ReadMaxLineBytes))
		if n > ReadMaxLineBytes {
			text += fmt.Sprintf(" … [line cut: %s in all]", rootfile.Size(int64(n)))
			det.TruncatedLines++
		}
		entry := fmt.Sprintf("%6d\t%s\n", w.total, text)
		if w.shown > 0 && w.out.Len()+len(entry) > ReadMaxBytes {
			w.full, w.cutForBytes = true, true // this line is counted, not shown
			return false
		}
		w.out.WriteString(entry)
		w.shown++
		w.last = w.total
		if w.shown == limit {
			w.full = true
			return false
		}
		return true
	})
	if ctxErr != nil {
		return nil, ctxErr
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

// readSource is what read reads a file through: it hashes every byte it passes on and
// counts them, and makes the fingerprint of what was seen once reading stops. For a text
// read through the editor it only holds the sha256 of the editor's text.
type readSource struct {
	f   *os.File
	h   hash.Hash
	n   int64 // bytes passed on
	eof bool  // the file's end was reached
	// partialOK says the file's stamp (taken before reading) may stand for the part not
	// read (see workspace.Fingerprint).
	partialOK bool
	stamp     workspace.Stamp
	// fromEditor holds the editor's text's sha256 in sum.
	fromEditor bool
	sum        workspace.Digest
}

// Read reads from the file, hashing and counting what it returns.
func (s *readSource) Read(p []byte) (int, error) {
	n, err := s.f.Read(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	if err == io.EOF {
		s.eof = true
	}
	return n, err
}

// finish returns the fingerprint of what was seen: the whole content's sha256 when it
// was all read (or came from the editor); the sha256 of the part read with the stamp when
// the stamp may stand for the rest; otherwise it reads (and hashes) the rest first,
// looking at ctx as it goes.
func (s *readSource) finish(ctx context.Context) (workspace.Fingerprint, error) {
	if s.fromEditor {
		return workspace.WholeFingerprint(s.sum), nil
	}
	if !s.eof && s.partialOK {
		return workspace.Fingerprint{Sum: workspace.Digest(s.h.Sum(nil)), N: s.n, Stamp: s.stamp}, nil
	}
	buf := make([]byte, 64<<10)
	for !s.eof {
		if err := ctx.Err(); err != nil {
			return workspace.Fingerprint{}, err
		}
		if _, err := s.Read(buf); err != nil && err != io.EOF {
			return workspace.Fingerprint{}, err
		}
	}
	return workspace.WholeFingerprint(workspace.Digest(s.h.Sum(nil))), nil
}
