// This file holds the edit tool: exact-text replacements in one file, all applied or none,
// its prepareArguments shim for the older single-edit form, and the hints an oldText that is
// not found gets (a match but for indentation, or but for read's line-number prefixes).

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/problems"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/workspace"
)

// EditDetails are the details of an edit result.
type EditDetails struct {
	Path string `json:"path"`
	// Diff is the unified diff of the change, cut to MaxDiffBytes (DiffTruncated) when
	// longer.
	Diff          string `json:"diff"`
	DiffTruncated bool   `json:"diffTruncated,omitempty"`
	// FirstChangedLine is the 1-based line of the new content where the first change is.
	FirstChangedLine int `json:"firstChangedLine"`
	Added            int `json:"added"`
	Removed          int `json:"removed"`
	// Diagnostics are the file's problems after the change, as the editor or pid's own
	// language server reported them (package session sets them; absent when none was asked
	// or none answered, empty when the file is clean).
	Diagnostics []problems.Diagnostic `json:"diagnostics,omitzero"`
}

var editSchema = schema(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to edit, relative to the cwd or absolute (inside the workspace folders)."},
    "edits": {
      "type": "array",
      "minItems": 1,
      "description": "Replacements, all applied to the file as it is now, or none if any fails.",
      "items": {
        "type": "object",
        "properties": {
          "oldText": {"type": "string", "minLength": 1, "description": "Exact text to replace, including whitespace and indentation. It must occur exactly once in the file."},
          "newText": {"type": "string", "description": "Text to put in its place."}
        },
        "required": ["oldText", "newText"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path", "edits"],
  "additionalProperties": false
}`)

// editMaxListed is how many match lines an "oldText matches N times" error lists.
const editMaxListed = 10

func editTool(ws *Workspace) toolexec.Tool {
	return toolexec.Tool{
		Name: NameEdit,
		Description: "Edit a file by exact text replacement. Each edits[i].oldText must occur exactly once in the file as it is now (copy it, whitespace included, from what read showed, without the line-number prefix); " +
			"edits must not overlap. All edits apply or none do. You must have read the file in this session and it must not have changed since; otherwise read it again. " +
			"Use write to create a file.",
		Parameters: editSchema,
		// The older form is rewritten first (R6); once valid, a call changing a file not
		// read yet is refused before approval is asked (refuseUnread).
		PrepareArguments: prepareEditArgs,
		Check:            ws.refuseUnread,
		Resources:        pathResources(ws),
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Path  string        `json:"path"`
				Edits []replacement `json:"edits"`
			}
			if err := decodeArgs(call, &a); err != nil {
				return toolexec.Result{}, err
			}
			return ws.edit(ctx, a.Path, a.Edits)
		},
	}
}

// replacement is one element of edit's edits.
type replacement struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// prepareEditArgs rewrites the older single-edit form {path, oldText, newText} to
// {path, edits: [{oldText, newText}]} (R6). Anything else, including an object that already
// has edits and text that is not a JSON object, is returned unchanged for the schema to
// judge.
//
// Contract: toolexec's prepare pass calls it, serially; it is pure and never fails.
func prepareEditArgs(args json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return args, nil
	}
	if _, ok := obj["edits"]; ok {
		return args, nil
	}
	oldText, hasOld := obj["oldText"]
	newText, hasNew := obj["newText"]
	if !hasOld && !hasNew {
		return args, nil
	}
	one := make(map[string]json.RawMessage, 2)
	if hasOld {
		one["oldText"] = oldText
	}
	if hasNew {
		one["newText"] = newText
	}
	delete(obj, "oldText")
	delete(obj, "newText")
	edits, err := json.Marshal([]map[string]json.RawMessage{one})
	if err != nil {
		return args, nil
	}
	obj["edits"] = edits
	out, err := json.Marshal(obj)
	if err != nil {
		return args, nil
	}
	return out, nil
}

// edit applies edits to the file at path. The file's content is held once: from the disk
// it is read into one string, the new content is streamed from its pieces (the old
// content between the replacements, and the newTexts) into the temporary file that
// replaces it, hashed on the way, and the diff is made from the lines around each
// replacement only. Through the editor (EditorFiles) the new content is built whole, since
// the editor takes it as one text.
func (ws *Workspace) edit(ctx context.Context, path string, edits []replacement) (toolexec.Result, error) {
	real, err := ws.Resolve(path)
	if err != nil {
		return toolexec.Result{}, err
	}
	shown := ws.Display(real)
	r, rel, err := ws.At(real)
	if err != nil {
		return toolexec.Result{}, err
	}
	cur, mode, exists, err := ws.current(ctx, r, rel, real, shown, path)
	if err != nil {
		return toolexec.Result{}, err
	}
	if !exists {
		return toolexec.Result{}, fmt.Errorf("file not found: %s (edit changes existing files; use write to create one)", path)
	}
	plan, err := planEdits(cur.Content, edits, shown)
	if err != nil {
		return toolexec.Result{}, err
	}
	var sum workspace.Digest
	if ws.editor.Write != nil {
		content := plan.build()
		sum = workspace.SumString(content)
		err = ws.editor.Write(ctx, real, content)
	} else {
		sum, err = ws.replaceFileStream(r, rel, filepath.Dir(real), mode, plan.pieces)
	}
	if err != nil {
		return toolexec.Result{}, ws.Explain(path, err)
	}
	ws.seen.Record(real, workspace.WholeFingerprint(sum))
	fd := plan.diff(shown)
	det := EditDetails{Path: shown, Diff: fd.Text, DiffTruncated: fd.Truncated, FirstChangedLine: fd.FirstChangedLine, Added: fd.Added, Removed: fd.Removed}
	msg := fmt.Sprintf("Edited %s: %s applied, +%d -%d lines, first change at line %d.", shown, plural(len(edits), "edit"), fd.Added, fd.Removed, fd.FirstChangedLine)
	return toolexec.Result{Content: []llm.Content{llm.Text(msg)}, Details: det}, nil
}

// editSpan is one replacement located in the content: bytes start to end become newText.
type editSpan struct {
	start, end int
	newText    string
	idx        int // its index in edits
}

// editPlan is a set of replacements that apply to content: spans sorted, not overlapping.
type editPlan struct {
	content string
	spans   []editSpan
}

// planEdits locates every edit in content, each oldText as content is (not as earlier
// edits left it), or fails saying what is wrong with each edit that cannot apply. In a
// file with CRLF line endings an oldText written with LF endings also matches, and its
// newText gets CRLF endings. Edits that change nothing at all are refused.
func planEdits(content string, edits []replacement, shown string) (editPlan, error) {
	crlf := strings.Contains(content, "\r\n")
	var spans []editSpan
	var problems []string
	for i, e := range edits {
		oldText, newText := e.OldText, e.NewText
		starts := occurrences(content, oldText)
		if len(starts) == 0 && crlf && strings.Contains(oldText, "\n") && !strings.Contains(oldText, "\r\n") {
			if alt := strings.ReplaceAll(oldText, "\n", "\r\n"); len(occurrences(content, alt)) > 0 {
				oldText, newText = alt, strings.ReplaceAll(newText, "\n", "\r\n")
				starts = occurrences(content, oldText)
			}
		}
		switch len(starts) {
		case 0:
			msg := fmt.Sprintf("edits[%d]: oldText was not found in %s. It must match the file exactly, including whitespace and indentation.", i, shown)
			if hint := editHint(content, oldText); hint != "" {
				msg += " " + hint
			}
			problems = append(problems, msg)
		case 1:
			spans = append(spans, editSpan{starts[0], starts[0] + len(oldText), newText, i})
		default:
			problems = append(problems, fmt.Sprintf("edits[%d]: oldText matches %d times in %s (at lines %s); include more surrounding lines so that it matches exactly once.", i, len(starts), shown, lineList(content, starts)))
		}
	}
	slices.SortFunc(spans, func(x, y editSpan) int { return x.start - y.start })
	for j := 1; j < len(spans); j++ {
		if spans[j].start < spans[j-1].end {
			p, q := spans[j-1], spans[j]
			problems = append(problems, fmt.Sprintf("edits[%d] and edits[%d] overlap in %s (at line %d); merge them into one edit.", min(p.idx, q.idx), max(p.idx, q.idx), shown, lineOf(content, q.start)))
		}
	}
	if len(problems) > 0 {
		return editPlan{}, failf("%s\nNo edits were applied; %s is unchanged.", strings.Join(problems, "\n"), shown)
	}
	changes := false
	for _, s := range spans {
		if content[s.start:s.end] != s.newText {
			changes = true
		}
	}
	if !changes {
		return editPlan{}, fmt.Errorf("the edits change nothing in %s: each newText equals its oldText", shown)
	}
	return editPlan{content: content, spans: spans}, nil
}

// pieces calls yield with the new content in consecutive pieces (no piece copied), until
// yield fails; it returns yield's error.
func (p editPlan) pieces(yield func(string) error) error {
	at := 0
	for _, s := range p.spans {
		for _, piece := range []string{p.content[at:s.start], s.newText} {
			if piece == "" {
				continue
			}
			if err := yield(piece); err != nil {
				return err
			}
		}
		at = s.end
	}
	if rest := p.content[at:]; rest != "" {
		return yield(rest)
	}
	return nil
}

// build returns the new content as one string.
func (p editPlan) build() string {
	n := len(p.content)
	for _, s := range p.spans {
		n += len(s.newText) - (s.end - s.start)
	}
	var sb strings.Builder
	sb.Grow(n)
	p.pieces(func(s string) error {
		sb.WriteString(s)
		return nil
	})
	return sb.String()
}

// occurrences returns the byte offsets of every occurrence of sub in s, overlapping ones
// included (so "aa" occurs twice in "aaa": it is not unique there).
func occurrences(s, sub string) []int {
	var out []int
	for at := 0; ; {
		i := strings.Index(s[at:], sub)
		if i < 0 {
			return out
		}
		out = append(out, at+i)
		at += i + 1
	}
}

// lineOf returns the 1-based line of byte offset off in s.
func lineOf(s string, off int) int { return strings.Count(s[:off], "\n") + 1 }

// lineList formats the lines of the offsets (ascending) as "3, 17, 40", listing at most
// editMaxListed.
func lineList(s string, offs []int) string {
	var parts []string
	line, from := 1, 0
	for i, off := range offs {
		if i == editMaxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(offs)-i))
			break
		}
		line += strings.Count(s[from:off], "\n")
		from = off
		parts = append(parts, strconv.Itoa(line))
	}
	return strings.Join(parts, ", ")
}

// readPrefix is the line-number prefix read puts before each line ("%6d\t"), as a model
// copies it: spaces, digits, a tab.
var readPrefix = regexp.MustCompile(`(?m)^ *[0-9]+\t`)

// editHint returns what an oldText not found in content would match, in a sentence naming
// the line and what differs: the same text with read's line-number prefixes taken off, or
// the same lines but for their indentation or the spaces at their ends. "" when neither
// matches. Nothing is applied on a hint: the model sends the edit again.
func editHint(content, oldText string) string {
	if lines := strings.Split(oldText, "\n"); readPrefix.MatchString(lines[0]) {
		bare := readPrefix.ReplaceAllString(oldText, "")
		what := "once read's line-number prefixes (like \"     2\\t\") are taken off"
		if starts := occurrences(content, bare); len(starts) > 0 {
			return fmt.Sprintf("oldText matches %s %s: copy the text after the tab, in newText too.", linesWord(content, starts), what)
		}
		if at, why := looseMatch(content, bare); len(at) > 0 {
			return fmt.Sprintf("oldText matches %s %s, except for %s. Copy the lines as read shows them, after the tab.", linesAt(at), what, why)
		}
		return ""
	}
	if at, why := looseMatch(content, oldText); len(at) > 0 {
		return fmt.Sprintf("oldText matches %s except for %s. Copy the lines as read shows them.", linesAt(at), why)
	}
	return ""
}

// linesWord names the lines of the offsets in s: "line 3", "lines 3, 17".
func linesWord(s string, offs []int) string {
	if len(offs) == 1 {
		return fmt.Sprintf("line %d", lineOf(s, offs[0]))
	}
	return "lines " + lineList(s, offs)
}

// linesAt names 1-based line numbers: "line 3", "lines 3, 17".
func linesAt(at []int) string {
	parts := make([]string, 0, len(at))
	for i, n := range at {
		if i == editMaxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(at)-i))
			break
		}
		parts = append(parts, strconv.Itoa(n))
	}
	if len(at) == 1 {
		return "line " + parts[0]
	}
	return "lines " + strings.Join(parts, ", ")
}

// looseMatch returns the 1-based lines where oldText's lines match content's once the
// white space at both ends of each line is left out (oldText's first line may end a line
// of content and its last begin one), and what differs there: the indentation (saying
// which the file uses) or the spaces at the ends of lines.
func looseMatch(content, oldText string) ([]int, string) {
	old := strings.Split(strings.TrimSuffix(oldText, "\n"), "\n")
	normOld := make([]string, len(old))
	empty := true
	for i, l := range old {
		normOld[i] = strings.Trim(l, " \t\r")
		empty = empty && normOld[i] == ""
	}
	if empty {
		return nil, ""
	}
	lines := strings.Split(content, "\n")
	norm := make([]string, len(lines))
	for i, l := range lines {
		norm[i] = strings.Trim(l, " \t\r")
	}
	fits := func(i int) bool {
		k := len(normOld)
		for j := range normOld {
			f, o := norm[i+j], normOld[j]
			switch {
			case k == 1:
				if !strings.Contains(f, o) {
					return false
				}
			case j == 0:
				if !strings.HasSuffix(f, o) {
					return false
				}
			case j == k-1:
				if !strings.HasPrefix(f, o) {
					return false
				}
			case f != o:
				return false
			}
		}
		return true
	}
	var at []int
	for i := 0; i+len(normOld) <= len(lines); i++ {
		if fits(i) {
			at = append(at, i+1)
		}
	}
	if len(at) == 0 {
		return nil, ""
	}
	return at, looseDifference(lines[at[0]-1:at[0]-1+len(old)], old)
}

// looseDifference says how the file's lines differ from oldText's, which match them but
// for the white space at their ends.
func looseDifference(file, old []string) string {
	for j := range old {
		fi, oi := indentOf(file[j]), indentOf(old[j])
		if j == 0 && len(old) > 1 && strings.TrimLeft(old[j], " \t") != strings.TrimLeft(file[j], " \t") {
			continue // oldText starts inside this line: its indentation says nothing
		}
		if fi == oi || strings.Trim(old[j], " \t\r") == "" {
			continue
		}
		switch {
		case strings.Contains(fi, "\t") && !strings.Contains(oi, "\t"):
			return "indentation: the file indents with tabs"
		case strings.Contains(oi, "\t") && !strings.Contains(fi, "\t"):
			return "indentation: the file indents with spaces"
		}
		return fmt.Sprintf("indentation: the file's line starts with %s, oldText's with %s", describeIndent(fi), describeIndent(oi))
	}
	return "the white space at the ends of lines"
}

// indentOf returns the spaces and tabs a line starts with.
func indentOf(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " \t"))] }

// describeIndent says an indentation in words: "8 spaces", "2 tabs", "nothing".
func describeIndent(ws string) string {
	tabs, spaces := strings.Count(ws, "\t"), strings.Count(ws, " ")
	switch {
	case ws == "":
		return "nothing"
	case tabs == 0:
		return plural(spaces, "space")
	case spaces == 0:
		return plural(tabs, "tab")
	}
	return fmt.Sprintf("%s and %s", plural(tabs, "tab"), plural(spaces, "space"))
}
