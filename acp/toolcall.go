// This file describes tool calls in ACP's terms, from the view each tool gives of its calls
// (session.ToolView: a title, a kind, the files a call touches and changes), the same way for
// every tool: its content (text, images, and a diff of each file a call changed).

package acp

import (
	"encoding/json"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/elide"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// Wire shapes of session/update.
type (
	contentChunk struct {
		SessionUpdate string `json:"sessionUpdate"`
		Content       any    `json:"content"`
	}
	// toolCallStart is the tool_call update.
	toolCallStart struct {
		SessionUpdate string `json:"sessionUpdate"`
		ToolCallID    string `json:"toolCallId"`
		Title         string `json:"title"`
		// Name is the tool's own name (ACP 1.22's tool call name): read, bash,
		// mcp__SERVER__TOOL.
		Name      string          `json:"name"`
		Kind      string          `json:"kind"`
		Status    string          `json:"status"`
		RawInput  json.RawMessage `json:"rawInput,omitempty"`
		Locations []location      `json:"locations,omitempty"`
	}
	// toolCallUpdate is the tool_call_update update, and the toolCall of a permission
	// request (without sessionUpdate).
	toolCallUpdate struct {
		SessionUpdate string          `json:"sessionUpdate,omitempty"`
		ToolCallID    string          `json:"toolCallId"`
		Title         string          `json:"title,omitempty"`
		Name          string          `json:"name,omitempty"`
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
	// terminalContent is {type: "terminal", terminalId}: the client shows the terminal
	// (its output as it comes, and after it ended).
	terminalContent struct {
		Type       string `json:"type"`
		TerminalID string `json:"terminalId"`
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

// callSite is what describing a call needs of its session (*session.Session has it).
type callSite interface {
	// ToolView returns how a call of the session's tool name is shown to a person (see
	// session.Session.ToolView).
	ToolView(name string, args json.RawMessage, details any) session.ToolView
}

// toolCall describes a call that starts: pending, with its title, kind, arguments (elided
// past elide.MaxArgs) and the files it touches, as its tool describes them.
func (s *server) toolCall(ss callSite, id, name string, args json.RawMessage) toolCallStart {
	v := ss.ToolView(name, args, nil)
	tc := toolCallStart{SessionUpdate: "tool_call", ToolCallID: id, Status: "pending", Title: v.Title, Name: name, Kind: string(v.Kind)}
	if json.Valid(args) {
		tc.RawInput = elide.Args(args)
	}
	for _, l := range v.Locations {
		loc := location{Path: l.Path}
		if l.Line > 0 {
			line := l.Line
			loc.Line = &line
		}
		tc.Locations = append(tc.Locations, loc)
	}
	return tc
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
	u := s.resultUpdate(ss, e.ToolCallID, e.ToolName, c.args, e.Result.Content, e.Result.Details, e.IsError)
	if c.terminal == "" {
		c.terminal = ss.ToolView(e.ToolName, c.args, e.Result.Details).Terminal // a job's, named by its result
	}
	if c.terminal != "" {
		// The terminal stays shown, before the result's text.
		u.Content = append([]any{terminalContent{Type: "terminal", TerminalID: c.terminal}}, u.Content...)
	}
	return withFileTexts(u, e.Files) // what bash changed (changes.go)
}

// resultUpdate is the last tool_call_update of call id (name, arguments args) from its
// result: completed or failed, its content (and, for a call that ended without error, a
// diff of each file its tool says it changed, at the first changed line), and rawOutput
// {content, details}. Live, details are the tool's own value; from a saved session, their
// JSON decoded (the tool's view reads both).
func (s *server) resultUpdate(ss callSite, id, name string, args json.RawMessage, content []llm.Content, details any, isError bool) toolCallUpdate {
	u := toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: id, Status: "completed", Content: resultContent(content)}
	if isError {
		u.Status = "failed"
	} else if details != nil {
		for _, c := range ss.ToolView(name, args, details).Changes {
			if c.Diff == "" {
				continue
			}
			u.Content = append(u.Content, diffBlocks(c.Path, c.Diff, c.Created, c.Content)...)
			if c.Line > 0 {
				line := c.Line
				u.Locations = []location{{Path: c.Path, Line: &line}}
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
