//go:build linux

// This file tests a session whose file stops growing (a full disk, simulated with the real
// daemon's RLIMIT_FSIZE): after the first failed write nothing more of the session is
// written but an unsaved marker, and session/load says where messages are missing.

package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"golang.org/x/sys/unix"
)

// sessionFile returns the path of session sid's file under the state folder of env.
func sessionFile(t *testing.T, env []string, sid string) string {
	t.Helper()
	state := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	matches, _ := filepath.Glob(filepath.Join(state, "pid", "sessions", "*", sid+".jsonl"))
	if len(matches) != 1 {
		t.Fatalf("session file of %s: %v", sid, matches)
	}
	return matches[0]
}

func TestFullDiskLeavesNoSilentHole(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"model": scriptModel(turn(text("one")), turn(text("two")), turn(text("three")), turn(text("four")))})
	d.call("session/prompt", obj{"sessionId": sid, "text": "first"})
	path := sessionFile(t, env, sid)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// From now on the file may grow by 1000 bytes: room for the marker and for a few small
	// messages, not for the 4 KB prompt.
	limit := uint64(fi.Size() + 1000)
	if err := unix.Prlimit(d.pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
		t.Fatal(err)
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": strings.Repeat("big ", 1000)})
	d.call("session/prompt", obj{"sessionId": sid, "text": "third"})
	d.call("session/prompt", obj{"sessionId": sid, "text": "fourth"})
	stopDaemon(t, d)

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Checkpoint marks (one before each prompt's user message) are left out of the count.
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if gjson.Get(l, "type").String() != "checkpoint" {
			lines = append(lines, l)
		}
	}
	last := gjson.Parse(lines[len(lines)-1])
	if last.Get("type").String() != "unsaved" || !strings.Contains(last.Get("unsaved.reason").String(), "file too large") {
		t.Errorf("the file does not end with the unsaved marker: last line %s", lines[len(lines)-1])
	}
	if n := len(lines); n != 4 {
		t.Errorf("the file has %d lines, want 4 (header, first, one, marker): nothing is written after a failed write:\n%s", n, data)
	}

	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{}, ws)
	res := d2.call("session/load", obj{"sessionId": sid})
	if n := len(loadedMessages(res)); n != 2 {
		t.Errorf("loaded %d messages, want the 2 saved", n)
	}
	gaps := res.Get("unsaved").Array()
	if len(gaps) != 1 || gaps[0].Get("index").Int() != 2 || !strings.Contains(gaps[0].Get("reason").String(), "file too large") {
		t.Errorf("session/load's unsaved: %s, want one hole after item 2 naming the error", res.Get("unsaved").Raw)
	}
	// Saving goes on after the marker: the next prompt is saved and a load still reports
	// the hole, where it was.
	d2.call("session/prompt", obj{"sessionId": sid, "text": "again"})
	stopDaemon(t, d2)
	d3 := startProcess(t, processOptions{Env: env})
	initWorkspace(d3, obj{}, ws)
	res = d3.call("session/load", obj{"sessionId": sid})
	if n := len(loadedMessages(res)); n != 4 {
		t.Errorf("loaded %d messages after a prompt past the hole, want 4", n)
	}
	if g := res.Get("unsaved").Array(); len(g) != 1 || g[0].Get("index").Int() != 2 {
		t.Errorf("unsaved after more prompts: %s, want the hole after item 2", res.Get("unsaved").Raw)
	}
	stopDaemon(t, d3)
}
