package mcp

// The Manager against the test server over real pipes: tools listed under pid's names,
// calls and their content, progress, cancellation, list_changed, crashes and restarts,
// sharing, stopping, and the server's own requests (elicitation, sampling, roots).

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/mcp/internal/testserver"
	"github.com/pid-agent/pid/toolexec"
)

func TestToolsListedUnderPidNames(t *testing.T) {
	m := newTestManager(t, Options{})
	h := ready(t, m, "test", serverConfig(t))
	byName := map[string]Tool{}
	var names []string
	for _, tl := range h.Tools() {
		byName[tl.Name] = tl
		names = append(names, tl.Name)
	}
	want := []string{"ask", "cancelled", "crash", "echo", "fail", "grow", "hang", "peek", "progress", "rich", "roots", "sample", "whoami"}
	if len(names) != len(want) {
		t.Fatalf("tools = %v, want %d of them", names, len(want))
	}
	for _, w := range want {
		tl, ok := byName["mcp__test__"+w]
		if !ok {
			t.Fatalf("no tool mcp__test__%s in %v", w, names)
		}
		if tl.Original != w || tl.Server != "test" || tl.Description == "" {
			t.Errorf("tool %s = %+v", tl.Name, tl)
		}
	}
	peek := byName["mcp__test__peek"]
	if peek.Annotations["readOnlyHint"] != true || peek.Annotations["title"] != "Peek" {
		t.Errorf("peek annotations = %v, want readOnlyHint true and title Peek", peek.Annotations)
	}
	if a := byName["mcp__test__echo"].Annotations; a != nil {
		t.Errorf("echo has annotations %v, want none", a)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(byName["mcp__test__echo"].InputSchema, &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil {
		t.Errorf("echo schema = %s (%v), want an object with a text property", byName["mcp__test__echo"].InputSchema, err)
	}
	if st := h.Status(); st.Status != StatusReady || st.Tools != len(want) || st.Name != "test" || st.Error != "" {
		t.Errorf("status = %+v", st)
	}
}

func TestCallMapsContent(t *testing.T) {
	m := newTestManager(t, Options{})
	cfg := serverConfig(t)
	cfg.Cwd = t.TempDir()
	cfg.Env["PID_MCP_TEST_VALUE"] = "from-config"
	h := ready(t, m, "test", cfg)

	res, err := call(t, h, "echo", `{"text":"hello"}`, nil)
	if err != nil || len(res.Content) != 1 || !reflect.DeepEqual(res.Content[0], llm.Text("hello")) || res.Details != nil {
		t.Fatalf("echo = %+v, %v; want one text block hello and no details", res, err)
	}
	// The same call as pid's pipeline makes it.
	i := slices.IndexFunc(h.Tools(), func(tl Tool) bool { return tl.Original == "echo" })
	tool := h.ExecTool(h.Tools()[i])
	if _, err := toolexec.NewToolbox(tool); err != nil || tool.Name != "mcp__test__echo" {
		t.Fatalf("ExecTool gave %q, which makes no toolbox: %v", tool.Name, err)
	}
	res, err = tool.Execute(context.Background(), toolexec.Call{Name: tool.Name, Args: json.RawMessage(`{"text":"via toolexec"}`)}, nil)
	if err != nil || text(res) != "via toolexec" {
		t.Fatalf("ExecTool's Execute = %q, %v", text(res), err)
	}

	res, err = call(t, h, "rich", `{}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Content{
		llm.Text("plain text"),
		{Type: llm.ContentImage, Data: base64.StdEncoding.EncodeToString(testserver.PNG()), MimeType: "image/png"},
		llm.Text("[audio (audio/wav, 12 bytes) not shown: pid passes no audio to the model]"),
		llm.Text("Resource link: file:///srv/notes.md\nName: notes\nDescription: Meeting notes"),
		llm.Text("embedded text"),
		llm.Text("[binary resource file:///srv/b.bin (application/octet-stream, 4 bytes) not shown]"),
	}
	if !reflect.DeepEqual(res.Content, want) {
		t.Errorf("rich content =\n%+v\nwant\n%+v", res.Content, want)
	}
	if d, ok := res.Details.(map[string]any); !ok || d["count"] != float64(6) || d["ok"] != true {
		t.Errorf("rich details = %#v, want structuredContent {count: 6, ok: true}", res.Details)
	}

	_, err = call(t, h, "fail", `{"text":"the disk is full"}`, nil)
	var te *ToolError
	if !errors.As(err, &te) || err.Error() != "the disk is full" || te.Server != "test" || te.Tool != "fail" {
		t.Errorf("fail = %v (%T), want a *ToolError with the text", err, err)
	}

	res, err = call(t, h, "whoami", `{"env":"PID_MCP_TEST_VALUE"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := res.Details.(map[string]any)
	if d["env"] != "from-config" || d["cwd"] != cfg.Cwd {
		t.Errorf("whoami details = %v, want env from-config and cwd %s", d, cfg.Cwd)
	}

	_, err = call(t, h, "nosuchtool", `{}`, nil)
	if err == nil || !strings.Contains(err.Error(), `MCP server "test"`) || !strings.Contains(err.Error(), "nosuchtool") {
		t.Errorf("unknown tool: %v, want an error naming the server and the tool", err)
	}
}

func TestProgressReachesOnUpdateBeforeTheResult(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) { testProgress(t, p.version) })
	}
}

func testProgress(t *testing.T, version string) {
	m := newTestManager(t, Options{})
	m.protocolVersion = version
	h := ready(t, m, "test", serverConfig(t))
	checkProtocol(t, h, version)
	for range 20 { // the order must hold every time, not by luck
		var mu sync.Mutex
		var got []event.Result
		res, err := call(t, h, "progress", `{"count":5}`, func(r event.Result) {
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
		})
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if err != nil || text(res) != "sent 5" {
			t.Fatalf("progress = %q, %v", text(res), err)
		}
		// Throttled (see progress_test.go): the first at once, then the latest; the final
		// state always arrives before the result.
		if n == 0 || n > 5 {
			t.Fatalf("%d updates before the result, want 1 to 5", n)
		}
		prev := 0
		for i, u := range got {
			p := u.Details.(Progress)
			step := int(p.Progress)
			wantText := strconv.Itoa(step) + "/5: step " + strconv.Itoa(step) + "\n"
			if step <= prev || p.Total != 5 || contentText(u.Content) != wantText || i == 0 && step != 1 || i == n-1 && step != 5 {
				t.Fatalf("update %d = %+v %q, want steps rising from 1 to 5 of 5", i, p, contentText(u.Content))
			}
			prev = step
		}
	}
}

func TestCancelReachesTheServer(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			m := newTestManager(t, Options{})
			m.protocolVersion = p.version
			testCancel(t, ready(t, m, "test", serverConfig(t)))
		})
	}
}

