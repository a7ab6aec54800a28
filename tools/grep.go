// This file holds the grep tool: a regular-expression search over the files of a folder,
// respecting ignore files, with files searched in parallel and results in walk order.

package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/rootfile"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/search"
	"github.com/pid-agent/pid/toolexec"
)

// The grep tool's limits.
const (
	GrepDefaultLimit = 100
	GrepMaxLimit     = 1000
	GrepMaxLineBytes = search.MaxLineBytes // a matching line is shown cut to this
	GrepMaxBytes     = 50 << 10            // output per call, whatever the limit
	// GrepMaxSearchedLineBytes is how much of a line grep searches: the rest of a longer
	// line is not searched, and the result says so.
	GrepMaxSearchedLineBytes = search.MaxSearchedLineBytes
	// GrepMaxUTF16Bytes is the largest UTF-16 file (with a byte order mark) grep transcodes
	// and searches; a larger one is skipped as binary.
	GrepMaxUTF16Bytes = search.MaxUTF16Bytes
)

// GrepDetails are the details of a grep result.
type GrepDetails struct {
	Matches          int `json:"matches"`
	FilesWithMatches int `json:"filesWithMatches"`
	FilesSearched    int `json:"filesSearched"`
	BinarySkipped    int `json:"binarySkipped,omitempty"`
	// BinaryStopped counts files searched up to a NUL byte found after their first match.
	BinaryStopped int `json:"binaryStopped,omitempty"`
	// LongLinesCut counts lines longer than GrepMaxSearchedLineBytes, searched only that far.
	LongLinesCut int `json:"longLinesCut,omitempty"`
	// Truncated says there are more matches than shown.
	Truncated bool `json:"truncated,omitempty"`
	// IgnoreFilesSkipped lists the ignore files that were not applied, and why.
	IgnoreFilesSkipped []SkippedFile `json:"ignoreFilesSkipped,omitempty"`
}

var grepSchema = schema(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "Regular expression (Go RE2 syntax), matched against each line."},
    "path": {"type": "string", "description": "Folder or file to search, relative to the cwd or absolute. Default: the cwd."},
    "glob": {"type": "string", "description": "Only search files whose name matches this glob (e.g. *.go, *.{ts,tsx}); a glob with a / is matched against the path from the searched folder (e.g. src/**/*_test.go)."},
    "ignoreCase": {"type": "boolean", "description": "Match case-insensitively. Default false."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Most matches to show. Default 100."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)

// grepDescription is the grep tool's description: what the model knows of the dialect.
const grepDescription = "Search file contents with a regular expression, line by line. Prints path:line: text for each matching line, " +
	"in path order, at most limit (default 100) matches and 50KB, lines cut at 500 bytes. " +
	"Syntax: Go's RE2 (no backreferences or lookaround). Each line is matched on its own without its \\n (a \\r before it stays, so $ does not match before \\r\\n; use \\r?$). " +
	"ignoreCase folds Unicode case (k also matches the Kelvin sign); \\w, \\d, \\s and \\b are ASCII-only (caf\\w misses café: use \\pL or [^\\s]), . and \\pL are Unicode. " +
	"Skips .git, what .gitignore, .ignore, .git/info/exclude and git's global excludes file exclude (also outside a git repository; " +
	"a nested repository has its own rules), symbolic links, and binary files (a NUL byte in the first 256KB or before the first match; " +
	"a NUL after a match stops that file's search, with a note). Hidden files are searched. " +
	"Text that is not UTF-8 (Latin-1...) is searched byte by byte; UTF-16 with a byte order mark is transcoded. " +
	"Lines longer than 16MB are searched in their first 16MB only, with a note. Finding nothing is not an error."

func grepTool(ws *Workspace) toolexec.Tool {
	return toolexec.Tool{
		Name:        NameGrep,
		Description: grepDescription,
		Parameters:  grepSchema,
		Execute: func(ctx context.Context, call toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Pattern    string   `json:"pattern"`
				Path       string   `json:"path"`
				Glob       string   `json:"glob"`
				IgnoreCase bool     `json:"ignoreCase"`
				Limit      *float64 `json:"limit"`
			}
			if err := decodeArgs(call, &a); err != nil {
				return toolexec.Result{}, err
			}
			return ws.grep(ctx, grepArgs{pattern: a.Pattern, path: a.Path, glob: a.Glob, ignoreCase: a.IgnoreCase,
				limit: intArg(a.Limit, GrepDefaultLimit)}, onUpdate)
		},
	}
}

// grepArgs are a grep call's arguments.
type grepArgs struct {
	pattern, path, glob string
	ignoreCase          bool
	limit               int
}

