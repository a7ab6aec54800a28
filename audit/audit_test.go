package audit_test

// Tests of the audit log (real files under a per-test XDG_STATE_HOME), Starts, and Chain.

import (
	"go.uber.org/goleak"

	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pid-agent/pid/audit"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/redact"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// stateEnv points XDG_STATE_HOME (and HOME) at a fresh folder and returns the state folder.
func stateEnv(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	state := filepath.Join(root, "state")
	t.Setenv("XDG_STATE_HOME", state)
	return state
}

// readLines returns the log's lines, each decoded.
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", len(out)+1, err, sc.Bytes())
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func openLog(t *testing.T) *audit.Log {
	t.Helper()
	l, err := audit.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestAuditHookWritesOneLinePerCall(t *testing.T) {
	state := stateEnv(t)
	l := openLog(t)
	want := filepath.Join(state, "pid", "audit.log")
	if l.Path() != want {
		t.Fatalf("path %q, want %q", l.Path(), want)
	}
	if fi, _ := os.Stat(want); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(want)); di.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v", di.Mode().Perm())
	}

	starts := audit.NewStarts()
	sink := starts.Sink(nil)
	hook := l.Hook(audit.Options{Session: "s1", Started: starts.Started})

	// The call started 30ms ago (the Sink marked it at ToolStart).
	sink(event.ToolStart{ToolCallID: "c1", ToolName: "bash"})
	startedAt, _ := starts.Started("c1")
	for time.Since(startedAt) < 30*time.Millisecond {
		time.Sleep(time.Millisecond) // waits for the clock, not for another goroutine
	}
	args := json.RawMessage("{\n  \"command\": \"ls -la\",\n  \"timeout\": 5\n}")
	in := toolexec.AfterInput{
		Call:    llm.ToolCall{ID: "c1", Name: "bash", Arguments: args},
		Result:  toolexec.TextResult("out"),
		IsError: true,
	}
	before := time.Now().UTC()
	o, err := hook(context.Background(), in)
	if o != nil || err != nil {
		t.Fatalf("the audit hook must keep the result: %+v %v", o, err)
	}
	// A call whose start is unknown has no duration.
	in.Call = llm.ToolCall{ID: "c2", Name: "read"}
	in.IsError = false
	if o, err := hook(context.Background(), in); o != nil || err != nil {
		t.Fatal(o, err)
	}
	sink(event.ToolEnd{ToolCallID: "c1"})
	if starts.Len() != 0 {
		t.Errorf("ToolEnd must forget the call; %d marked", starts.Len())
	}

	lines := readLines(t, want)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	a := lines[0]
	if a["session"] != "s1" || a["tool"] != "bash" || a["toolCallId"] != "c1" || a["isError"] != true {
		t.Errorf("line 1: %v", a)
	}
	if got, _ := json.Marshal(a["args"]); string(got) != `{"command":"ls -la","timeout":5}` {
		t.Errorf("args: %s", got)
	}
	ts, err := time.Parse(time.RFC3339Nano, a["time"].(string))
	if err != nil || ts.Before(before.Add(-time.Second)) || !strings.HasSuffix(a["time"].(string), "Z") {
		t.Errorf("time %v (%v)", a["time"], err)
	}
	if d, ok := a["durationMs"].(float64); !ok || d < 30 || d > 60_000 {
		t.Errorf("durationMs %v, want at least 30", a["durationMs"])
	}
	b := lines[1]
	if _, ok := b["durationMs"]; ok {
		t.Errorf("unknown start must leave durationMs out: %v", b)
	}
	if got, _ := json.Marshal(b["args"]); string(got) != `{}` || b["isError"] != false {
		t.Errorf("line 2: %v", b)
	}
}

