// Package problems holds the shape of a problem pid hands the model (Diagnostic: one file's
// problem, whichever client found it: the editor's, through editor/diagnostics, or pid's own
// language-server client in package lsp) and how a tool result's text says them (Report,
// Lines, Filter). The file tools, lsp and the diagnostics reporter share it; it knows no
// server and reads no file. Its entry point is Report. Pure: safe for concurrent use.
package problems

import (
	"fmt"
	"slices"
	"strings"

	"go.lsp.dev/protocol"
)

// Diagnostic is one problem in one file: LSP's Diagnostic (0-based range, severity 1 error,
// 2 warning, 3 information, 4 hint) with the file's absolute path.
type Diagnostic struct {
	Path     string         `json:"path"`
	Range    protocol.Range `json:"range"`
	Severity int            `json:"severity"`
	Message  string         `json:"message"`
	Source   string         `json:"source,omitempty"`
	Code     any            `json:"code,omitempty"`
}

// MaxShown is how many problems of one file the result text lists.
const MaxShown = 20

// Report returns what a tool result adds about the problems of the files it changed: for
// each path, in order, that has problems of severity 1 (errors), `Problems the editor
// reports in PATH after this change:` (who is "the editor" or "the language server") and
// one line per error, `L12:5 message (source)` with the line and column 1-based, at most
// MaxShown and then `... and N more`. "" when no file has an error. display turns an
// absolute path into the one shown (relative to the cwd, say).
func Report(who string, paths []string, ds []Diagnostic, display func(string) string) string {
	var b strings.Builder
	for _, p := range paths {
		errs := Filter(ds, p, 1)
		if len(errs) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Problems %s reports in %s after this change:\n", who, display(p))
		b.WriteString(Lines(errs, MaxShown))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Lines lists problems one a line (`L12:5 message (source)`, 1-based), sorted by position,
// at most max and then `... and N more`.
func Lines(ds []Diagnostic, max int) string {
	ds = slices.Clone(ds)
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		if a.Range.Start.Line != b.Range.Start.Line {
			return int(a.Range.Start.Line) - int(b.Range.Start.Line)
		}
		return int(a.Range.Start.Character) - int(b.Range.Start.Character)
	})
	var b strings.Builder
	for i, d := range ds {
		if i == max {
			fmt.Fprintf(&b, "... and %d more\n", len(ds)-max)
			break
		}
		fmt.Fprintf(&b, "L%d:%d %s", d.Range.Start.Line+1, d.Range.Start.Character+1, oneLine(d.Message))
		if d.Source != "" {
			fmt.Fprintf(&b, " (%s)", d.Source)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Filter returns the problems of path (all paths when ""), of severity max or more severe.
func Filter(ds []Diagnostic, path string, max int) []Diagnostic {
	var out []Diagnostic
	for _, d := range ds {
		if (path == "" || d.Path == path) && d.Severity <= max {
			out = append(out, d)
		}
	}
	return out
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", "")), " ")
}
