package mcp

import (
	"reflect"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

func TestMapResultEdges(t *testing.T) {
	// No content but structured content: the model gets the JSON as text.
	r := mapResult(&sdk.CallToolResult{StructuredContent: map[string]any{"n": 1}})
	if !reflect.DeepEqual(r.Content, []llm.Content{llm.Text(`{"n":1}`)}) || r.Details.(map[string]any)["n"] != 1 {
		t.Errorf("structured only = %+v", r)
	}
	// An image blob in an embedded resource stays an image; a link with a title says it.
	r = mapResult(&sdk.CallToolResult{Content: []sdk.Content{
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///p.png", MIMEType: "image/png", Blob: []byte{1, 2}}},
		&sdk.ResourceLink{URI: "https://x/y", Name: "y", Title: "The Y", MIMEType: "text/html"},
		&sdk.EmbeddedResource{},
	}})
	want := []llm.Content{
		{Type: llm.ContentImage, Data: "AQI=", MimeType: "image/png"},
		llm.Text("Resource link: https://x/y\nName: y\nTitle: The Y\nType: text/html"),
		llm.Text("[an embedded resource without contents]"),
	}
	if !reflect.DeepEqual(r.Content, want) {
		t.Errorf("content = %+v\nwant %+v", r.Content, want)
	}
}

func TestToolErrorText(t *testing.T) {
	e := &ToolError{Server: "s", Tool: "t", Result: toolexec.Result{Content: []llm.Content{
		llm.Text("first"), {Type: llm.ContentImage, Data: "AA==", MimeType: "image/png"}, llm.Text("second"),
	}}}
	if got := e.Error(); got != "first\n[image (image/png) not shown in an error result]\nsecond" {
		t.Errorf("Error() = %q", got)
	}
	e = &ToolError{Server: "s", Tool: "t"}
	if got := e.Error(); got != `tool t of MCP server "s" reported an error without a message` {
		t.Errorf("Error() without content = %q", got)
	}
}

func TestProgressText(t *testing.T) {
	cases := []struct {
		p    sdk.ProgressNotificationParams
		want string
	}{
		{sdk.ProgressNotificationParams{Progress: 3, Total: 10, Message: "copying"}, "3/10: copying\n"},
		{sdk.ProgressNotificationParams{Progress: 0.5}, "0.5\n"},
		{sdk.ProgressNotificationParams{Progress: 2, Message: "step"}, "2: step\n"},
	}
	for _, c := range cases {
		u := progressUpdate(&c.p)
		if got := contentText(u.Content); got != c.want || u.Details != (Progress{Progress: c.p.Progress, Total: c.p.Total, Message: c.p.Message}) {
			t.Errorf("progressUpdate(%+v) = %q %+v, want %q", c.p, got, u.Details, c.want)
		}
	}
}
