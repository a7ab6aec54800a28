package rpc

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

// BenchmarkDiagnosticsWait measures how long an edit's result waits for the problems
// (docs/performance.md): the time from a write's toolExecutionStart to its toolEnd, as the
// client sees them, with no source of problems (the baseline: the write itself), with an
// editor that answers editor/diagnostics at once, and with pid's own client and the test
// server (testdata/lspserver; the first write, which starts the server, is left out and
// reported alone). Each iteration is one prompt whose model writes one file of the batch.
//
//	go test ./rpc -run '^$' -bench DiagnosticsWait -benchtime 50x
func BenchmarkDiagnosticsWait(b *testing.B) {
	for _, mode := range []string{"none", "editor", "own"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			d := startInProcess(b)
			caps := obj{}
			if mode == "editor" {
				caps["diagnostics"] = true
			}
			d.initialize(caps)
			n := b.N + 1
			var turns []obj
			for i := range n {
				turns = append(turns, turn(toolCall(fmt.Sprintf("w%d", i), "write", obj{"path": "a.tst", "content": fmt.Sprintf("line %d\nBROKEN\n", i)})), turn(text("ok")))
			}
			cfg := obj{"cwd": dir, "permissions": obj{"default": "allow"}, "model": scriptModel(turns...)}
			if mode == "own" {
				cfg["lsp"] = lspConfig
			}
			sid := d.newSession(cfg)
			var waits []time.Duration
			answered := map[string]bool{} // the editor/diagnostics requests answered
			var rounds []time.Duration    // editor: from the request's arrival to the toolEnd's
			b.ResetTimer()
			for i := range n {
				id := fmt.Sprintf("w%d", i)
				p := d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
				d.notification("toolExecutionStart", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == id })
				t0 := time.Now()
				var tr time.Time
				if mode == "editor" {
					req := d.await("editor/diagnostics", func(m *wireMsg) bool {
						return m.isRequest() && m.method() == "editor/diagnostics" && m.get("params.paths.0").String() != "" && !answered[m.id()]
					})
					answered[req.id()] = true
					tr = time.Now()
					d.answer(req, obj{"diagnostics": []obj{{"path": req.get("params.paths.0").String(), "range": obj{"start": obj{"line": 1, "character": 0}, "end": obj{"line": 1, "character": 6}}, "severity": 1, "message": "BROKEN"}}})
				}
				end := d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == id })
				waits = append(waits, time.Since(t0))
				if mode == "editor" {
					rounds = append(rounds, time.Since(tr))
				}
				if mode != "none" && end.get("params.result.content.#").Int() != 2 {
					b.Fatalf("no problems in %s", end.get("params.result").Raw)
				}
				d.result(p)
			}
			b.StopTimer()
			first := waits[0]
			waits = waits[1:]
			slices.Sort(waits)
			b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(waits[len(waits)*9/10].Microseconds())/1000, "ms-p90")
			b.ReportMetric(float64(first.Microseconds())/1000, "ms-first")
			if len(rounds) > 1 {
				rounds = rounds[1:]
				slices.Sort(rounds)
				b.ReportMetric(float64(rounds[len(rounds)/2].Microseconds())/1000, "ms-median-answer")
			}
			if os.Getenv("PID_BENCH_VERBOSE") != "" {
				b.Logf("%s: first %v, median %v over %d", mode, first, waits[len(waits)/2], len(waits))
			}
		})
	}
}