// grep runs the grep tool; onUpdate (nil for none) gets progress on a long search.
func (ws *Workspace) grep(ctx context.Context, a grepArgs, onUpdate func(event.Result)) (toolexec.Result, error) {
	expr := a.pattern
	if a.ignoreCase {
		expr = "(?i)" + expr
	}
	m, err := search.NewMatcher(expr)
	if err != nil {
		return toolexec.Result{}, fmt.Errorf("invalid regular expression %q: %v (the syntax is Go's RE2)", a.pattern, err)
	}
	var filter *search.Glob
	if a.glob != "" {
		if filter, err = search.NewGlob(a.glob); err != nil {
			return toolexec.Result{}, err
		}
	}
	path := a.path
	if path == "" {
		path = "."
	}
	root, err := ws.Resolve(path)
	if err != nil {
		return toolexec.Result{}, err
	}
	r, rel, err := ws.At(root)
	if err != nil {
		return toolexec.Result{}, err
	}
	fi, err := r.Stat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return toolexec.Result{}, fmt.Errorf("path not found: %s", path)
	} else if err != nil {
		return toolexec.Result{}, ws.Explain(path, err)
	}

	limit := a.limit
	c := &grepCollector{ws: ws, limit: limit}
	quit := func() bool { return c.halt.Load() || ctx.Err() != nil }
	prog := startProgress(onUpdate, "searched")
	defer prog.end()
	switch {
	case fi.Mode().IsRegular():
		if grepFileHook != nil {
			grepFileHook(root)
		}
		_ = c.take(root, search.GrepFile(search.Dir{Root: r}, rel, root, m, limit+1, quit))
	case fi.IsDir():
		c.det.IgnoreFilesSkipped, err = search.Walk(ctx, ws, root, search.Spec[*search.FileMatches]{
			// FIFOs, devices and links are skipped without being opened; one swapped in
			// after the listing is opened without blocking and refused (GrepFile).
			Want: func(n *search.Node) bool {
				return n.Type().IsRegular() && (filter == nil || filter.MatchNode(n))
			},
			Work: func(d search.Dir, n *search.Node) *search.FileMatches {
				if grepFileHook != nil {
					grepFileHook(n.Path())
				}
				res := search.GrepFile(d, n.Name(), n.Path(), m, limit+1, quit)
				prog.files.Add(1)
				return res
			},
			Visit: func(n *search.Node, res *search.FileMatches) error {
				if res == nil {
					return nil
				}
				return c.take(n.Path(), res)
			},
		})
		if err != nil {
			return toolexec.Result{}, ws.Explain(path, err)
		}
	default:
		return toolexec.Result{}, &rootfile.NotRegularError{Path: path, Mode: fi.Mode()}
	}

	return c.answer(a.pattern, ws.Display(root)), nil
}

// grepFileHook, when set (by tests, before any search starts), is called with the real path
// of each file grep is about to search, from the goroutine searching it.
var grepFileHook func(real string)

// grepCollector gathers what grep's searches found, in walk order (take), up to limit
// matches and GrepMaxBytes of output, and makes the answer. take is called from the walk's
// visiting goroutine only; halt is read by the searches still running.
type grepCollector struct {
	ws    *Workspace
	limit int
	out   strings.Builder
	notes strings.Builder
	det   GrepDetails
	// full reports whether the result is full (limit or GrepMaxBytes reached).
	full bool
	// halt is set once the result is full: searches still running stop.
	halt atomic.Bool
}

// take adds what searching the file at real found; fs.SkipAll once the result is full.
func (c *grepCollector) take(real string, res *search.FileMatches) error {
	if res.Err != nil {
		return nil // an unreadable file, or one that is no longer regular, is skipped
	}
	if res.Binary {
		c.det.BinarySkipped++
		return nil
	}
	c.det.FilesSearched++
	shown := c.ws.Display(real)
	n := 0
	for _, l := range res.Lines {
		if c.det.Matches == c.limit {
			c.full = true
			break
		}
		entry := shown + ":" + strconv.Itoa(l.No) + ": " + l.Text + "\n"
		if c.out.Len()+len(entry) > GrepMaxBytes {
			c.full = true
			break
		}
		c.out.WriteString(entry)
		c.det.Matches++
		n++
	}
	if n > 0 {
		c.det.FilesWithMatches++
	}
	for _, no := range res.LongLines {
		c.det.LongLinesCut++
		fmt.Fprintf(&c.notes, "[%s:%d is longer than %s: only its first %s was searched.]\n", shown, no, rootfile.Size(GrepMaxSearchedLineBytes), rootfile.Size(GrepMaxSearchedLineBytes))
	}
	if res.BinaryLine > 0 {
		c.det.BinaryStopped++
		fmt.Fprintf(&c.notes, "[%s: search stopped at line %d, where a NUL byte shows binary content.]\n", shown, res.BinaryLine)
	}
	if c.full {
		c.halt.Store(true)
		return fs.SkipAll
	}
	return nil
}

// answer is grep's result for pattern searched in where: the matches with the notes, or
// that there were none.
func (c *grepCollector) answer(pattern, where string) toolexec.Result {
	det := c.det
	note := c.notes.String() + skippedNote(det.IgnoreFilesSkipped)
	if det.Matches == 0 {
		msg := fmt.Sprintf("No matches for %q in %s", pattern, where)
		if det.BinarySkipped > 0 {
			msg += fmt.Sprintf(" (%s skipped)", plural(det.BinarySkipped, "binary file"))
		}
		if note != "" {
			msg += "\n" + note
		}
		return toolexec.Result{Content: []llm.Content{llm.Text(msg)}, Details: det}
	}
	if c.full {
		det.Truncated = true
		fmt.Fprintf(&c.out, "\n[Stopped after %s (limit %d, or %s of output). Narrow the pattern, path or glob, or raise limit.]\n", plural(det.Matches, "match"), c.limit, rootfile.Size(GrepMaxBytes))
	}
	if note != "" {
		c.out.WriteString("\n" + note)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(c.out.String())}, Details: det}
}
