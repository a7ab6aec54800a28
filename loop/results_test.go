package loop_test

// Tests that a batch's tool-result messages are built once, where the transcript keeps them:
// the message a ToolEnd carries, the one its MessageStart/MessageEnd announce, the one in
// TurnEnd's results and the one the next model call sees are the same message, not copies
// (each copy of a 168-byte message per call was garbage the collector paid for, more so as a
// run grows: docs/performance.md, issue 21).

import (
	"context"
	"strconv"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/toolexec"
)

// lastSeen is a provider that plays a script and records where the last message of each
// request it gets lives.
type lastSeen struct {
	*llm.ScriptedProvider
	last []*llm.Message
}

func (p *lastSeen) Stream(ctx context.Context, req *llm.Request, sink llm.StreamSink) llm.Message {
	p.last = append(p.last, &req.Messages[len(req.Messages)-1])
	return p.ScriptedProvider.Stream(ctx, req, sink)
}

func TestToolResultsAreBuiltWhereTheTranscriptKeepsThem(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			// Enough turns for the transcript to grow several times (its first room is 16).
			const turns, k = 12, 3
			var script []llm.Turn
			for n := range turns {
				var blocks []llm.Content
				for j := range k {
					blocks = append(blocks, tc("c"+strconv.Itoa(n)+"_"+strconv.Itoa(j), "echo", `{}`))
				}
				script = append(script, calls(blocks...))
			}
			prov := &lastSeen{ScriptedProvider: llm.NewScript(append(script, text("done"))...)}

			ends := map[string]*llm.Message{}
			announced := map[string]*llm.Message{}
			var turnResults []*llm.Message
			sink := func(e event.Event) {
				switch e := e.(type) {
				case event.ToolEnd:
					ends[e.ToolCallID] = e.Message
				case event.MessageEnd:
					if e.Message.Role == llm.RoleToolResult {
						announced[e.Message.ToolCallID] = e.Message
					}
				case event.TurnEnd:
					for i := range e.ToolResults {
						turnResults = append(turnResults, &e.ToolResults[i])
					}
				}
			}
			tb := box(t, echoTool("echo", nil))
			cfg := &loop.Config{Provider: prov, Tools: activate(t, tb, "echo"), ToolExecution: mode, Emit: sink}
			res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("go")})
			if res.StopReason != llm.StopEnd || len(res.Messages) != 1+turns*(1+k)+1 {
				t.Fatalf("run ended %q with %d messages", res.StopReason, len(res.Messages))
			}
			if len(turnResults) != turns*k || len(prov.last) != turns+1 {
				t.Fatalf("%d results in TurnEnd, %d model calls", len(turnResults), len(prov.last))
			}
			for i, m := range turnResults {
				id := m.ToolCallID
				if ends[id] != m || announced[id] != m {
					t.Errorf("call %s: ToolEnd's message %p, MessageEnd's %p, TurnEnd's %p: want one message, not copies", id, ends[id], announced[id], m)
				}
				if m.Role != llm.RoleToolResult || m.Text() != "echo: {}" {
					t.Errorf("call %s: result %q %q", id, m.Role, m.Text())
				}
				if i%k == k-1 && prov.last[i/k+1] != m {
					t.Errorf("call %s, the last of its turn: the next model call got a copy of it (%p), not the message (%p)", id, prov.last[i/k+1], m)
				}
			}
		})
	}
}
