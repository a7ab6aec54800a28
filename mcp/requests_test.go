package mcp

//lint:file-ignore SA1019 sampling is tested with the SDK's (deprecated) sampling types

// A server's own requests: elicitation routed to Options.Elicit with the calling session's
// context (declined without it), sampling declined unless the config allows it, roots
// answered with the workspace folders; over the 2026-07-28 protocol (requests inside the
// call) and an older one (requests of their own).

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionKey marks the context of a call the way the session layer would, to find its editor.
type sessionKey struct{}

// protocols are the protocol versions the server's requests are tested over: "" (the
// SDK's latest, with requests inside the call) and an older one.
var protocols = []struct{ name, version string }{{"latest", ""}, {"2025-11-25", "2025-11-25"}}

func TestElicitationRoutedToTheEditor(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			m := newTestManager(t, Options{Elicit: func(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
				mu.Lock()
				seen = append(seen, server+"|"+req.Message+"|"+fmt.Sprint(ctx.Value(sessionKey{})))
				mu.Unlock()
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "forty-two"}}, nil
			}})
			m.protocolVersion = p.version
			h := ready(t, m, "test", serverConfig(t))
			checkProtocol(t, h, p.version)
			ctx := context.WithValue(context.Background(), sessionKey{}, "session-1")
			res, err := h.Call(ctx, "ask", []byte(`{"text":"What is the answer?"}`), nil)
			if err != nil || text(res) != "action=accept answer=forty-two" {
				t.Fatalf("ask = %q, %v", text(res), err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 || seen[0] != "test|What is the answer?|session-1" {
				t.Errorf("Elicit saw %q, want one request from test with the question, in session-1's context", seen)
			}
		})
	}
}

func TestElicitationDeclinedWithoutAnEditor(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			m := newTestManager(t, Options{})
			m.protocolVersion = p.version
			h := ready(t, m, "test", serverConfig(t))
			res, err := call(t, h, "ask", `{"text":"Proceed?"}`, nil)
			if err != nil || text(res) != "action=decline answer=<nil>" {
				t.Fatalf("ask without Elicit = %q, %v; want a decline", text(res), err)
			}
		})
	}
}

func TestSamplingDeclinedUnlessEnabled(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			var asked []string
			var mu sync.Mutex
			m := newTestManager(t, Options{Sample: func(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
				mu.Lock()
				asked = append(asked, server+"|"+req.Messages[0].Content.(*sdk.TextContent).Text)
				mu.Unlock()
				return &sdk.CreateMessageResult{Role: "assistant", Model: "m", Content: &sdk.TextContent{Text: "a haiku"}}, nil
			}})
			m.protocolVersion = p.version
			off := ready(t, m, "test", serverConfig(t))
			_, err := call(t, off, "sample", `{"text":"write a haiku"}`, nil)
			if err == nil || !strings.Contains(err.Error(), `MCP server "test"`) || !strings.Contains(err.Error(), `set "sampling": true in its mcpServers entry`) {
				t.Errorf("sampling of a server without sampling: %v; want an error saying how to enable it", err)
			}
			cfg := serverConfig(t)
			cfg.Sampling = true
			on := ready(t, m, "writer", cfg)
			res, err := call(t, on, "sample", `{"text":"write a haiku"}`, nil)
			if err != nil || text(res) != "a haiku" {
				t.Errorf("sampling of a server with sampling: %q, %v", text(res), err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || asked[0] != "writer|write a haiku" {
				t.Errorf("Sample saw %q, want only writer's request", asked)
			}
		})
	}
}