func TestAuditConcurrentWritersDoNotInterleave(t *testing.T) {
	stateEnv(t)
	l := openLog(t)
	hook := l.Hook(audit.Options{Session: "s", MaxString: -1})
	const writers, per = 8, 25
	big := strings.Repeat("x", 8<<10) // lines larger than PIPE_BUF
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				args, _ := json.Marshal(map[string]string{"w": fmt.Sprint(w), "i": fmt.Sprint(i), "pad": big})
				_, _ = hook(context.Background(), toolexec.AfterInput{Call: llm.ToolCall{ID: fmt.Sprintf("%d-%d", w, i), Name: "t", Arguments: args}})
			}
		}()
	}
	wg.Wait()
	lines := readLines(t, l.Path())
	if len(lines) != writers*per {
		t.Fatalf("%d lines, want %d", len(lines), writers*per)
	}
	seen := map[string]bool{}
	for _, m := range lines {
		id := m["toolCallId"].(string)
		a := m["args"].(map[string]any)
		if id != fmt.Sprintf("%s-%s", a["w"], a["i"]) || a["pad"] != big || seen[id] {
			t.Fatalf("line for %s is not whole or repeated", id)
		}
		seen[id] = true
	}
}

func TestAuditArgsRedactedAndCapped(t *testing.T) {
	stateEnv(t)
	l := openLog(t)
	hook := l.Hook(audit.Options{Session: "s", Redactor: redact.NewRedactor(nil), MaxString: 64})
	args, _ := json.Marshal(map[string]any{
		"command": "curl -H 'Authorization: Bearer abcdef0123456789' x",
		"content": "a" + strings.Repeat("é", 40), // 81 bytes: byte 64 is inside a rune
		"n":       json.Number("12345678901234567890"),
	})
	_, _ = hook(context.Background(), toolexec.AfterInput{Call: llm.ToolCall{ID: "c", Name: "bash", Arguments: args}})
	_, _ = hook(context.Background(), toolexec.AfterInput{Call: llm.ToolCall{ID: "d", Name: "bash", Arguments: json.RawMessage(`not json`)}})
	data, _ := os.ReadFile(l.Path())
	text := string(data)
	if strings.Contains(text, "abcdef0123456789") {
		t.Fatalf("secret logged: %s", text)
	}
	lines := readLines(t, l.Path())
	a := lines[0]["args"].(map[string]any)
	if !strings.Contains(a["command"].(string), "[REDACTED:authorization]") {
		t.Errorf("command: %v", a["command"])
	}
	if c := a["content"].(string); c != "a"+strings.Repeat("é", 31)+"…[81 bytes]" {
		t.Errorf("content %q", c)
	}
	if !strings.Contains(text, "12345678901234567890") {
		t.Errorf("a large number lost precision: %s", text)
	}
	if lines[1]["args"] != "not json" {
		t.Errorf("arguments that are not JSON are logged as a string: %v", lines[1]["args"])
	}
}

func TestAuditRecordAfterCloseAndReopen(t *testing.T) {
	stateEnv(t)
	l, err := audit.Open("")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(audit.Entry{Session: "s", Tool: "a", ToolCallID: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(audit.Entry{Tool: "b"}); !errors.Is(err, audit.ErrClosed) {
		t.Fatalf("record after close: %v", err)
	}
	// The hook reports the failure and still keeps the result.
	var got error
	hook := l.Hook(audit.Options{OnError: func(err error) { got = err }})
	if o, err := hook(context.Background(), toolexec.AfterInput{Call: llm.ToolCall{ID: "x", Name: "t"}}); o != nil || err != nil {
		t.Fatal(o, err)
	}
	if !errors.Is(got, audit.ErrClosed) {
		t.Fatalf("OnError got %v", got)
	}
	// Reopening appends; an existing file with looser permissions is tightened.
	if err := os.Chmod(l.Path(), 0o644); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t)
	if err := l2.Record(audit.Entry{Tool: "c"}); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, l2.Path())
	if len(lines) != 2 || lines[0]["tool"] != "a" || lines[1]["tool"] != "c" {
		t.Fatalf("lines: %v", lines)
	}
	if fi, _ := os.Stat(l2.Path()); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}

