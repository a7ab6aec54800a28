package rpc

// A model's tool call with megabytes of arguments does not flood the editor: every message
// that carries the call has its arguments elided past elide.MaxArgs (the short members
// kept, "$elided" saying what was left out), and a stream of them stops after the limit
// (issue 19: 10 MB of nested arguments wrote 170 MB to the editor).

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/elide"
)

// bigArgs is a JSON object of about size bytes: a short path and a long, deeply nested
// junk member.
func bigArgs(size int) string {
	var b strings.Builder
	b.WriteString(`{"path":"a.txt","junk":`)
	for range 50 {
		b.WriteString(`{"a":[`)
	}
	for b.Len() < size {
		b.WriteString(`{"k":"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv","n":[1,[2,[3]]]},`)
	}
	b.WriteString(`0`)
	for range 50 {
		b.WriteString(`]}`)
	}
	b.WriteString(`}`)
	return b.String()
}

// checkElided fails the test unless args (as the editor got them) keep the path and say
// that the junk of n bytes was left out.
func checkElided(t *testing.T, where string, args json.RawMessage, n int) {
	t.Helper()
	var v struct {
		Path string `json:"path"`
		E    struct {
			Bytes   int      `json:"bytes"`
			Omitted []string `json:"omitted"`
		} `json:"$elided"`
	}
	if err := json.Unmarshal(args, &v); err != nil || v.Path != "a.txt" || v.E.Bytes != n || fmt.Sprint(v.E.Omitted) != "[junk]" {
		t.Errorf("%s: arguments %.200s (%d bytes; %v), want the path kept and the junk of %d bytes elided", where, args, len(args), err, n)
	}
}

func TestLongToolArgumentsAreElidedToTheEditor(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	args := bigArgs(1 << 20)
	sid := d.newSession(obj{"model": scriptModel(turn(toolCall("c1", "read", json.RawMessage(args))), turn(text("done")))})
	before := len(d.snapshot())
	res := d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	total := 0
	for _, m := range d.snapshot()[before:] {
		total += len(m.raw)
		switch m.method() {
		case "toolStart":
			checkElided(t, "toolStart", json.RawMessage(m.get("params.args").Raw), len(args))
		case "messageEnd", "messageUpdate":
			if c := m.get("params.message.content.0"); c.Get("type").String() == "toolCall" {
				checkElided(t, m.method(), json.RawMessage(c.Get("arguments").Raw), len(args))
			}
		}
	}
	checkElided(t, "the prompt's result", json.RawMessage(res.Get("messages.1.content.0.arguments").Raw), len(args))
	// Before: the arguments went whole in the stream, at its block end, in messageEnd,
	// toolStart, turnEnd, agentEnd and the result: 7 MB.
	if total > 128<<10 {
		t.Errorf("the run wrote %d bytes to the editor for a call of %d bytes of arguments, want at most 128 KB", total, len(args))
	}
	t.Logf("%d bytes of arguments: %d bytes to the editor", len(args), total)
}

// Streamed in 1,000 fragments, a call's arguments reach the editor as far as the limit,
// then one messageUpdate says the rest is elided; no more are sent for that call.
func TestStreamedLongToolArgumentsStopAtTheLimit(t *testing.T) {
	args := bigArgs(1 << 20)
	const piece = 1 << 10
	steps := []streamStep{sseChunk(obj{"role": "assistant", "content": ""}, nil), sseChunk(callFragment(0, "call_big", "read", ""), nil)}
	for i := 0; i < len(args); i += piece {
		steps = append(steps, sseChunk(callFragment(0, "", "", args[i:min(i+piece, len(args))]), nil))
	}
	steps = append(steps, sseChunk(obj{}, "tool_calls"), sseDone)
	srv := newFakeOpenAI(t, sseAnswer(steps...), sseAnswer(sseChunk(obj{"role": "assistant", "content": "done"}, nil), sseChunk(obj{}, "stop"), sseDone))
	d := startProcess(t, processOptions{Env: e2eEnv})
	d.initialize(nil)
	sid := d.newSession(obj{"model": e2eModel(srv)})
	before := len(d.snapshot())
	d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	deltas, elided, streamed := 0, 0, 0
	for _, m := range d.snapshot()[before:] {
		if m.method() != "messageUpdate" || m.get("params.delta.type").String() != "toolcall_delta" {
			continue
		}
		deltas++
		streamed += len(m.get("params.delta.delta").String())
		if m.get("params.delta.elided").Bool() {
			elided++
		}
	}
	if elided != 1 || streamed > elide.MaxArgs+piece || deltas > elide.MaxArgs/piece+2 {
		t.Errorf("%d toolcall_delta notifications (%d elided) streamed %d bytes of %d; want the stream to stop at %d bytes with one elided step", deltas, elided, streamed, len(args), elide.MaxArgs)
	}
	stopDaemon(t, d)
}
