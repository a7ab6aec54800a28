// This file describes tool calls in ACP's terms: a human title, a kind, the locations a
// call touches, and its content (text, images, and for write and edit a diff).

package acp

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/elide"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
	"github.com/pid-agent/pid/tools"
)

// Wire shapes of session/update.
type (
	contentChunk struct {
		SessionUpdate string `json:"sessionUpdate"`
		Content       any    `json:"content"`
	}
	// toolCallStart is the tool_call update.
	toolCallStart struct {
		SessionUpdate string          `json:"sessionUpdate"`
		ToolCallID    string          `json:"toolCallId"`
		Title         string          `json:"title"`
		Kind          string          `json:"kind"`
		Status        string          `json:"status"`
		RawInput      json.RawMessage `json:"rawInput,omitempty"`
		Locations     []location      `json:"locations,omitempty"`
	}
	// toolCallUpdate is the tool_call_update update, and the toolCall of a permission
	// request (without sessionUpdate).
	toolCallUpdate struct {
		SessionUpdate string          `json:"sessionUpdate,omitempty"`
		ToolCallID    string          `json:"toolCallId"`
		Title         string          `json:"title,omitempty"`
		Kind          string          `json:"kind,omitempty"`
		Status        string          `json:"status,omitempty"`
		Content       []any           `json:"content,omitempty"`
		Locations     []location      `json:"locations,omitempty"`
		RawInput      json.RawMessage `json:"rawInput,omitempty"`
		RawOutput     json.RawMessage `json:"rawOutput,omitempty"`
	}
	location struct {
		Path string `json:"path"`
		Line *int   `json:"line,omitempty"`
	}
	// toolContent is {type: "content", content: ContentBlock}.
	toolContent struct {
		Type    string `json:"type"`
		Content any    `json:"content"`
	}
	// diffContent is {type: "diff", path, oldText, newText}; a null oldText is a new file.
	diffContent struct {
		Type    string  `json:"type"`
		Path    string  `json:"path"`
		OldText *string `json:"oldText"`
		NewText string  `json:"newText"`
	}
	textContent struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	imageContent struct {
		Type     string `json:"type"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	}
)

func textBlock(s string) textContent { return textContent{Type: "text", Text: s} }

// toolArgs are the arguments of the built-in tools that titles and locations use.
type toolArgs struct {
	Path    string   `json:"path"`
	Command string   `json:"command"`
	Pattern string   `json:"pattern"`
	Offset  *float64 `json:"offset"`
	// Description is a task call's.
	Description string `json:"description"`
}

// callSite is what describing a call needs of its session (*session.Session has it).
type callSite interface {
	// IsBuiltin reports whether the session's tool of that name is a built-in one.
	IsBuiltin(name string) bool
	// Cwd returns the session's working folder.
	Cwd() string
	// ToolAnnotations returns the hints an MCP tool's server gives about it (readOnlyHint,
	// title...), nil for other tools: shown, never trusted to decide anything.
	ToolAnnotations(name string) map[string]any
}

// toolCall describes a call that starts: pending, with its title, kind, arguments (elided
// past elide.MaxArgs) and, for the file tools, the file it touches (absolute).
func (s *server) toolCall(ss callSite, id, name string, args json.RawMessage) toolCallStart {
	tc := toolCallStart{SessionUpdate: "tool_call", ToolCallID: id, Status: "pending", Title: name, Kind: "other"}
	if json.Valid(args) {
		tc.RawInput = elide.Args(args)
	}
	if !ss.IsBuiltin(name) {
		tc.Kind, tc.Title = otherTool(name, args, ss.ToolAnnotations(name))
		return tc
	}
	var a toolArgs
	_ = json.Unmarshal(args, &a) // invalid arguments still get a title; the call fails later
	tc.Kind = toolKind(name)
	tc.Title = toolTitle(name, a)
	switch name {
	case tools.NameRead, tools.NameWrite, tools.NameEdit:
		if a.Path != "" {
			loc := location{Path: absPath(ss.Cwd(), a.Path)}
			if name == tools.NameRead && a.Offset != nil && *a.Offset >= 1 {
				line := int(*a.Offset)
				loc.Line = &line
			}
			tc.Locations = []location{loc}
		}
	}
	return tc
}

// otherTool is the kind and title of a tool that is not built in: tool_search is a search
// ("Find MCP tools: `query`"); an MCP tool gets its kind and title from its server's hints
// (see mcpKind and mcpTitle); exit_plan_mode switches the mode ("Leave plan mode"); a
// scripted tool is of kind other and keeps its name.
func otherTool(name string, args json.RawMessage, hints map[string]any) (kind, title string) {
	if name == session.ExitPlanModeName {
		return "switch_mode", "Leave plan mode"
	}
	if name == session.ToolSearchName {
		var a struct {
			Query string `json:"query"`
		}
		_ = json.Unmarshal(args, &a)
		if a.Query == "" {
			return "search", "Find MCP tools"
		}
		return "search", "Find MCP tools: " + code(oneLine(a.Query, 60))
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok && server != "" && tool != "" {
			return mcpKind(hints), mcpTitle(server, tool, hints)
		}
	}
	return "other", name
}

// mcpKind is the ACP kind of an MCP tool, from the hints its server sent: a tool that
// says it does not change its environment (readOnlyHint) reads ("read": reading files or
// data), or fetches when it also says it reaches outside entities (openWorldHint: "fetch",
// retrieving external data); any other is "other", since a tool that may change things
// could edit, delete, move or run, and the hints do not say which. Only hints given as
// true count (MCP's defaults are not assumed). The kind only picks an icon: whether the
// call asks first is decided by the permission rules alone.
func mcpKind(hints map[string]any) string {
	if hints["readOnlyHint"] != true {
		return "other"
	}
	if hints["openWorldHint"] == true {
		return "fetch"
	}
	return "read"
}

// mcpTitle is what a person reads about a call of MCP tool tool of server: its server's
// title hint when it gave one, else the tool's name, and always the server, as in
// "Create Issue (MCP server github)". A title that is not the tool's name in other words
// (case, _ or - for spaces) also names the tool, so that a server cannot pass one tool off
// as another in a permission request: "List files (MCP server x, tool delete_all)".
func mcpTitle(server, tool string, hints map[string]any) string {
	where := "MCP server " + server
	title, _ := hints["title"].(string)
	title = oneLine(printable(title), 60)
	switch {
	case title == "":
		return tool + " (" + where + ")"
	case words(title) == words(tool):
		return title + " (" + where + ")"
	}
	return title + " (" + where + ", tool " + tool + ")"
}

// printable is s on one line: control and format characters (escape sequences, tabs, line
// breaks, direction overrides) and runs of spaces become one space.
func printable(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)), " ")
}

// words is s in lower case with _, - and runs of spaces as one space.
func words(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == '_' || r == '-' || unicode.IsSpace(r)
	}), " ")
}

// toolKind maps a built-in tool onto ACP's kinds.
func toolKind(name string) string {
	switch name {
	case tools.NameRead:
		return "read"
	case tools.NameWrite, tools.NameEdit:
		return "edit"
	case tools.NameBash:
		return "execute"
	case tools.NameGrep, tools.NameFind, tools.NameLs:
		return "search"
	case session.TodoWriteName, session.TaskName:
		return "think"
	}
	return "other"
}

// toolTitle is what a person reads about a built-in call: "Read src/main.go",
// "Run `go test ./...`".
func toolTitle(name string, a toolArgs) string {
	in := ""
	if a.Path != "" {
		in = " in " + a.Path
	}
	switch name {
	case tools.NameRead:
		return "Read " + orDefault(a.Path, "a file")
	case tools.NameWrite:
		return "Write " + orDefault(a.Path, "a file")
	case tools.NameEdit:
		return "Edit " + orDefault(a.Path, "a file")
	case tools.NameBash:
		if a.Command == "" {
			return "Run a command"
		}
		return "Run " + code(oneLine(a.Command, 80))
	case tools.NameGrep:
		return "Search for " + code(oneLine(a.Pattern, 60)) + in
	case tools.NameFind:
		return "Find " + code(oneLine(a.Pattern, 60)) + in
	case tools.NameLs:
		return "List " + orDefault(a.Path, ".")
	case session.TodoWriteName:
		return "Update the plan"
	case session.TaskName:
		return "Subagent: " + orDefault(oneLine(a.Description, 80), "a task")
	}
	return name
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// code quotes s as Markdown inline code.
func code(s string) string {
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// oneLine returns the first line of s, cut to max runes with an ellipsis.
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = strings.TrimSpace(s[:i]), true
	}
	if utf8.RuneCountInString(s) > max {
		s, cut = string([]rune(s)[:max]), true
	}
	if cut {
		s = strings.TrimRightFunc(s, unicode.IsSpace) + "…"
	}
	return s
}

// absPath resolves a tool's path argument against the session's cwd (ACP's paths are
// absolute). "~" is left as the tools would take it: unresolved here.
func absPath(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// resultContent turns a tool's content blocks into ACP tool-call content.
func resultContent(cs []llm.Content) []any {
	out := make([]any, 0, len(cs))
	for _, c := range cs {
		switch c.Type {
		case llm.ContentText:
			out = append(out, toolContent{Type: "content", Content: textBlock(c.Text)})
		case llm.ContentImage:
			out = append(out, toolContent{Type: "content", Content: imageContent{Type: "image", Data: c.Data, MimeType: c.MimeType}})
		}
	}
	return out
}

// finalUpdate is a call's last tool_call_update, from its end (see resultUpdate).
func (s *server) finalUpdate(ss callSite, e event.ToolEnd, c *callState) toolCallUpdate {
	return s.resultUpdate(ss, e.ToolCallID, e.ToolName, c.args, e.Result.Content, e.Result.Details, e.IsError)
}

// resultUpdate is the last tool_call_update of call id (name, arguments args) from its
// result: completed or failed, its content (and a diff for a successful write or edit),
// and rawOutput {content, details}. Live, details are the tool's own value; from a saved
// session, their JSON decoded (fileChange reads both).
func (s *server) resultUpdate(ss callSite, id, name string, args json.RawMessage, content []llm.Content, details any, isError bool) toolCallUpdate {
	u := toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: id, Status: "completed", Content: resultContent(content)}
	if isError {
		u.Status = "failed"
	}
	if !isError && ss.IsBuiltin(name) && (name == tools.NameWrite || name == tools.NameEdit) {
		if d, ok := fileChange(details); ok && d.Diff != "" {
			path := absPath(ss.Cwd(), d.Path)
			var whole string
			if d.Created && name == tools.NameWrite {
				var a struct {
					Content *string `json:"content"`
				}
				if json.Unmarshal(args, &a) == nil && a.Content != nil {
					whole = *a.Content
				}
			}
			u.Content = append(u.Content, diffBlocks(path, d.Diff, d.Created, whole)...)
			if d.FirstChangedLine > 0 {
				line := d.FirstChangedLine
				u.Locations = []location{{Path: path, Line: &line}}
			}
		}
	}
	raw := struct {
		Content []llm.Content `json:"content"`
		Details any           `json:"details,omitempty"`
	}{content, details}
	if raw.Content == nil {
		raw.Content = []llm.Content{}
	}
	if b, err := json.Marshal(raw); err == nil {
		u.RawOutput = b
	} else {
		s.log.Warn("a tool result could not be encoded as rawOutput", "toolCallId", id, "err", err)
	}
	return u
}

// change is what write and edit report about a file they changed.
type change struct {
	Path             string
	Diff             string
	Created          bool
	FirstChangedLine int
}

// fileChange reads the details of a write or edit result: the tool's own value, or (from a
// saved session) its JSON decoded into maps.
func fileChange(details any) (change, bool) {
	switch d := details.(type) {
	case tools.WriteDetails:
		return change{Path: d.Path, Diff: d.Diff, Created: d.Created}, true
	case *tools.WriteDetails:
		if d != nil {
			return change{Path: d.Path, Diff: d.Diff, Created: d.Created}, true
		}
	case tools.EditDetails:
		return change{Path: d.Path, Diff: d.Diff, FirstChangedLine: d.FirstChangedLine}, true
	case *tools.EditDetails:
		if d != nil {
			return change{Path: d.Path, Diff: d.Diff, FirstChangedLine: d.FirstChangedLine}, true
		}
	case map[string]any:
		// The JSON of WriteDetails or EditDetails (their json tags).
		b, err := json.Marshal(d)
		if err != nil {
			return change{}, false
		}
		var c struct {
			Path             string `json:"path"`
			Diff             string `json:"diff"`
			Created          bool   `json:"created"`
			FirstChangedLine int    `json:"firstChangedLine"`
		}
		if json.Unmarshal(b, &c) != nil {
			return change{}, false
		}
		return change{Path: c.Path, Diff: c.Diff, Created: c.Created, FirstChangedLine: c.FirstChangedLine}, true
	}
	return change{}, false
}

// diffBlocks turns a unified diff (tools' format: ---/+++ headers, @@ hunks with three
// lines of context, "\ No newline at end of file" markers) into ACP diff content, one block
// per hunk: oldText is the hunk's context and removed lines, newText its context and added
// lines. A created file is one block with oldText null and its whole content (whole is
// used when known, since the diff may have been cut).
func diffBlocks(path, diff string, created bool, whole string) []any {
	lines := strings.SplitAfter(diff, "\n")
	if created {
		if whole == "" {
			for i, l := range lines {
				if strings.HasPrefix(l, "@@") {
					_, whole = hunkSides(lines[i+1:])
					break
				}
			}
		}
		return []any{diffContent{Type: "diff", Path: path, NewText: whole}}
	}
	var out []any
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "@@") {
			i++
			continue
		}
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(lines[j], "@@") {
			j++
		}
		old, new := hunkSides(lines[i+1 : j])
		out = append(out, diffContent{Type: "diff", Path: path, OldText: &old, NewText: new})
		i = j
	}
	return out
}

// hunkSides rebuilds both sides of a hunk's lines (those after its @@ line).
func hunkSides(lines []string) (old, new string) {
	var ob, nb strings.Builder
	last := byte(0) // the kind of the previous line, for "\ No newline at end of file"
	for _, l := range lines {
		if l == "" {
			continue
		}
		switch l[0] {
		case ' ':
			ob.WriteString(l[1:])
			nb.WriteString(l[1:])
		case '-':
			ob.WriteString(l[1:])
		case '+':
			nb.WriteString(l[1:])
		case '\\':
			// The previous line has no newline at the end of its file.
			if last == ' ' || last == '-' {
				trimNewline(&ob)
			}
			if last == ' ' || last == '+' {
				trimNewline(&nb)
			}
			continue
		default:
			continue // not a hunk line (an @@ header)
		}
		last = l[0]
	}
	return ob.String(), nb.String()
}

func trimNewline(b *strings.Builder) {
	s := b.String()
	if strings.HasSuffix(s, "\n") {
		b.Reset()
		b.WriteString(s[:len(s)-1])
	}
}
