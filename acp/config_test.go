// This file tests what an ACP client sets of a session beside its model: _meta.systemPrompt
// (a string replaces pid's system prompt, {append} adds to it) and the thought_level
// configuration option, against a local chat-completions server that records what it is
// sent.

package acp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
)

// recordingModel is a chat-completions server that answers every request with one short
// text, and keeps the request bodies.
type recordingModel struct {
	*httptest.Server
	// mu guards bodies.
	mu     sync.Mutex
	bodies [][]byte
}

func newRecordingModel(t *testing.T) *recordingModel {
	m := &recordingModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.bodies = append(m.bodies, b)
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\n"+"data: [DONE]\n\n")
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *recordingModel) body(i int) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i >= len(m.bodies) {
		return nil
	}
	return m.bodies[i]
}

func (m *recordingModel) config() string {
	return fmt.Sprintf(`{"model":{"provider":"openai","id":"m","baseUrl":%q}}`, m.URL+"/v1")
}

func TestMetaSystemPrompt(t *testing.T) {
	model := newRecordingModel(t)
	c := start(t)
	c.initialize(nil)
	cwd := t.TempDir()
	for i, tc := range []struct {
		name  string
		meta  any
		check func(string) bool
	}{
		{"none", nil, func(p string) bool {
			return strings.HasPrefix(p, "You are pid") && strings.Contains(p, "Working folder: "+cwd)
		}},
		{"replace", "You review Go code.", func(p string) bool { return p == "You review Go code." }},
		{"append", map[string]any{"append": "Answer in French."}, func(p string) bool {
			return strings.HasPrefix(p, "You are pid") && strings.HasSuffix(p, "\n\nAnswer in French.")
		}},
	} {
		meta := map[string]any{"pid": json.RawMessage(model.config())}
		if tc.meta != nil {
			meta["systemPrompt"] = tc.meta
		}
		res, _ := c.result(c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": meta}), nil)
		sid := res.Get("sessionId").String()
		c.result(c.prompt(sid, "hi"), nil)
		sent := gjson.GetBytes(model.body(i), "messages.0")
		if sent.Get("role").String() != "system" || !tc.check(sent.Get("content").String()) {
			t.Errorf("%s: the model got %s", tc.name, sent.Raw)
		}
	}
	id := c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": map[string]any{"systemPrompt": map[string]any{"add": "x"}}})
	if m := c.wantError(id, -32602); !strings.Contains(m.get("error.message").String(), `{"append": string}`) {
		t.Errorf("a malformed _meta.systemPrompt: %s", m.get("error").Raw)
	}
	c.stop()
}

// thought_level is offered by session/new, set by session/set_config_option, and what it
// is set to reaches the model's next request.
func TestThoughtLevelOption(t *testing.T) {
	model := newRecordingModel(t)
	c := start(t)
	c.initialize(nil)
	cwd := t.TempDir()
	res, _ := c.result(c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": map[string]any{"pid": json.RawMessage(model.config())}}), nil)
	sid := res.Get("sessionId").String()
	opt := res.Get(`configOptions.#(id=="thought_level")`)
	if opt.Get("category").String() != "thought_level" || opt.Get("type").String() != "select" || opt.Get("currentValue").String() != "off" ||
		opt.Get("options.#.value").Raw != `["off","low","medium","high"]` {
		t.Fatalf("session/new's thought_level option: %s", res.Get("configOptions").Raw)
	}
	set, _ := c.result(c.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": "thought_level", "value": "high"}), nil)
	if got := set.Get(`configOptions.#(id=="thought_level").currentValue`).String(); got != "high" {
		t.Errorf("after setting high, currentValue %q: %s", got, set.Raw)
	}
	c.result(c.prompt(sid, "hi"), nil)
	if got := gjson.GetBytes(model.body(0), "reasoning_effort").String(); got != "high" {
		t.Errorf("reasoning_effort %q after thought_level high", got)
	}
	// session/resume of the live session shows the level it was set to.
	resumed, _ := c.result(c.request("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}), nil)
	if got := resumed.Get(`configOptions.#(id=="thought_level").currentValue`).String(); got != "high" {
		t.Errorf("session/resume's thought_level %q, want high: %s", got, resumed.Raw)
	}
	id := c.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": "thought_level", "value": "max"})
	c.wantError(id, -32602)
	id = c.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": "colour", "value": "red"})
	c.wantError(id, -32602)
	c.stop()
}
