// This file tests checkpoints and rewind through the real daemon: a run that changes five
// files with edit, write and bash; checkpoints/list and checkpoints/diff; session/rewind of
// files (bytes and modes, .git untouched), of a file changed since (skipped, then forced),
// of the rewind itself, and of the conversation (the next model call sees none of it).

package rpc

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// fileState is a file's bytes and mode, or absent.
type fileState struct {
	data   string
	mode   fs.FileMode
	absent bool
}

func readState(t *testing.T, path string) fileState {
	t.Helper()
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return fileState{absent: true}
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{data: string(data), mode: fi.Mode()}
}

// treeState returns the state of each named file under ws.
func treeState(t *testing.T, ws string, names ...string) map[string]fileState {
	out := map[string]fileState{}
	for _, n := range names {
		out[n] = readState(t, filepath.Join(ws, n))
	}
	return out
}

// checkpointRun starts a daemon on a workspace of five files and a .git folder, and runs
// one prompt whose tools edit a.txt, write b.txt, and through bash append to c.txt, delete
// d.txt and create e.txt; then a second prompt that only answers.
func checkpointRun(t *testing.T, extraEnv ...string) (d *daemon, sid, ws string) {
	_, ws = newWorkspaceDir(t, map[string]string{
		"a.txt": "alpha\nbeta\ngamma\n", "c.txt": "one\n", "d.txt": "delete me\n",
		".git/config": "[core]\n\tbare = false\n", ".git/HEAD": "ref: refs/heads/main\n",
	})
	if err := os.Chmod(filepath.Join(ws, "c.txt"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(ws, "d.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	d = startProcess(t, processOptions{Env: append(sessionEnv(t), extraEnv...)})
	initWorkspace(d, obj{}, ws)
	sid = d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("r1", "read", obj{"path": "a.txt"})),
		turn(toolCall("e1", "edit", obj{"path": "a.txt", "edits": []obj{{"oldText": "beta", "newText": "BETA"}}}),
			toolCall("w1", "write", obj{"path": "b.txt", "content": "new file\n"})),
		turn(toolCall("b1", "bash", obj{"command": "printf 'two\\n' >> c.txt && rm d.txt && echo five > e.txt"})),
		turn(text("done")),
		turn(text("second answer")),
		turn(text("after the rewind")),
	)})
	res := d.call("session/prompt", obj{"sessionId": sid, "text": "change five files"})
	if res.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s\n%s", res.Raw, d.dump())
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": "and answer"})
	return d, sid, ws
}

var fiveFiles = []string{"a.txt", "b.txt", "c.txt", "d.txt", "e.txt", ".git/config", ".git/HEAD"}

