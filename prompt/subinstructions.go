// This file gives the model the instruction files of folders the system prompt does not hold
// (a subfolder of the working folder, or a folder beside it in the workspace): the first time
// a call reads or changes a file under such a folder, the AGENTS.md (else CLAUDE.md) of each
// folder between the workspace folder and the file that the model has not seen yet is added
// to that call's result, under "Instructions for FOLDER/ (from FOLDER/AGENTS.md):", between
// the marker lines (instructions.go), cut at InstructionsMax, and listed in the result's
// details.instructions. Only a trusted workspace folder's files are given, read as
// instructions.go reads them. What the model has seen is what the tool results it still
// sees list (Given.Reset).

package prompt

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pid-agent/pid/llm"
)

// Given is which subfolders' instruction files the model has been given in tool results.
// Its methods are safe for concurrent use (the calls of a parallel batch).
type Given struct {
	// mu guards given.
	mu sync.Mutex
	// given holds the absolute path of each instruction file given so far.
	given map[string]bool
}

// For returns the instruction files, not given yet, of the folders above the file at path
// (absolute, or relative to cwd) that the system prompt does not hold, read now, from the top
// down, and notes them as given. roots are the session's workspace folders, root the one the
// system prompt holds the folders of (down to cwd); trusted reports whether a workspace
// folder's files may be given.
func (g *Given) For(path, cwd, root string, roots []string, trusted func(root string) bool) []Text {
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	path = filepath.Clean(path)
	fileRoot := ""
	for _, r := range roots {
		if within(path, r) && len(r) > len(fileRoot) {
			fileRoot = r
		}
	}
	if fileRoot == "" || !trusted(fileRoot) {
		return nil
	}
	// The folders the system prompt holds: the session's workspace folder down to cwd.
	held := map[string]bool{}
	if fileRoot == root {
		for _, d := range foldersDown(root, cwd) {
			held[d] = true
		}
	}
	var dirs []string
	for _, d := range foldersDown(fileRoot, filepath.Dir(path)) {
		if !held[d] {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	r, err := os.OpenRoot(fileRoot)
	if err != nil {
		return nil
	}
	defer r.Close()
	var out []Text
	for _, d := range dirs {
		c, ok := folderFile(r, fileRoot, d)
		if !ok || !g.claim(c.path) {
			continue
		}
		f, err := read(c)
		if err != nil {
			g.release(c.path)
			continue
		}
		out = append(out, f)
	}
	return out
}

// within reports whether p is root or under it.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// claim reports whether the file at path is still to be given, and notes it as given.
func (g *Given) claim(path string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.given[path] {
		return false
	}
	if g.given == nil {
		g.given = map[string]bool{}
	}
	g.given[path] = true
	return true
}

// release forgets that the file at path was given (it could not be read).
func (g *Given) release(path string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.given, path)
}

// Reset sets the files given to those the tool results of msgs list (what the model sees: a
// loaded transcript, the messages a compaction kept).
func (g *Given) Reset(msgs []llm.Message) {
	given := map[string]bool{}
	for i := range msgs {
		if msgs[i].Role != llm.RoleToolResult {
			continue
		}
		for _, p := range listed(msgs[i].Details) {
			given[p] = true
		}
	}
	g.mu.Lock()
	g.given = given
	g.mu.Unlock()
}

// WithFiles returns a result's content with files added, each under the folder it is for
// (relative to cwd) between the marker lines of the code nonce, and its details with the
// files listed in "instructions" (details that are not an object, which no built-in tool
// has, are replaced).
func WithFiles(content []llm.Content, details any, files []Text, cwd, nonce string) ([]llm.Content, map[string]any) {
	out := append([]llm.Content(nil), content...)
	listedFiles := make([]File, 0, len(files))
	var b strings.Builder
	for _, f := range files {
		dir := relTo(cwd, filepath.Dir(f.Path))
		from := relTo(cwd, f.Path)
		fmt.Fprintf(&b, "\n\nInstructions for %s/ (from %s):\n%s", dir, from, markedText(nonce, from, f))
		listedFiles = append(listedFiles, f.File)
	}
	out = append(out, llm.Text(strings.TrimPrefix(b.String(), "\n\n")))
	d := map[string]any{}
	if details != nil {
		if raw, err := json.Marshal(details); err == nil {
			_ = json.Unmarshal(raw, &d)
			if d == nil {
				d = map[string]any{}
			}
		}
	}
	d["instructions"] = listedFiles
	return out, d
}

// listed returns the paths a result's details.instructions lists: the details as WithFiles
// made them, or as a loaded file gives them back (decoded JSON).
func listed(details any) []string {
	d, ok := details.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	switch list := d["instructions"].(type) {
	case []File:
		for _, f := range list {
			out = append(out, f.Path)
		}
	case []any:
		for _, f := range list {
			if m, ok := f.(map[string]any); ok {
				if p, ok := m["path"].(string); ok {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// relTo returns path relative to dir, with slashes ("." for dir itself); path itself when
// it cannot be made relative.
func relTo(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}
