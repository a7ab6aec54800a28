package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/llm"
)

// A thinking block's signature and a redacted block survive a save and a load: a loaded
// session can send the thinking back as the provider requires.
func TestThinkingSignatureRoundTrip(t *testing.T) {
	m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{
		{Type: llm.ContentThinking, Thinking: "check a.txt", Signature: "EqQBsig"},
		{Type: llm.ContentThinking, Signature: "EmwKdata", Redacted: true},
		llm.NewToolCall("c1", "read", json.RawMessage(`{"path":"a.txt"}`)),
	}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"thinking","thinking":"check a.txt","signature":"EqQBsig"},{"type":"thinking","thinking":"","signature":"EmwKdata","redacted":true},`
	if got := string(b); len(got) < len(want) || got[len(`{"role":"assistant","content":`):][:len(want)] != want {
		t.Errorf("JSON %s, want content starting %s", got, want)
	}
	var back llm.Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(m.Content, back.Content); d != "" {
		t.Errorf("content after a round trip (-want +got):\n%s", d)
	}
}