// testCancel cancels a hang call once it reported progress, and checks the server saw it.
func testCancel(t *testing.T, h *Server) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, "hang", json.RawMessage(`{}`), func(event.Result) { once.Do(func() { close(started) }) })
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("hang returned before it started: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call returned %v, want context.Canceled", err)
	}
	// The cancelled tool waits on the server until a hang call has seen its cancellation.
	res, err := call(t, h, "cancelled", `{}`, nil)
	if err != nil || text(res) != "cancelled 1" {
		t.Fatalf("cancelled = %q, %v; want the server to have seen one cancellation", text(res), err)
	}
}

func TestListChangedRefreshesTools(t *testing.T) {
	log := newStatusLog()
	m := newTestManager(t, Options{OnStatus: log.record})
	h := ready(t, m, "test", serverConfig(t))
	before := len(h.Tools())
	from := log.len()
	if _, err := call(t, h, "grow", `{"name":"grown"}`, nil); err != nil {
		t.Fatal(err)
	}
	st, _ := log.wait(t, "a tool list one longer", from, func(s ServerStatus) bool { return s.Tools == before+1 })
	if st.Status != StatusReady || st.Name != "test" {
		t.Errorf("status after list_changed = %+v", st)
	}
	if !slices.ContainsFunc(h.Tools(), func(tl Tool) bool { return tl.Name == "mcp__test__grown" && tl.Original == "grown" }) {
		t.Fatalf("Tools() has no mcp__test__grown after list_changed: %v", h.Tools())
	}
	res, err := call(t, h, "grown", `{"text":"new"}`, nil)
	if err != nil || text(res) != "new" {
		t.Errorf("the grown tool answered %q, %v", text(res), err)
	}
}

