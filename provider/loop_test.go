package provider_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/provider/anthropic"
	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/openai"
	"github.com/pid-agent/pid/toolexec"
)

// tools are read and grep, answering with their arguments, so the test can see which
// result went where.
func tools(t *testing.T) *toolexec.Toolbox {
	t.Helper()
	echo := func(name string) toolexec.Tool {
		return toolexec.Tool{
			Name: name, Description: name + " things",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"pattern":{"type":"string"}},"additionalProperties":false}`),
			Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
				return toolexec.TextResult(name + " " + string(c.Args)), nil
			},
		}
	}
	tb, err := toolexec.NewToolbox(echo("read"), echo("grep"))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// A prompt through the loop against a replayed server: the model asks for a parallel batch,
// the results go back in the next request in source order, and the run ends with text.
func TestLoopRoundTrip(t *testing.T) {
	for _, api := range []string{"openai", "anthropic"} {
		t.Run(api, func(t *testing.T) {
			srv := replay.New(t,
				replay.Step{File: filepath.Join("testdata", api, "parallel_tools.sse")},
				replay.Step{File: filepath.Join("testdata", api, "text.sse")},
			)
			var p llm.Provider
			var err error
			if api == "openai" {
				p, err = openai.New(openai.Options{Model: "gpt-4.1", BaseURL: srv.URL + "/v1", APIKey: key, HTTPClient: srv.Client()})
			} else {
				p, err = anthropic.New(anthropic.Options{Model: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: key, HTTPClient: srv.Client()})
			}
			if err != nil {
				t.Fatal(err)
			}
			agent, err := loop.NewAgent(loop.AgentConfig{Provider: p, SystemPrompt: "You are pid.", Toolbox: tools(t), InitialTools: []string{"read", "grep"}})
			if err != nil {
				t.Fatal(err)
			}
			var updates int
			res, err := agent.Prompt(context.Background(), "Read a.txt and grep b/.", func(e event.Event) {
				if _, ok := e.(event.MessageUpdate); ok {
					updates++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != llm.StopEnd || res.Messages[len(res.Messages)-1].Text() != "Hello! How can I help?" {
				t.Fatalf("run ended %q with %+v", res.StopReason, res.Messages[len(res.Messages)-1])
			}
			if updates < 10 {
				t.Errorf("%d messageUpdate events, want one per streamed step", updates)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			got := results(t, api, reqs[1].Body)
			want := []string{
				`read {"path": "a.txt"}`,
				`grep {"pattern": "TODO", "path": "b/"}`,
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("tool results in the second request (-want +got):\n%s", d)
			}
		})
	}
}

// results returns the tool-result texts of a request body in order, and checks each
// follows its call.
func results(t *testing.T, api string, body []byte) []string {
	t.Helper()
	var out []string
	if api == "openai" {
		var r struct {
			Messages []struct {
				Role       string `json:"role"`
				Content    any    `json:"content"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		for _, m := range r.Messages {
			if m.Role == "tool" {
				out = append(out, m.Content.(string))
				if !strings.HasPrefix(m.ToolCallID, "call_") {
					t.Errorf("tool message for %q", m.ToolCallID)
				}
			}
		}
		return out
	}
	var r struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, b.Content[0].Text)
			}
		}
	}
	if n := len(r.Messages); n != 3 || r.Messages[2].Role != "user" {
		t.Errorf("messages = %+v, want user, assistant, one user message of results", r.Messages)
	}
	return out
}

// Arguments that do not parse reach the tool's validation as a JSON string, which fails
// the call with the text the model wrote; the run goes on.
func TestLoopInvalidArguments(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_bad\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\": a.txt}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
	srv := replay.New(t,
		replay.Step{Body: body, Header: map[string]string{"Content-Type": "text/event-stream"}},
		replay.Step{File: filepath.Join("testdata", "openai", "text.sse")},
	)
	p, err := openai.New(openai.Options{Model: "m", BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := loop.NewAgent(loop.AgentConfig{Provider: p, Toolbox: tools(t), InitialTools: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Prompt(context.Background(), "Read a.txt.", func(event.Event) {})
	if err != nil {
		t.Fatal(err)
	}
	var result *llm.Message
	for i := range res.Messages {
		if res.Messages[i].Role == llm.RoleToolResult {
			result = &res.Messages[i]
		}
	}
	if result == nil || !result.IsError || !strings.Contains(result.Content[0].Text, "got string, want object") || !strings.Contains(result.Content[0].Text, `"{\"path\": a.txt}"`) {
		t.Fatalf("tool result = %+v, want a validation error quoting the arguments", result)
	}
	if res.StopReason != llm.StopEnd {
		t.Errorf("run ended %q", res.StopReason)
	}
}
