// This file holds the grep tool: a regular-expression search over the files of a folder,
// respecting .gitignore.

package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// The grep tool's limits.
const (
	GrepDefaultLimit = 100
	GrepMaxLimit     = 1000
	GrepMaxLineBytes = 500      // a matching line is shown cut to this
	GrepMaxBytes     = 50 << 10 // output per call, whatever the limit
	// grepKeepBytes is how much of each line is searched: a match further into a longer
	// line is missed.
	grepKeepBytes = 1 << 20
)

// GrepDetails are the details of a grep result.
type GrepDetails struct {
	Matches          int `json:"matches"`
	FilesWithMatches int `json:"filesWithMatches"`
	FilesSearched    int `json:"filesSearched"`
	BinarySkipped    int `json:"binarySkipped,omitempty"`
	// Truncated says there are more matches than shown.
	Truncated bool `json:"truncated,omitempty"`
	// IgnoreFilesSkipped lists the .gitignore files that were not applied, and why.
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

func grepTool(ws *Workspace) toolexec.Tool {
	return toolexec.Tool{
		Name: NameGrep,
		Description: "Search file contents with a regular expression (Go RE2 syntax; no backreferences or lookaround). " +
			"Prints path:line: text for each matching line, at most limit (default 100) matches and 50KB, lines cut at 500 bytes. " +
			"Skips .git, files ignored by .gitignore, binary files and symbolic links. Finding nothing is not an error.",
		Parameters: grepSchema,
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
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
			return ws.grep(ctx, a.Pattern, a.Path, a.Glob, a.IgnoreCase, intArg(a.Limit, GrepDefaultLimit))
		},
	}
}

func (ws *Workspace) grep(ctx context.Context, pattern, path, glob string, ignoreCase bool, limit int) (toolexec.Result, error) {
	expr := pattern
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return toolexec.Result{}, fmt.Errorf("invalid regular expression %q: %v (the syntax is Go's RE2)", pattern, err)
	}
	var filter *pathGlob
	if glob != "" {
		if filter, err = newPathGlob(glob); err != nil {
			return toolexec.Result{}, err
		}
	}
	if path == "" {
		path = "."
	}
	root, err := ws.Resolve(path)
	if err != nil {
		return toolexec.Result{}, err
	}
	r, rel, err := ws.at(root)
	if err != nil {
		return toolexec.Result{}, err
	}
	fi, err := r.Stat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return toolexec.Result{}, fmt.Errorf("path not found: %s", path)
	} else if err != nil {
		return toolexec.Result{}, ws.explain(path, err)
	}

	var out strings.Builder
	var det GrepDetails
	full := false
	// search searches the file name in dir, whose real path is real.
	search := func(dir *os.Root, name, real string) error {
		n, isBinary, err := grepFile(dir, name, real, re, func(line int, text []byte, size int) bool {
			if det.Matches == limit {
				full = true
				return false
			}
			shown := validText(cutRunes(text, GrepMaxLineBytes))
			if size > GrepMaxLineBytes {
				shown += " …"
			}
			entry := fmt.Sprintf("%s:%d: %s\n", ws.display(real), line, shown)
			if out.Len()+len(entry) > GrepMaxBytes {
				full = true
				return false
			}
			out.WriteString(entry)
			det.Matches++
			return true
		})
		if err != nil {
			return nil // an unreadable file, or one that is no longer regular, is skipped
		}
		if isBinary {
			det.BinarySkipped++
			return nil
		}
		det.FilesSearched++
		if n > 0 {
			det.FilesWithMatches++
		}
		if full {
			return fs.SkipAll
		}
		return nil
	}
	switch {
	case fi.Mode().IsRegular():
		_ = search(r, rel, root)
	case fi.IsDir():
		det.IgnoreFilesSkipped, err = ws.walk(ctx, root, func(dir *os.Root, real, rel string, e entry) error {
			// FIFOs, devices and links are skipped without being opened; one swapped in
			// after the listing is opened without blocking and refused (grepFile).
			if !e.typ.IsRegular() {
				return nil
			}
			if filter != nil && !filter.match(rel, e.name) {
				return nil
			}
			return search(dir, e.name, real)
		})
		if err != nil {
			return toolexec.Result{}, ws.explain(path, err)
		}
	default:
		return toolexec.Result{}, &notRegularError{path: path, mode: fi.Mode()}
	}

	where := ws.display(root)
	note := skippedNote(det.IgnoreFilesSkipped)
	if det.Matches == 0 {
		msg := fmt.Sprintf("No matches for %q in %s", pattern, where)
		if det.BinarySkipped > 0 {
			msg += fmt.Sprintf(" (%s skipped)", plural(det.BinarySkipped, "binary file"))
		}
		if note != "" {
			msg += "\n" + note
		}
		return toolexec.Result{Content: []llm.Content{llm.Text(msg)}, Details: det}, nil
	}
	if full {
		det.Truncated = true
		fmt.Fprintf(&out, "\n[Stopped after %s (limit %d, or %s of output). Narrow the pattern, path or glob, or raise limit.]\n", plural(det.Matches, "match"), limit, size(GrepMaxBytes))
	}
	if note != "" {
		out.WriteString("\n" + note)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(out.String())}, Details: det}, nil
}

// grepFile calls found for each line of the file name in dir (real is its real path) that
// re matches, with its 1-based number, its text (at most grepKeepBytes of it) and its full
// length, until found returns false. It returns the number of matching lines reported, and
// whether the file was skipped as binary. What is not a regular file once opened (without
// blocking) is an error.
func grepFile(dir *os.Root, name, real string, re *regexp.Regexp, found func(line int, text []byte, size int) bool) (int, bool, error) {
	f, _, err := openRegular(dir, name, real)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(sniffLen)
	if binary(head, len(head) < sniffLen) {
		return 0, true, nil
	}
	n, line := 0, 0
	err = eachLine(br, grepKeepBytes, func(text []byte, size int) bool {
		line++
		if !re.Match(text) {
			return true
		}
		if !found(line, text, size) {
			return false
		}
		n++
		return true
	})
	return n, false, err
}
