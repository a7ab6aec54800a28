//go:build linux

package tools_test

// What a background job costs pid: the time from bash {background: true, waitFor} to its
// result when the command prints its ready line at once, against a foreground call of the
// same command (the command's own start: the sandbox's helper, the shell). docs/performance.md
// quotes them.
//
//	go test -run '^$' -bench 'Job' -benchtime 100x ./tools/

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// benchCaller returns a call function on a fresh sandboxed workspace, whose holder and
// spare helper are started already.
func benchCaller(b *testing.B) func(name, args string) result {
	if c := sandbox.Probe(); !c.Available {
		b.Skipf("no sandbox: %s", c.Reason)
	}
	ws, err := tools.NewWorkspace(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	tb, err := toolexec.NewToolbox(tools.New(ws)...)
	if err != nil {
		b.Fatal(err)
	}
	set, _ := tb.Activate(tb.Names()...)
	call := func(name, args string) result {
		return runIn(set, llm.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)})[0]
	}
	call("bash", `{"command":"true"}`)
	return call
}

// BenchmarkJobStartWaitFor: one job per op, started and waited for its ready line; the
// kill after it is not timed.
func BenchmarkJobStartWaitFor(b *testing.B) {
	call := benchCaller(b)
	for b.Loop() {
		r := call("bash", `{"command":"echo ready; exec sleep 1000","background":true,"waitFor":"^ready$","waitMs":60000}`)
		b.StopTimer()
		d, ok := r.details.(tools.JobDetails)
		if r.isError || !ok || d.Matched == nil || !*d.Matched {
			b.Fatal(r.text)
		}
		call("job_kill", `{"jobId":"`+d.JobID+`"}`)
		b.StartTimer()
	}
}

// BenchmarkJobForegroundSame: the same command in the foreground (echo ready, then exit).
func BenchmarkJobForegroundSame(b *testing.B) {
	call := benchCaller(b)
	for b.Loop() {
		if r := call("bash", `{"command":"echo ready"}`); r.isError {
			b.Fatal(r.text)
		}
	}
}
