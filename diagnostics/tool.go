// This file holds the diagnostics tool: the built-in read-only tool that reports the
// problems the source sees now, in a file or in every file it knows, and its text.

package diagnostics

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/problems"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// Name is the name of the diagnostics tool.
const Name = tools.NameDiagnostics

// MaxFilesShown is how many files the diagnostics tool's text lists.
const MaxFilesShown = 50

// Tool returns the diagnostics tool over the Reporter's source.
func (r *Reporter) Tool() toolexec.Tool {
	return toolexec.Tool{
		Name:        Name,
		Description: "Report the problems (compile errors, type errors, lint warnings) that the language servers see now in a file, or in every file they know about. Use it to check code after changing it, or before starting, instead of running a build.",
		Parameters:  raw(),
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Path     string `json:"path"`
				Severity int    `json:"severity"`
			}
			if err := call.Decode(&a); err != nil {
				return toolexec.Result{}, err
			}
			return r.report(ctx, a.Path, a.Severity)
		},
	}
}

// report is the tool's result for path (as the call names it; "" for every file) at
// severity (0: errors and warnings).
func (r *Reporter) report(ctx context.Context, path string, severity int) (toolexec.Result, error) {
	if severity == 0 {
		severity = 2
	}
	var paths []string
	if path != "" {
		p, err := r.Resolve(path)
		if err != nil {
			return toolexec.Result{}, err
		}
		paths = []string{p}
		if r.Serves != nil && !r.Serves()(p) {
			return toolexec.TextResult(fmt.Sprintf("No language server is set up for %s: the settings' lsp names none for its extension, so its problems are not known.", path)), nil
		}
	}
	got, err := r.Ask(ctx, paths)
	ds := got.Diagnostics
	if err != nil && len(ds) == 0 {
		return toolexec.Result{}, fmt.Errorf("%s gave no problems: %v", r.Source, err)
	}
	ds = problems.Filter(ds, "", severity)
	if len(paths) == 1 {
		ds = problems.Filter(ds, paths[0], severity)
	}
	if ds == nil {
		ds = []problems.Diagnostic{}
	}
	text := r.Text(path, ds)
	for _, p := range got.Starting {
		text += "\n" + StartingText(r.display(p))
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(text)}, Details: map[string]any{"diagnostics": ds}}, nil
}

// Text is the diagnostics tool's text for problems ds of the file the call named asked
// ("" for every file): per file, sorted, its problems with their severity; at most
// MaxFilesShown files.
func (r *Reporter) Text(asked string, ds []problems.Diagnostic) string {
	if len(ds) == 0 {
		if asked != "" {
			return fmt.Sprintf("No problems reported in %s.", asked)
		}
		return "No problems reported in the workspace's files."
	}
	var files []string
	for _, d := range ds {
		if !slices.Contains(files, d.Path) {
			files = append(files, d.Path)
		}
	}
	slices.Sort(files)
	var b strings.Builder
	for i, f := range files {
		if i == MaxFilesShown {
			fmt.Fprintf(&b, "\n... and %d more files with problems (ask about one with path)", len(files)-MaxFilesShown)
			break
		}
		if i > 0 {
			b.WriteString("\n")
		}
		mine := problems.Filter(ds, f, 4)
		errs := len(problems.Filter(mine, f, 1))
		fmt.Fprintf(&b, "%s: %d errors, %d warnings\n", r.display(f), errs, len(mine)-errs)
		b.WriteString(problems.Lines(labelled(mine), problems.MaxShown))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// labelled prefixes each message with its severity.
func labelled(ds []problems.Diagnostic) []problems.Diagnostic {
	out := slices.Clone(ds)
	for i := range out {
		out[i].Message = [...]string{"error", "error", "warning", "info", "hint"}[min(max(out[i].Severity, 0), 4)] + ": " + out[i].Message
	}
	return out
}

// display shows an absolute path relative to the cwd (or to the cwd with its links
// resolved) when it is inside it.
func (r *Reporter) display(p string) string {
	for _, cwd := range []string{r.Cwd, realPath(r.Cwd)} {
		if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
