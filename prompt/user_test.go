package prompt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
)

// Blocks become the message's content in order: a resource's path relative to the working
// folder with its lines and fenced text, an image left out with a note for a model that takes
// none; a bad block is an error naming it.
func TestUserMessage(t *testing.T) {
	text := "look"
	blocks := []json.RawMessage{
		json.RawMessage(`{"type":"resource","resource":{"uri":"file:///w/app/main.go#L3-L4","text":"a ` + "```" + ` b"}}`),
		json.RawMessage(`{"type":"image","data":"aGk=","mimeType":"image/png"}`),
	}
	m, err := UserMessage("content", &text, blocks, Attach{Cwd: "/w/app", Model: "openai/local"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Content) != 3 || m.Content[0].Text != "look" || m.Content[1].Text != "main.go (lines 3-4), as the editor has it:\n````\na ``` b\n````" ||
		!strings.Contains(m.Content[2].Text, "but the model openai/local cannot see images") {
		t.Errorf("content %+v", m.Content)
	}
	if _, err := UserMessage("content", nil, []json.RawMessage{json.RawMessage(`{"type":"video"}`)}, Attach{}); err == nil || err.Error() != `content[0]: unknown block type "video": pid takes text, image, resource_link and resource` {
		t.Errorf("error %v", err)
	}
	if _, err := UserMessage("prompt", nil, nil, Attach{}); err == nil || !strings.Contains(err.Error(), "text or prompt is required") {
		t.Errorf("empty: %v", err)
	}
	if got := TextOf([]llm.Message{llm.NewUser("a"), llm.NewUser("b")}); got != "a\nb" {
		t.Errorf("TextOf = %q", got)
	}
}