// The decidedBy field quotes the bash part that decided; a secret in it is redacted like
// the same secret in args (issue 19: "session (export GITHUB_TOKEN=ghp_...)" was verbatim).
func TestAuditRedactsDecidedBy(t *testing.T) {
	state := stateEnv(t)
	l := openLog(t)
	token := "ghp_" + strings.Repeat("Z9y8", 9)
	cmd := "export GITHUB_TOKEN=" + token
	hook := l.Hook(audit.Options{
		Session: "s1", Redactor: redact.NewRedactor(nil),
		Decision: func(string) (string, string, bool) { return "allow", "session (" + cmd + ")", true },
	})
	args, _ := json.Marshal(map[string]string{"command": cmd})
	in := toolexec.AfterInput{Call: llm.ToolCall{ID: "c1", Name: "bash", Arguments: args}, Result: toolexec.TextResult("")}
	if _, err := hook(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(state, "pid", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), token) || strings.Contains(string(data), token[4:20]) {
		t.Fatalf("the token reached the audit log: %s", data)
	}
	lines := readLines(t, filepath.Join(state, "pid", "audit.log"))
	if by := lines[0]["decidedBy"]; by != "session (export GITHUB_TOKEN=[REDACTED:github-token])" {
		t.Errorf("decidedBy %q", by)
	}
	if got := audit.SanitizeText("session ("+cmd+")", redact.NewRedactor(nil)); strings.Contains(got, token) {
		t.Errorf("SanitizeText kept the token: %q", got)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// With Options.Later (as sessions use it), the hook's line is written after the call's
// ToolEnd has been passed on, so that the editor's toolEnd does not wait for the log, and
// before Sink returns, so that it is in the log before anything after the call's end.
func TestAuditLineAfterToolEnd(t *testing.T) {
	stateEnv(t)
	l := openLog(t)
	starts := audit.NewStarts()
	linesAtEnd := -1
	sink := starts.Sink(func(ev event.Event) {
		if _, ok := ev.(event.ToolEnd); ok {
			linesAtEnd = len(readLines(t, l.Path()))
		}
	})
	hook := l.Hook(audit.Options{Session: "s1", Started: starts.Started, Later: starts.Later})
	sink(event.ToolStart{ToolCallID: "c1", ToolName: "bash"})
	in := toolexec.AfterInput{Call: llm.ToolCall{ID: "c1", Name: "bash"}, Result: toolexec.TextResult("out"), IsError: true}
	if o, err := hook(context.Background(), in); o != nil || err != nil {
		t.Fatal(o, err)
	}
	sink(event.ToolEnd{ToolCallID: "c1"})
	if linesAtEnd != 0 {
		t.Errorf("the log had %d lines when the ToolEnd was passed on, want 0 (the line comes after it)", linesAtEnd)
	}
	lines := readLines(t, l.Path())
	if len(lines) != 1 || lines[0]["toolCallId"] != "c1" || lines[0]["isError"] != true || lines[0]["durationMs"] == nil {
		t.Fatalf("after the ToolEnd: %v, want the call's line with its result and duration", lines)
	}
}

// The paths the check after a sandboxed command put back (bash's
// details.sandbox.reverted) are in the call's line, on an error result too.
func TestAuditRecordsSandboxReverted(t *testing.T) {
	state := stateEnv(t)
	l := openLog(t)
	hook := l.Hook(audit.Options{Session: "s1"})
	det := tools.BashDetails{ExitCode: 1, Sandbox: &tools.SandboxDetails{Mode: "workspace-write", Reverted: []string{"/w/.envrc", "/w/sub/.git"}}}
	in := toolexec.AfterInput{Call: llm.ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"x"}`)},
		Result: toolexec.Result{Content: toolexec.TextResult("failed").Content, Details: det}, IsError: true}
	if _, err := hook(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	in.Call.ID, in.Result.Details = "c2", tools.BashDetails{Sandbox: &tools.SandboxDetails{Mode: "workspace-write"}}
	if _, err := hook(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, filepath.Join(state, "pid", "audit.log"))
	if got := fmt.Sprint(lines[0]["sandboxReverted"]); got != "[/w/.envrc /w/sub/.git]" {
		t.Errorf("sandboxReverted %s", got)
	}
	if _, ok := lines[1]["sandboxReverted"]; ok {
		t.Errorf("a call that reverted nothing has sandboxReverted: %v", lines[1])
	}
}
