package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/problems"
	"github.com/pid-agent/pid/session"
)

// timingFace records when each call's execution starts and ends (ToolExecutionStart,
// ToolEnd), and, when editor is set, answers editor/diagnostics at once with one error.
type timingFace struct {
	face
	editor bool
	mu     sync.Mutex
	start  map[string]time.Time
	waits  []time.Duration
}

func (f *timingFace) Emit(_ *session.Session, ev event.Event) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	switch e := ev.(type) {
	case event.ToolExecutionStart:
		f.start[e.ToolCallID] = now
	case event.ToolEnd:
		f.waits = append(f.waits, now.Sub(f.start[e.ToolCallID]))
	}
}

func (f *timingFace) ReportsDiagnostics() bool { return f.editor }

func (f *timingFace) Diagnostics(_ context.Context, _ *session.Session, paths []string, _ session.DiagnosticsWait) (session.Problems, error) {
	return session.Problems{Diagnostics: []problems.Diagnostic{{Path: paths[0], Severity: 1, Message: "BROKEN"}}}, nil
}

// BenchmarkEditDiagnosticsWait measures, inside pid, how long a write takes from its
// ToolExecutionStart to its ToolEnd: without a source of problems (the write alone), with
// an editor answering editor/diagnostics at once (no wire: the face's answer), and with pid's
// own client and the test server (testdata/lspserver), whose first write starts it and is
// reported alone (docs/performance.md).
//
//	go test ./session -run '^$' -bench EditDiagnosticsWait -benchtime 200x
func BenchmarkEditDiagnosticsWait(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "lspserver")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/pid-agent/pid/testdata/lspserver").CombinedOutput(); err != nil {
		b.Fatalf("building the test server: %v\n%s", err, out)
	}
	for _, mode := range []string{"none", "editor", "own"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			h := session.NewHost(session.HostOptions{})
			h.SetUp([]string{dir})
			defer h.Close()
			f := &timingFace{editor: mode == "editor", start: map[string]time.Time{}}
			cfg := session.Config{Cwd: dir, Permissions: json.RawMessage(`{"default":"allow"}`)}
			if mode == "own" {
				cfg.LSP = json.RawMessage(fmt.Sprintf(`{"test":{"command":[%q],"extensions":[".tst"]}}`, bin))
			}
			s, err := h.New(cfg, session.Options{Face: f})
			if err != nil {
				b.Fatal(err)
			}
			n := b.N + 1
			b.ResetTimer()
			for i := range n {
				args, _ := json.Marshal(map[string]string{"path": "a.tst", "content": fmt.Sprintf("line %d\nBROKEN\n", i)})
				out, err := s.Execute(context.Background(), []llm.ToolCall{{ID: fmt.Sprint("w", i), Name: "write", Arguments: args}}, "")
				if err != nil {
					b.Fatal(err)
				}
				if got := len(out.Messages[0].Content); mode != "none" && got != 2 {
					b.Fatalf("no problems in %+v", out.Messages[0])
				}
			}
			b.StopTimer()
			waits := f.waits
			first := waits[0]
			waits = waits[1:]
			slices.Sort(waits)
			b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(waits[len(waits)*9/10].Microseconds())/1000, "ms-p90")
			b.ReportMetric(float64(first.Microseconds())/1000, "ms-first")
		})
	}
}
