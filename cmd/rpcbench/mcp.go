// This file times an MCP tool call through the daemon against the same call made directly
// with the MCP Go SDK's client, on the test server pidtestmcp (built here).

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// mcpFigures are the medians, in microseconds, of one echo call made three ways.
type mcpFigures struct {
	direct  float64 // the SDK's client straight to the server: the floor for any MCP client
	viaPID  float64 // tools/execute of mcp__t__echo: editor -> pid -> server and back
	pidNoop float64 // tools/execute of a scripted tool that answers at once: pid's own part
}

// mcpRoundTrip builds pidtestmcp and times n calls of its echo tool each way, in rounds
// that alternate the three so that they share the machine's load.
func mcpRoundTrip(bin string, n int) (mcpFigures, error) {
	dir, err := os.MkdirTemp("", "rpcbench-mcp")
	if err != nil {
		return mcpFigures{}, err
	}
	defer os.RemoveAll(dir)
	server := filepath.Join(dir, "pidtestmcp")
	if out, err := exec.Command("go", "build", "-o", server, "github.com/pid-agent/pid/mcp/internal/testserver/cmd/pidtestmcp").CombinedOutput(); err != nil {
		return mcpFigures{}, fmt.Errorf("building pidtestmcp: %v\n%s", err, out)
	}

	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "rpcbench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(server)}, nil)
	if err != nil {
		return mcpFigures{}, err
	}
	defer cs.Close()

	p, err := start(bin)
	if err != nil {
		return mcpFigures{}, err
	}
	defer p.stop()
	sid, err := p.init(false, map[string]any{
		"mcpServers":    map[string]any{"t": map[string]any{"command": server, "load": "eager"}},
		"permissions":   map[string]any{"tools": map[string]any{"mcp__t__*": "allow"}},
		"scriptedTools": []any{map[string]any{"name": "noop", "steps": []any{map[string]any{"result": map[string]any{"content": []any{text("hello")}}}}}},
	})
	if err != nil {
		return mcpFigures{}, err
	}
	for {
		b, err := p.read()
		if err != nil {
			return mcpFigures{}, err
		}
		if gjson.GetBytes(b, "method").String() == "mcp/serverStatus" && gjson.GetBytes(b, "params.status").String() == "ready" {
			break
		}
	}

	id := 100
	execute := func(tool string, args map[string]any) (time.Duration, error) {
		id++
		t := time.Now()
		p.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/execute", "params": map[string]any{
			"sessionId": sid, "toolCalls": []any{map[string]any{"id": "c", "name": tool, "arguments": args}}}})
		b, err := p.until(id)
		d := time.Since(t)
		if err != nil {
			return 0, err
		}
		if r := gjson.GetBytes(b, "result.messages.0"); r.Get("isError").Bool() || r.Get("content.0.text").String() != "hello" {
			return 0, fmt.Errorf("%s: %s", tool, r.Raw)
		}
		return d, nil
	}
	args := map[string]any{"text": "hello"}
	var direct, via, noop []time.Duration
	const round = 100
	for done := -round; done < n; done += round { // the first round warms up
		keep := done >= 0
		for range round {
			t := time.Now()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)})
			d := time.Since(t)
			if err != nil || res.IsError {
				return mcpFigures{}, fmt.Errorf("direct echo: %v", err)
			}
			if keep {
				direct = append(direct, d)
			}
		}
		for range round {
			d, err := execute("mcp__t__echo", args)
			if err != nil {
				return mcpFigures{}, err
			}
			if keep {
				via = append(via, d)
			}
		}
		for range round {
			d, err := execute("noop", map[string]any{})
			if err != nil {
				return mcpFigures{}, err
			}
			if keep {
				noop = append(noop, d)
			}
		}
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Nanoseconds()) / 1000
	}
	return mcpFigures{direct: median(direct), viaPID: median(via), pidNoop: median(noop)}, nil
}
