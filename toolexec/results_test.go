package toolexec_test

// Tests of Batch.Results: the tool-result messages are built in the caller's room when it
// has enough, each once (the ToolEnd's message is the one the outcome holds), and in a slice
// of the batch's own otherwise.

import (
	"context"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

func TestResultsAreBuiltInTheCallersRoom(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		for _, room := range []int{3, 2, 0} {
			ends := map[string]*llm.Message{}
			sink := func(e event.Event) {
				if e, ok := e.(event.ToolEnd); ok {
					ends[e.ToolCallID] = e.Message
				}
			}
			buf := make([]llm.Message, 1, 1+room)
			buf[0] = llm.NewUser("kept")
			dst := buf[1:1]
			out := toolexec.Run(context.Background(), &toolexec.Config{Mode: mode, Emit: sink}, toolexec.Batch{
				Calls:   []llm.ToolCall{tc("a", "echo", `{"path":"a"}`), tc("b", "echo", `{"path":"b"}`), tc("c", "echo", `{"path":"c"}`)},
				Tools:   active(t, echoTool("echo")),
				Results: dst,
			})
			diff(t, "results", []string{"a", "b", "c"}, ids(out.Messages))
			inRoom := cap(buf) > 1 && &buf[:2][1] == &out.Messages[0]
			if inRoom != (room >= 3) {
				t.Errorf("%s, room for %d: results built in the caller's room: %v", mode, room, inRoom)
			}
			if buf[0].Role != llm.RoleUser || buf[0].Text() != "kept" {
				t.Errorf("%s, room for %d: the message before the room changed: %+v", mode, room, buf[0])
			}
			for i := range out.Messages {
				if m := &out.Messages[i]; ends[m.ToolCallID] != m {
					t.Errorf("%s, room for %d: call %s's ToolEnd carries a copy of its result message", mode, room, m.ToolCallID)
				}
			}
		}
	}
}
