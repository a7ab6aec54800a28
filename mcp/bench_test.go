package mcp

// Benchmarks for the targets: the overhead of an MCP call through pid against the
// same call made with the SDK's client directly (target: at most 1.2x), and tool_search
// over 1,000 deferred tools (target: under 1 ms).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkSession connects the SDK's own client to a new test server process, the way a
// program without pid would (CommandTransport).
func sdkSession(b *testing.B) *sdk.ClientSession {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serverEnv+"=1", "GORACE=atexit_sleep_ms=0")
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// pidServer starts the test server through a Manager and waits until it is ready.
func pidServer(b *testing.B) *Server {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	m := NewManager(Options{Linger: -1})
	b.Cleanup(m.Close)
	h := m.Acquire("bench", ServerConfig{Command: exe, Env: map[string]string{serverEnv: "1", "GORACE": "atexit_sleep_ms=0"}})
	b.Cleanup(h.Release)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := h.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkCallRoundTrip times one echo call: through pid's Server.Call, and through the
// SDK's ClientSession.CallTool on a server process of the same binary. Compare the two
// ns/op; BenchmarkCallOverhead measures their ratio directly.
func BenchmarkCallRoundTrip(b *testing.B) {
	ctx := context.Background()
	b.Run("pid", func(b *testing.B) {
		h := pidServer(b)
		args := json.RawMessage(`{"text":"hello"}`)
		b.ResetTimer()
		for b.Loop() {
			if _, err := h.Call(ctx, "echo", args, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		cs := sdkSession(b)
		b.ResetTimer()
		for b.Loop() {
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCallOverhead alternates a call through pid and the same call made directly
// with the SDK (each on its own server process of the same binary), so that both see the
// same machine load, and reports the ratio of their total times (pid/sdk).
func BenchmarkCallOverhead(b *testing.B) {
	ctx := context.Background()
	h := pidServer(b)
	cs := sdkSession(b)
	args := json.RawMessage(`{"text":"hello"}`)
	var pidTime, sdkTime time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := h.Call(ctx, "echo", args, nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		pidTime += t1.Sub(t0)
		sdkTime += t2.Sub(t1)
	}
	b.ReportMetric(float64(pidTime)/float64(sdkTime), "pid/sdk")
	b.ReportMetric(float64(pidTime.Nanoseconds())/float64(b.N), "pid-ns/call")
	b.ReportMetric(float64(sdkTime.Nanoseconds())/float64(b.N), "sdk-ns/call")
}

// thousandTools are 1,000 tools over 20 servers with names and descriptions of a usual
// length (about 20 words).
func thousandTools() []Tool {
	verbs := []string{"create", "list", "get", "update", "delete", "search", "read", "write", "archive", "sync"}
	nouns := []string{"issue", "pullRequest", "file", "comment", "channel", "message", "ticket", "page", "record", "dashboard"}
	var tools []Tool
	for s := range 20 {
		server := fmt.Sprintf("server%02d", s)
		for i := range 50 {
			v, n := verbs[i%10], nouns[(i/10+s)%10]
			orig := fmt.Sprintf("%s_%s_%d", v, n, i)
			desc := fmt.Sprintf("%s a %s in the %s workspace. Returns the %s with its id, title, owner, labels and timestamps; fails when access is denied or the %s does not exist.", v, n, server, n, n)
			tools = append(tools, Tool{Name: ToolName(server, orig, nil), Server: server, Original: orig, Description: desc})
		}
	}
	return tools
}

// BenchmarkSearch1000 ranks 1,000 tools with an Index built once (how tool_search should
// keep them): target under 1 ms.
func BenchmarkSearch1000(b *testing.B) {
	ix := NewIndex(thousandTools())
	for b.Loop() {
		if got := ix.Search("update the dashboard of a workspace", 5); len(got) != 5 {
			b.Fatalf("%d results", len(got))
		}
	}
}

// BenchmarkSearch1000Unindexed is Search over 1,000 tools, building the index each time.
func BenchmarkSearch1000Unindexed(b *testing.B) {
	tools := thousandTools()
	for b.Loop() {
		if got := Search(tools, "update the dashboard of a workspace", 5); len(got) != 5 {
			b.Fatalf("%d results", len(got))
		}
	}
}