func TestRootsAreTheWorkspaceFolders(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			a, b := t.TempDir(), filepath.Join(t.TempDir(), "with space")
			var mu sync.Mutex
			roots := []string{a}
			m := newTestManager(t, Options{Roots: func() []string {
				mu.Lock()
				defer mu.Unlock()
				return append([]string(nil), roots...)
			}})
			m.protocolVersion = p.version
			h := ready(t, m, "test", serverConfig(t))
			fileURI := func(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }
			res, err := call(t, h, "roots", `{}`, nil)
			if err != nil || text(res) != fileURI(a) {
				t.Fatalf("roots = %q, %v; want %s", text(res), err, fileURI(a))
			}
			mu.Lock()
			roots = []string{b, a}
			mu.Unlock()
			m.RootsChanged()
			res, err = call(t, h, "roots", `{}`, nil)
			got := strings.Split(text(res), "\n")
			if err != nil || len(got) != 2 || !strings.Contains(text(res), fileURI(a)) || !strings.Contains(text(res), "with%20space") {
				t.Fatalf("roots after a change = %q, %v; want both folders", text(res), err)
			}
		})
	}
}

// checkProtocol fails the test unless h's connection speaks version ("" for the SDK's
// latest, which is newer than 2025-11-25).
func checkProtocol(t *testing.T, h *Server, version string) {
	t.Helper()
	h.s.mu.Lock()
	got := h.s.conn.cs.InitializeResult().ProtocolVersion
	h.s.mu.Unlock()
	if version == "" && got <= "2025-11-25" || version != "" && got != version {
		t.Fatalf("the connection speaks protocol %s, want %q", got, version)
	}
}

// A server asking 30 questions at once in one call: the editor sees 10 (one at a time, see
// the next test), the other 20 fail at the server with an error saying why.
func TestElicitationAtMostTenPerCall(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			var mu sync.Mutex
			asked := 0
			m := newTestManager(t, Options{Elicit: func(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
				mu.Lock()
				asked++
				mu.Unlock()
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
			}})
			m.protocolVersion = p.version
			h := ready(t, m, "chatty", serverConfig(t))
			res, err := call(t, h, "ask", `{"count":30}`, nil)
			if err != nil {
				t.Fatalf("ask 30: %v", err)
			}
			// Requests of their own fail with an error; input requests of the call (protocol
			// 2026-07-28) are cancelled with the reason in _meta.pid.reason.
			want := "accepted 10, declined 0, cancelled 0, failed 20: "
			if p.version == "" {
				want = "accepted 10, declined 0, cancelled 20, failed 0: "
			}
			got := text(res)
			if !strings.HasPrefix(got, want) || !strings.Contains(got, `MCP server "chatty" already asked 10 questions during this tool call`) {
				t.Errorf("ask 30 = %q; want %q and the reason", got, want)
			}
			mu.Lock()
			n := asked
			mu.Unlock()
			if n != 10 {
				t.Errorf("the editor was asked %d questions, want 10", n)
			}
			// The limit is per call: the next call may ask again.
			res, err = call(t, h, "ask", `{"count":2}`, nil)
			if err != nil || !strings.HasPrefix(text(res), "accepted 2, declined 0, cancelled 0, failed 0") {
				t.Errorf("the next call's questions: %q, %v", text(res), err)
			}
		})
	}
}

// A server's questions reach the editor one at a time: the next waits for the answer.
func TestElicitationOneOpenAtATime(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			var mu sync.Mutex
			open, most := 0, 0
			second := make(chan struct{}) // closed when two questions are open at once
			m := newTestManager(t, Options{Elicit: func(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
				mu.Lock()
				open++
				if open > most {
					most = open
					if most == 2 {
						close(second)
					}
				}
				mu.Unlock()
				// Hold the question until a second one is open (never, when pid keeps them
				// apart) or a while has passed: a person takes longer to answer.
				t := time.NewTimer(300 * time.Millisecond)
				select {
				case <-second:
				case <-t.C:
				}
				t.Stop()
				mu.Lock()
				open--
				mu.Unlock()
				return &sdk.ElicitResult{Action: "decline"}, nil
			}})
			m.protocolVersion = p.version
			h := ready(t, m, "chatty", serverConfig(t))
			res, err := call(t, h, "ask", `{"count":3}`, nil)
			if err != nil || !strings.HasPrefix(text(res), "accepted 0, declined 3, cancelled 0, failed 0") {
				t.Fatalf("ask 3 = %q, %v", text(res), err)
			}
			mu.Lock()
			defer mu.Unlock()
			if most != 1 {
				t.Errorf("%d questions of one server were open at once, want 1", most)
			}
		})
	}
}
