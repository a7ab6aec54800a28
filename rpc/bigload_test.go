// This file tests loading a big saved session with the real daemon: session/load answers in
// pages (no frame much larger than a page), session/messages gives the rest, and the
// daemon's peak memory stays within twice the file's size over what it used before (not
// measured with -race, whose daemon's shadow memory is several times the heap). PID_BIGLOAD_MB
// sets the file's size: 64 by default, 8 with -race (docs/performance.md used 200).

package rpc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

// writeBigSession writes a session of about mb megabytes in the state folder of env, in
// cwd: turns of a user message, an assistant message with a tool call, a result of 100 KB
// of text with newlines and quotes (escaped on disk), and an answer. It returns the
// session's id, its file's size and the number of its items.
func writeBigSession(t *testing.T, env []string, cwd string, mb int) (id string, size int64, items int) {
	t.Helper()
	state := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	st, err := store.Open(filepath.Join(state, "pid", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := st.Create(store.Header{Cwd: cwd, Model: []byte(`{"provider":"script","turns":[{"content":[{"type":"text","text":"more"}]}]}`), Tools: []string{"read", "write", "edit", "bash", "grep", "find", "ls"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := strings.Repeat(`x := "quoted"; y = a\b`, 4) + "\n"
	result := strings.Repeat(line, 100<<10/len(line))
	for n := 0; ; n++ {
		call := fmt.Sprintf("call_%d", n)
		msgs := []llm.Message{
			llm.NewUser(fmt.Sprintf("turn %d: show me the file", n)),
			{Role: llm.RoleAssistant, Content: []llm.Content{{Type: llm.ContentToolCall, ID: call, Name: "read", Arguments: []byte(`{"path":"a.go"}`)}}, StopReason: llm.StopToolUse, Timestamp: 1},
			{Role: llm.RoleToolResult, ToolCallID: call, ToolName: "read", Content: []llm.Content{llm.Text(fmt.Sprintf("%d\n%s", n, result))}, Timestamp: 2},
			{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text(fmt.Sprintf("answer %d", n))}, StopReason: llm.StopEnd, Timestamp: 3},
		}
		for i := range msgs {
			if _, err := f.Append(store.Entry{Kind: store.KindMessage, Message: &msgs[i]}); err != nil {
				t.Fatal(err)
			}
		}
		items += len(msgs)
		fi, err := os.Stat(f.Path())
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() >= int64(mb)<<20 {
			return f.ID(), fi.Size(), items
		}
	}
}

// procStatus returns a field of /proc/PID/status in kB.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func TestLoadBigSessionInPages(t *testing.T) {
	mb := 64
	if testRace() {
		mb = 8
	}
	if v, err := strconv.Atoi(os.Getenv("PID_BIGLOAD_MB")); err == nil && v > 0 {
		mb = v
	}
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	sid, size, total := writeBigSession(t, env, ws, mb)

	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	before := procStatus(t, d.pid, "VmRSS")
	start := time.Now()
	id := d.request("session/load", obj{"sessionId": sid})
	m := d.response(id)
	took := time.Since(start)
	if m.get("error").Exists() {
		t.Fatalf("session/load: %s", m.get("error").Raw)
	}
	afterLoad := procStatus(t, d.pid, "VmHWM")
	first := m.get("result.firstIndex").Int()
	pages, biggest := 1, len(m.raw)
	got := int(int64(len(m.get("result.messages").Array())))
	for at := first; at > 0; {
		p := d.call("session/messages", obj{"sessionId": sid, "before": at})
		n := len(p.Get("messages").Array())
		next := p.Get("firstIndex").Int()
		if n == 0 || next != at-int64(n) {
			t.Fatalf("session/messages before %d: %d messages, firstIndex %d", at, n, next)
		}
		if len(p.Raw) > biggest {
			biggest = len(p.Raw)
		}
		if at == 1 || next == 0 {
			if u := p.Get("messages.0.content.0.text").String(); u != "turn 0: show me the file" {
				t.Errorf("the first item is %q", u)
			}
		}
		got += n
		at = next
		pages++
	}
	peak := procStatus(t, d.pid, "VmHWM")
	t.Logf("session/load answered in %v (all pages in %v); file %.1f MB, %d items in %d pages, largest frame %.1f MB; daemon RSS before the load %.1f MB, peak %.1f MB after session/load, %.1f MB after every page (%.2fx the file over the RSS before)",
		took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), float64(size)/(1<<20), total, pages, float64(biggest)/(1<<20), float64(before)/1024, float64(afterLoad)/1024, float64(peak)/1024, float64(peak-before)*1024/float64(size))
	if got != total {
		t.Errorf("the pages hold %d items, the session %d", got, total)
	}
	if first == 0 {
		t.Errorf("session/load of a %d MB session answered with every item in one frame of %d bytes", mb, len(m.raw))
	}
	if biggest > loadPageBytes+256<<10 {
		t.Errorf("a frame of %d bytes, more than a page (%d) and one item", biggest, loadPageBytes)
	}
	if !testRace() && (peak-before)*1024 > 2*size {
		t.Errorf("peak RSS %d kB, %d kB over the %d kB before the load: more than twice the file (%d bytes)", peak, peak-before, before, size)
	}
	stopDaemon(t, d)
}
