// This file tests what the faces get of MCP through the session: SameServers, the listing
// of many catalogs' servers (Merge), and an elicitation as the face asks it (Question, Ask).

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSameServers(t *testing.T) {
	a := json.RawMessage(`{"fs":{"command":"mcp-fs","args":["/w"]},"web":{"url":"https://x.test/mcp"}}`)
	cases := []struct {
		name   string
		b      json.RawMessage
		same   bool
		namesB []string
	}{
		{"same servers, other order", json.RawMessage(`{"web":{"url":"https://x.test/mcp"},"fs":{"args":["/w"],"command":"mcp-fs"}}`), true, []string{"fs", "web"}},
		{"one server's args differ", json.RawMessage(`{"fs":{"command":"mcp-fs","args":["/v"]},"web":{"url":"https://x.test/mcp"}}`), false, []string{"fs", "web"}},
		{"a server fewer", json.RawMessage(`{"fs":{"command":"mcp-fs","args":["/w"]}}`), false, []string{"fs"}},
		{"a server more", json.RawMessage(`{"fs":{"command":"mcp-fs","args":["/w"]},"web":{"url":"https://x.test/mcp"},"git":{"command":"mcp-git"}}`), false, []string{"fs", "git", "web"}},
		{"does not parse", json.RawMessage(`{"fs":{"command":3}}`), false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			same, namesA, namesB := SameServers(a, c.b)
			if same != c.same || !slices.Equal(namesB, c.namesB) {
				t.Errorf("SameServers = %v, %q; want %v, %q", same, namesB, c.same, c.namesB)
			}
			if c.namesB != nil && !slices.Equal(namesA, []string{"fs", "web"}) {
				t.Errorf("names of a = %q, want [fs web]", namesA)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	got := Merge(
		[]Info{{Name: "web", Status: "ready", Tools: 3}, {Name: "fs", Status: "starting"}},
		[]Info{{Name: "fs", Status: "starting"}, {Name: "fs", Status: "failed", Error: "exited"}},
		nil,
	)
	want := []Info{{Name: "fs", Status: "starting"}, {Name: "fs", Status: "failed", Error: "exited"}, {Name: "web", Status: "ready", Tools: 3}}
	if !slices.Equal(got, want) {
		t.Errorf("Merge = %+v, want %+v", got, want)
	}
	if got := Merge(); got == nil || len(got) != 0 {
		t.Errorf("Merge() = %#v, want an empty list, not nil (it is encoded as [])", got)
	}
	if got := InfoOf(ServerStatus{Name: "fs", ID: "x", Status: "failed", Tools: 2, Error: "why"}); got != (Info{Name: "fs", Status: "failed", Tools: 2, Error: "why"}) {
		t.Errorf("InfoOf = %+v", got)
	}
}

func TestQuestion(t *testing.T) {
	q, err := Question("srv", "call-1", &sdk.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{"type": "object"}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Server != "srv" || q.ToolCallID != "call-1" || q.Mode != "form" || q.Message != "Your name?" || string(q.RequestedSchema) != `{"type":"object"}` {
		t.Errorf("form question = %+v", q)
	}
	var params map[string]any
	if err := json.Unmarshal(q.Params, &params); err != nil || params["message"] != "Your name?" {
		t.Errorf("Params = %s (%v), want the request whole", q.Params, err)
	}
	q, err = Question("srv", "", &sdk.ElicitParams{Message: "Sign in", URL: "https://x.test/login", ElicitationID: "e1"})
	if err != nil || q.Mode != "url" || q.URL != "https://x.test/login" || q.ElicitationID != "e1" || q.RequestedSchema != nil {
		t.Errorf("url question = %+v, %v", q, err)
	}
	if _, err := Question("srv", "", &sdk.ElicitParams{RequestedSchema: func() {}}); err == nil {
		t.Error("a schema that cannot be encoded gave no error")
	}
	r := ElicitAnswer{Action: "accept", Content: map[string]any{"name": "Ann"}, Meta: map[string]any{"k": "v"}}.Result()
	if r.Action != "accept" || r.Content["name"] != "Ann" || r.Meta["k"] != "v" {
		t.Errorf("Result = %+v", r)
	}
}

// Ask puts the question as Question makes it and gives back the person's answer as the
// server gets it; a nil request is declined without a question; a failed question is the
// error.
func TestAsk(t *testing.T) {
	var asked []Elicitation
	ask := func(_ context.Context, q Elicitation) (ElicitAnswer, error) {
		asked = append(asked, q)
		return ElicitAnswer{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
	}
	r, err := Ask(t.Context(), "srv", "call-1", nil, ask)
	if err != nil || r.Action != "decline" || len(asked) != 0 {
		t.Errorf("a nil request: %+v, %v, asked %d times; want declined without asking", r, err, len(asked))
	}
	r, err = Ask(t.Context(), "srv", "call-1", &sdk.ElicitParams{Message: "Your name?"}, ask)
	if err != nil || r.Action != "accept" || r.Content["name"] != "Ann" {
		t.Errorf("answer %+v, %v", r, err)
	}
	if len(asked) != 1 || asked[0].Server != "srv" || asked[0].ToolCallID != "call-1" || asked[0].Mode != "form" || asked[0].Message != "Your name?" {
		t.Errorf("asked %+v", asked)
	}
	gone := errors.New("the editor went away")
	if _, err := Ask(t.Context(), "srv", "", &sdk.ElicitParams{Message: "x"}, func(context.Context, Elicitation) (ElicitAnswer, error) { return ElicitAnswer{}, gone }); !errors.Is(err, gone) {
		t.Errorf("a failed question: %v", err)
	}
	if _, err := Ask(t.Context(), "srv", "", &sdk.ElicitParams{RequestedSchema: func() {}}, ask); err == nil || len(asked) != 1 {
		t.Errorf("a request that cannot be encoded: %v, asked %d times; want an error before any question", err, len(asked))
	}
}
