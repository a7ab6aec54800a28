// This file maps what an MCP tool returns (content blocks, isError, structuredContent) and
// its progress notifications onto pid's tool results.

package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// mapResult turns an MCP tool result into pid's: the content one block for one block
// (see mapContent), structuredContent as Details. A result with no content but structured
// content gets that content as JSON text, so the model sees something.
func mapResult(r *sdk.CallToolResult) toolexec.Result {
	out := toolexec.Result{Content: make([]llm.Content, 0, len(r.Content)), Details: r.StructuredContent}
	for _, c := range r.Content {
		out.Content = append(out.Content, mapContent(c))
	}
	if len(out.Content) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Content = append(out.Content, llm.Text(string(b)))
		}
	}
	return out
}

// mapContent maps one MCP content block: text to text, an image to an image block, an
// embedded resource to its text (an image blob to an image block, another blob to a note
// naming its URI and type), a resource link to a text naming its URI, name and
// description, audio (which no model pid talks to takes) to a note.
func mapContent(c sdk.Content) llm.Content {
	switch c := c.(type) {
	case *sdk.TextContent:
		return llm.Text(c.Text)
	case *sdk.ImageContent:
		return llm.Content{Type: llm.ContentImage, Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType}
	case *sdk.AudioContent:
		return llm.Text(fmt.Sprintf("[audio (%s, %d bytes) not shown: pid passes no audio to the model]", orUnknown(c.MIMEType), len(c.Data)))
	case *sdk.ResourceLink:
		var b strings.Builder
		b.WriteString("Resource link: ")
		b.WriteString(c.URI)
		if c.Name != "" {
			b.WriteString("\nName: " + c.Name)
		}
		if c.Title != "" && c.Title != c.Name {
			b.WriteString("\nTitle: " + c.Title)
		}
		if c.Description != "" {
			b.WriteString("\nDescription: " + c.Description)
		}
		if c.MIMEType != "" {
			b.WriteString("\nType: " + c.MIMEType)
		}
		return llm.Text(b.String())
	case *sdk.EmbeddedResource:
		r := c.Resource
		switch {
		case r == nil:
			return llm.Text("[an embedded resource without contents]")
		case r.Blob != nil && strings.HasPrefix(r.MIMEType, "image/"):
			return llm.Content{Type: llm.ContentImage, Data: base64.StdEncoding.EncodeToString(r.Blob), MimeType: r.MIMEType}
		case r.Blob != nil:
			return llm.Text(fmt.Sprintf("[binary resource %s (%s, %d bytes) not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob)))
		default:
			return llm.Text(r.Text)
		}
	default:
		b, _ := json.Marshal(c)
		return llm.Text(fmt.Sprintf("[content pid cannot show: %.200s]", b))
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// ToolError is the error Server.Call returns when the tool answered with isError: pid's
// pipeline turns a returned error into an error result carrying its text, so Error is the
// result's content as text (an image becomes a note naming its type, since an error result
// holds text only). Result is the whole result, images and details included, for a caller
// that can carry more than text.
type ToolError struct {
	Server string // the server's config name
	Tool   string // the tool's name on the server
	Result toolexec.Result
}

// Error returns the result's text, or a sentence naming the tool when it has none.
func (e *ToolError) Error() string {
	var parts []string
	for _, c := range e.Result.Content {
		switch c.Type {
		case llm.ContentText:
			parts = append(parts, c.Text)
		case llm.ContentImage:
			parts = append(parts, fmt.Sprintf("[image (%s) not shown in an error result]", orUnknown(c.MimeType)))
		}
	}
	s := strings.Join(parts, "\n")
	if strings.TrimSpace(s) == "" {
		return fmt.Sprintf("tool %s of MCP server %q reported an error without a message", e.Tool, e.Server)
	}
	return s
}

// Progress is the Details of a progress update from an MCP tool.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"` // 0 when the server does not know
	Message  string  `json:"message,omitempty"`
}

// progressUpdate maps an MCP progress notification: text "3/10: message" (or "3/10",
// "3: message") ending a line, and Progress. Each update is a whole line: pid holds back
// the unfinished last word of progress text (it might be half a secret), and a line ended
// is finished.
func progressUpdate(p *sdk.ProgressNotificationParams) event.Result {
	num := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		num += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	text := num + "\n"
	if p.Message != "" {
		text = num + ": " + p.Message + "\n"
	}
	return event.Result{
		Content: []llm.Content{llm.Text(text)},
		Details: Progress{Progress: p.Progress, Total: p.Total, Message: p.Message},
	}
}