func TestCrashFailsTheCallWithStderrAndTheNextCallRestarts(t *testing.T) {
	log := newStatusLog()
	m := newTestManager(t, Options{OnStatus: log.record})
	cfg := serverConfig(t)
	h := ready(t, m, "test", cfg)
	first := serverPid(t, h)
	tools := len(h.Tools())
	from := log.len()

	_, err := call(t, h, "crash", `{"text":"disk quota exceeded in /var/x"}`, nil)
	if err == nil {
		t.Fatal("the crash call succeeded")
	}
	for _, want := range []string{`MCP server "test"`, "exit status 3", "during the call to crash", "pidtestmcp: about to crash", "disk quota exceeded in /var/x", "the next call starts it again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("crash error lacks %q:\n%v", want, err)
		}
	}
	st, _ := log.wait(t, "failed", from, func(s ServerStatus) bool { return s.Status == StatusFailed })
	if !strings.Contains(st.Error, "exit status 3") || !strings.Contains(st.Error, "disk quota exceeded") {
		t.Errorf("failed status error = %q", st.Error)
	}
	if st.Tools != tools || len(h.Tools()) != tools {
		t.Errorf("a crashed server lists %d tools (status %d), want its last %d", len(h.Tools()), st.Tools, tools)
	}
	if proctest.Alive(first) {
		t.Errorf("the crashed process %d is still there", first)
	}

	if err := h.WaitReady(context.Background()); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("WaitReady on the crashed server = %v, want its failure (WaitReady does not restart)", err)
	}
	// A session opening on the failed server starts it again in the background (no
	// backoff after a first failure).
	other := m.Acquire("test", cfg)
	defer other.Release()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := other.WaitReady(ctx); err != nil {
		t.Fatalf("Acquire did not start the failed server again: %v", err)
	}
	second := serverPid(t, h)
	if second == first {
		t.Fatalf("the next call ran in the crashed process %d", first)
	}
	if st := h.Status(); st.Status != StatusReady || st.Error != "" {
		t.Errorf("status after the restart = %+v", st)
	}

	// A second crash in a row: the next call restarts it after a backoff of a second.
	before := time.Now()
	if _, err := call(t, h, "crash", `{"text":"again"}`, nil); err == nil {
		t.Fatal("the second crash call succeeded")
	}
	third := serverPid(t, h)
	if waited := time.Since(before); third == second || waited < restartBase {
		t.Errorf("after a second crash the call restarted it in %v (process %d, was %d), want a backoff of %v", waited, third, second, restartBase)
	}
}

func TestSameConfigSharesOneProcess(t *testing.T) {
	m := newTestManager(t, Options{})
	cfg := serverConfig(t)
	a := ready(t, m, "test", cfg)
	b := ready(t, m, "test", cfg)
	if pa, pb := serverPid(t, a), serverPid(t, b); pa != pb {
		t.Errorf("two handles on the same config run in %d and %d, want one process", pa, pb)
	}
	if a.Status().ID != b.Status().ID {
		t.Errorf("shared handles have IDs %s and %s", a.Status().ID, b.Status().ID)
	}
	if n := len(serverProcs(t)); n != 1 {
		t.Errorf("%d server processes, want 1", n)
	}

	other := serverConfig(t, "-stderr", "another config")
	c := ready(t, m, "test", other)
	d := ready(t, m, "test2", cfg)
	pids := map[int]bool{serverPid(t, a): true, serverPid(t, c): true, serverPid(t, d): true}
	if len(pids) != 3 {
		t.Errorf("same config, another config and another name share processes: %v", pids)
	}
	if n := len(serverProcs(t)); n != 3 {
		t.Errorf("%d server processes, want 3", n)
	}
	if c.Status().ID == a.Status().ID || d.Status().ID == a.Status().ID {
		t.Error("different configs or names have the same ID")
	}
	if got := m.Servers(); len(got) != 3 || got[0].Name != "test" || got[2].Name != "test2" {
		t.Errorf("Servers() = %+v", got)
	}
}

func TestCloseLeavesNoProcessAndNoGoroutine(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	m := NewManager(Options{})
	a := m.Acquire("a", serverConfig(t))
	b := m.Acquire("b", serverConfig(t, "-stderr", "b"))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for _, h := range []*Server{a, b} {
		if err := h.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	pids := []int{serverPid(t, a), serverPid(t, b)}
	// A call in flight at Close ends with an error.
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := a.Call(ctx, "hang", json.RawMessage(`{}`), func(event.Result) { once.Do(func() { close(started) }) })
		done <- err
	}()
	<-started
	m.Close()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "pid is shutting down") {
		t.Errorf("the call in flight at Close returned %v", err)
	}
	for _, pid := range pids {
		if proctest.Alive(pid) {
			t.Errorf("server process %d outlived Close", pid)
		}
	}
	if n := serverProcs(t); len(n) != 0 {
		t.Errorf("server processes left after Close: %v", n)
	}
	goleak.VerifyNone(t, ignore)
	if _, err := call(t, a, "echo", `{}`, nil); err == nil || !strings.Contains(err.Error(), "pid is shutting down") {
		t.Errorf("a call after Close returned %v", err)
	}
	if h := m.Acquire("c", serverConfig(t)); h.Status().Status != StatusFailed {
		t.Errorf("Acquire after Close gave %+v", h.Status())
	}
	a.Release()
	b.Release()
}