func TestRewindRestoresEveryChangeOfARun(t *testing.T) {
	d, sid, ws := checkpointRun(t)
	before := map[string]fileState{
		"a.txt": {data: "alpha\nbeta\ngamma\n", mode: 0o644}, "b.txt": {absent: true},
		"c.txt": {data: "one\n", mode: 0o640}, "d.txt": {data: "delete me\n", mode: 0o600}, "e.txt": {absent: true},
		".git/config": {data: "[core]\n\tbare = false\n", mode: 0o644}, ".git/HEAD": {data: "ref: refs/heads/main\n", mode: 0o644},
	}
	after := treeState(t, ws, fiveFiles...)
	if after["a.txt"].data != "alpha\nBETA\ngamma\n" || after["c.txt"].data != "one\ntwo\n" || !after["d.txt"].absent || after["e.txt"].data != "five\n" || after["b.txt"].data != "new file\n" {
		t.Fatalf("the run did not change the files as scripted: %+v\n%s", after, d.dump())
	}

	list := d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints").Array()
	if len(list) != 2 {
		t.Fatalf("checkpoints/list: %d checkpoints, want one per prompt (2)", len(list))
	}
	first := list[0]
	if first.Get("prompt").String() != "change five files" || first.Get("timestamp").String() == "" || first.Get("incomplete").Bool() {
		t.Errorf("first checkpoint: %s", first.Raw)
	}
	got := map[string]string{}
	for _, f := range first.Get("files").Array() {
		got[f.Get("path").String()] = f.Get("change").String()
	}
	want := map[string]string{
		filepath.Join(ws, "a.txt"): "modified", filepath.Join(ws, "b.txt"): "added", filepath.Join(ws, "c.txt"): "modified",
		filepath.Join(ws, "d.txt"): "deleted", filepath.Join(ws, "e.txt"): "added",
	}
	if !mapsEqual(got, want) {
		t.Errorf("first checkpoint's files = %v, want %v", got, want)
	}
	if n := len(list[1].Get("files").Array()); n != 0 {
		t.Errorf("the second prompt changed nothing, yet its checkpoint lists %d files", n)
	}
	cp := first.Get("id").String()

	diffs := d.call("checkpoints/diff", obj{"sessionId": sid, "checkpointId": cp}).Get("files").Array()
	byPath := map[string]gjson.Result{}
	for _, f := range diffs {
		byPath[filepath.Base(f.Get("path").String())] = f
	}
	if len(diffs) != 5 {
		t.Errorf("checkpoints/diff: %d files, want 5: %v", len(diffs), diffs)
	}
	if df := byPath["a.txt"].Get("diff").String(); !strings.Contains(df, "-beta\n+BETA\n") {
		t.Errorf("a.txt's diff: %q", df)
	}
	if df := byPath["d.txt"].Get("diff").String(); byPath["d.txt"].Get("change").String() != "deleted" || !strings.Contains(df, "-delete me\n") {
		t.Errorf("d.txt's diff: %s", byPath["d.txt"].Raw)
	}
	if df := byPath["e.txt"].Get("diff").String(); byPath["e.txt"].Get("change").String() != "added" || !strings.Contains(df, "+five\n") {
		t.Errorf("e.txt's diff: %s", byPath["e.txt"].Raw)
	}

	// Rewind the files: all five come back, bytes and modes; .git is not touched.
	res := d.call("session/rewind", obj{"sessionId": sid, "checkpointId": cp, "restore": "files"})
	if now := treeState(t, ws, fiveFiles...); !statesEqual(now, before) {
		t.Errorf("after rewinding the files:\n got %+v\nwant %+v\nresult %s", now, before, res.Raw)
	}
	if n := len(res.Get("restored").Array()) + len(res.Get("removed").Array()); n != 5 || len(res.Get("skipped").Array()) != 0 {
		t.Errorf("rewind result: %s, want 5 files restored or removed, none skipped", res.Raw)
	}
	if got := names(res.Get("removed")); !slices.Equal(got, []string{"b.txt", "e.txt"}) {
		t.Errorf("removed %v, want b.txt and e.txt", got)
	}
	safety := res.Get("safetyCheckpointId").String()
	if safety == "" || safety == cp {
		t.Fatalf("no safety checkpoint: %s", res.Raw)
	}

	// Rewind the rewind: the run's result comes back.
	d.call("session/rewind", obj{"sessionId": sid, "checkpointId": safety, "restore": "files"})
	if now := treeState(t, ws, fiveFiles...); !statesEqual(now, after) {
		t.Errorf("after rewinding the rewind:\n got %+v\nwant %+v", now, after)
	}

	// A file changed since pid last wrote it is skipped, then restored with force.
	if err := os.WriteFile(filepath.Join(ws, "c.txt"), []byte("a person's edit\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	res = d.call("session/rewind", obj{"sessionId": sid, "checkpointId": cp, "restore": "files"})
	sk := res.Get("skipped").Array()
	if len(sk) != 1 || filepath.Base(sk[0].Get("path").String()) != "c.txt" || !strings.Contains(sk[0].Get("reason").String(), "changed since pid last wrote it") {
		t.Errorf("skipped = %s, want c.txt, changed since", res.Get("skipped").Raw)
	}
	if got := readState(t, filepath.Join(ws, "c.txt")).data; got != "a person's edit\n" {
		t.Errorf("the skipped file was changed: %q", got)
	}
	d.call("session/rewind", obj{"sessionId": sid, "checkpointId": cp, "restore": "files", "force": true})
	if now := treeState(t, ws, fiveFiles...); !statesEqual(now, before) {
		t.Errorf("after a forced rewind:\n got %+v\nwant %+v", now, before)
	}

	// Errors: an unknown checkpoint is -32602; a bad restore too.
	if code, _ := d.callErr("session/rewind", obj{"sessionId": sid, "checkpointId": "nope", "restore": "files"}); code != -32602 {
		t.Errorf("unknown checkpoint: code %d, want -32602", code)
	}
	if code, _ := d.callErr("session/rewind", obj{"sessionId": sid, "checkpointId": cp, "restore": "everything"}); code != -32602 {
		t.Errorf("bad restore: code %d, want -32602", code)
	}
	if code, _ := d.callErr("checkpoints/diff", obj{"sessionId": sid, "checkpointId": "nope"}); code != -32602 {
		t.Errorf("diff of an unknown checkpoint: code %d, want -32602", code)
	}
}

func TestRewindConversation(t *testing.T) {
	srv := newFakeOpenAI(t, sseAnswer(sseChunk(obj{"role": "assistant", "content": "fresh"}, nil), sseChunk(obj{}, "stop"), sseDone))
	d, sid, ws := checkpointRun(t, e2eEnv...)
	filesBefore := treeState(t, ws, fiveFiles...)
	list := d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints").Array()
	second := list[1].Get("id").String()
	res := d.call("session/rewind", obj{"sessionId": sid, "checkpointId": second, "restore": "conversation"})
	if len(res.Get("restored").Array())+len(res.Get("removed").Array())+len(res.Get("skipped").Array()) != 0 {
		t.Errorf("a conversation rewind touched files: %s", res.Raw)
	}
	if now := treeState(t, ws, fiveFiles...); !statesEqual(now, filesBefore) {
		t.Errorf("a conversation rewind changed files")
	}
	// The next model call (a real provider, at a local server) must see the first prompt's
	// exchange and the new prompt, and nothing of the rewound one.
	d.call("session/setModel", obj{"sessionId": sid, "model": e2eModel(srv)})
	d.call("session/prompt", obj{"sessionId": sid, "text": "third"})
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	body := string(reqs[0].body)
	if strings.Contains(body, "and answer") || strings.Contains(body, "second answer") {
		t.Errorf("the model call after the rewind still carries the rewound prompt or answer:\n%s", body)
	}
	if !strings.Contains(body, "change five files") || !strings.Contains(body, "third") || !strings.Contains(body, "done") {
		t.Errorf("the model call after the rewind lost what came before the checkpoint:\n%s", body)
	}

	loaded := d.call("session/load", obj{"sessionId": sid})
	var shown []string
	for _, m := range loaded.Get("messages").Array() {
		if m.Get("role").String() == "user" {
			shown = append(shown, m.Get("content.0.text").String())
		}
		if strings.Contains(m.Raw, "second answer") {
			t.Errorf("session/load still shows the rewound answer: %s", m.Raw)
		}
	}
	if !slices.Equal(shown, []string{"change five files", "third"}) {
		t.Errorf("session/load's user messages after the rewind = %q, want the first prompt and the one after the rewind", shown)
	}

	// The rewind's own checkpoint takes the conversation back to before the rewind; the
	// file keeps every line, so a daemon started again shows the same.
	safety := res.Get("safetyCheckpointId").String()
	d.call("session/rewind", obj{"sessionId": sid, "checkpointId": safety, "restore": "conversation"})
	shown = shown[:0]
	for _, m := range d.call("session/load", obj{"sessionId": sid}).Get("messages").Array() {
		if m.Get("role").String() == "user" {
			shown = append(shown, m.Get("content.0.text").String())
		}
	}
	if !slices.Equal(shown, []string{"change five files", "and answer"}) {
		t.Errorf("after rewinding the rewind, the user messages = %q, want the two before it", shown)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func statesEqual(a, b map[string]fileState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func names(paths gjson.Result) []string {
	var out []string
	for _, p := range paths.Array() {
		out = append(out, filepath.Base(p.String()))
	}
	slices.Sort(out)
	return out
}

func TestRewindAfterKillDuringBash(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"c.txt": "one\n", "d.txt": "delete me\n", "keep.txt": "same\n"})
	env := sessionEnv(t)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("b1", "bash", obj{"command": "printf 'two\\n' >> c.txt && rm d.txt && echo five > e.txt && echo changed && sleep 30"})),
		turn(text("never")),
	)})
	d.request("session/prompt", obj{"sessionId": sid, "text": "change and hang"})
	// The command has changed the files once its output says so; pid is killed then.
	d.notification("$/toolUpdate", func(m *wireMsg) bool { return strings.Contains(m.String(), "changed") })
	d.kill()
	if got := readState(t, filepath.Join(ws, "c.txt")).data; got != "one\ntwo\n" {
		t.Fatalf("the command did not run as scripted: c.txt = %q", got)
	}

	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{}, ws)
	d2.call("session/load", obj{"sessionId": sid})
	list := d2.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints").Array()
	if len(list) != 1 {
		t.Fatalf("checkpoints after the kill: %d, want 1", len(list))
	}
	got := map[string]string{}
	for _, f := range list[0].Get("files").Array() {
		got[filepath.Base(f.Get("path").String())] = f.Get("change").String()
	}
	if want := map[string]string{"c.txt": "modified", "d.txt": "deleted", "e.txt": "added"}; !mapsEqual(got, want) {
		t.Errorf("the checkpoint of the killed run lists %v, want %v", got, want)
	}
	res := d2.call("session/rewind", obj{"sessionId": sid, "checkpointId": list[0].Get("id").String(), "restore": "both"})
	want := map[string]fileState{"c.txt": {data: "one\n", mode: 0o644}, "d.txt": {data: "delete me\n", mode: 0o644}, "e.txt": {absent: true}, "keep.txt": {data: "same\n", mode: 0o644}}
	if now := treeState(t, ws, "c.txt", "d.txt", "e.txt", "keep.txt"); !statesEqual(now, want) {
		t.Errorf("after the rewind:\n got %+v\nwant %+v\nresult %s", now, want, res.Raw)
	}
	if n := len(d2.call("session/load", obj{"sessionId": sid}).Get("messages").Array()); n != 0 {
		t.Errorf("the conversation rewound to before the first prompt still has %d messages", n)
	}
}
