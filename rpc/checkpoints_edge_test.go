// This file tests checkpoints through the real daemon in the cases beside the main run
// (issue 23): a workspace with a nested repository, a file too big to keep, a link to a
// folder outside and a file bash makes unreadable; checkpoints turned off in the user
// settings; the store's bound given up on an old closed session, never on a live one; a
// write and a bash call of one parallel batch recording into one checkpoint; and a rewind
// refused while a prompt runs.

package rpc

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edgeEnv is sessionEnv with the user settings file holding settings ("" for none); it
// returns the environment and the state folder (XDG_STATE_HOME).
func edgeEnv(t *testing.T, settings string) (env []string, state string) {
	t.Helper()
	env = sessionEnv(t)
	var config string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			config = v
		}
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	if settings != "" {
		wsWriteFile(t, filepath.Join(config, "pid", "settings.json"), settings)
	}
	return env, state
}

// noRace fails the test when the daemon (built with -race when the test is) reported a
// data race on stderr.
func noRace(t *testing.T, stderr *syncBuffer) {
	t.Helper()
	if strings.Contains(stderr.String(), "WARNING: DATA RACE") {
		t.Errorf("the daemon reported a data race:\n%s", stderr.String())
	}
}

// fileBytes returns the bytes and the mode of every file under dir, by relative path.
func fileBytes(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = readState(t, p)
		}
		return nil
	})
	return out
}

func TestCheckpointsOfAnAwkwardWorkspace(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3<<20/16) // 3 MiB, untracked
	base, ws := newWorkspaceDir(t, map[string]string{
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n",
		"nested/.git/HEAD": "ref: refs/heads/dev\n", "nested/.git/config": "[core]\n", "nested/src.txt": "nested\n",
		"big.dat": big, "locked.txt": "before\n",
	})
	outside := filepath.Join(base, "outside")
	wsWriteFile(t, filepath.Join(outside, "o.txt"), "outside\n")
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	// The sandbox is off so that the command can write through the link: with it on (the
	// default), the kernel refuses writes outside the workspace, and there is nothing for
	// the checkpoints to leave alone. Either way the snapshots do not follow the link.
	env, _ := edgeEnv(t, `{"sandbox": {"mode": "off"}}`)
	stderr := &syncBuffer{}
	d := startProcess(t, processOptions{Env: env, Stderr: stderr})
	initWorkspace(d, obj{}, ws)
	command := "echo changed >> nested/src.txt && echo new > nested/new.txt && echo x > nested/.git/marker" +
		" && echo more >> big.dat && echo through > out/o.txt && echo after > locked.txt && chmod 000 locked.txt"
	// "bash": "allow", not only a default: a default never allows the write into nested/.git,
	// one of the paths other programs run code from (docs/permissions.md).
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow", "tools": obj{"bash": "allow"}}, "model": scriptModel(
		turn(toolCall("b1", "bash", obj{"command": command})),
		turn(text("done")),
	)})
	if res := d.call("session/prompt", obj{"sessionId": sid, "text": "awkward"}); res.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", res.Raw)
	}
	if got := readState(t, filepath.Join(outside, "o.txt")).data; got != "through\n" {
		t.Fatalf("the command did not write through the link (o.txt = %q): the test shows nothing", got)
	}
	gitBefore := fileBytes(t, filepath.Join(ws, ".git"))
	nestedGitBefore := fileBytes(t, filepath.Join(ws, "nested/.git"))

	list := d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints").Array()
	if len(list) != 1 {
		t.Fatalf("%d checkpoints, want 1", len(list))
	}
	cp := list[0]
	got := map[string]string{}
	for _, f := range cp.Get("files").Array() {
		got[f.Get("path").String()] = f.Get("change").String()
	}
	want := map[string]string{
		filepath.Join(ws, "nested/src.txt"): "modified", filepath.Join(ws, "nested/new.txt"): "added",
		filepath.Join(ws, "big.dat"): "modified", filepath.Join(ws, "locked.txt"): "modified",
	}
	if !mapsEqual(got, want) {
		t.Errorf("the checkpoint lists %v, want %v (nothing in a .git folder, nothing outside)", got, want)
	}
	if reason := cp.Get("reason").String(); !cp.Get("incomplete").Bool() || !strings.Contains(reason, "big.dat") || !strings.Contains(reason, "larger than 2 MiB") {
		t.Errorf("the checkpoint should say big.dat was not kept: %s", cp.Raw)
	}

	res := d.call("session/rewind", obj{"sessionId": sid, "checkpointId": cp.Get("id").String(), "restore": "files"})
	sk := res.Get("skipped").Array()
	if len(sk) != 1 || sk[0].Get("path").String() != filepath.Join(ws, "big.dat") || !strings.Contains(sk[0].Get("reason").String(), "not kept") {
		t.Errorf("skipped = %s, want big.dat alone, its content not kept", res.Get("skipped").Raw)
	}
	if names(res.Get("restored")) == nil || strings.Join(names(res.Get("restored")), ",") != "locked.txt,src.txt" ||
		strings.Join(names(res.Get("removed")), ",") != "new.txt" {
		t.Errorf("rewind: %s, want locked.txt and nested/src.txt restored, nested/new.txt removed", res.Raw)
	}
	now := treeState(t, ws, "nested/src.txt", "nested/new.txt", "locked.txt", "big.dat")
	wantNow := map[string]fileState{
		"nested/src.txt": {data: "nested\n", mode: 0o644}, "nested/new.txt": {absent: true},
		"locked.txt": {data: "before\n", mode: 0o644}, "big.dat": {data: big + "more\n", mode: 0o644},
	}
	if !statesEqual(now, wantNow) {
		t.Errorf("after the rewind the files differ from before the prompt (big.dat as the command left it)")
		for k, v := range now {
			if v != wantNow[k] {
				t.Logf("%s: got %.40q mode %v absent %v, want %.40q mode %v absent %v", k, v.data, v.mode, v.absent, wantNow[k].data, wantNow[k].mode, wantNow[k].absent)
			}
		}
	}
	// Neither .git folder was touched by the rewind; the marker the command left in the
	// nested one is still there.
	if after := fileBytes(t, filepath.Join(ws, ".git")); !statesEqual(after, gitBefore) {
		t.Errorf(".git changed in the rewind:\n got %v\nwant %v", after, gitBefore)
	}
	if after := fileBytes(t, filepath.Join(ws, "nested/.git")); !statesEqual(after, nestedGitBefore) || after["marker"].data != "x\n" {
		t.Errorf("nested/.git changed in the rewind:\n got %v\nwant %v", after, nestedGitBefore)
	}
	// Outside: as the command left it; the link as it was.
	if after := fileBytes(t, outside); !statesEqual(after, map[string]fileState{"o.txt": {data: "through\n", mode: 0o644}}) {
		t.Errorf("the folder outside changed in the rewind: %v", after)
	}
	if target, err := os.Readlink(filepath.Join(ws, "out")); err != nil || target != outside {
		t.Errorf("the link is now %q (%v)", target, err)
	}
	for _, p := range append(res.Get("restored").Array(), res.Get("removed").Array()...) {
		if !strings.HasPrefix(p.String(), ws+string(filepath.Separator)) {
			t.Errorf("the rewind touched %s, outside the workspace", p)
		}
	}
	// The rewind of the rewind gives locked.txt back as the command left it, unreadable.
	d.call("session/rewind", obj{"sessionId": sid, "checkpointId": res.Get("safetyCheckpointId").String(), "restore": "files"})
	if fi, err := os.Lstat(filepath.Join(ws, "locked.txt")); err != nil || fi.Mode().Perm() != 0 {
		t.Errorf("after rewinding the rewind, locked.txt: %v, %v; want mode 000", fi, err)
	}
	os.Chmod(filepath.Join(ws, "locked.txt"), 0o600)
	if got := readState(t, filepath.Join(ws, "locked.txt")).data; got != "after\n" {
		t.Errorf("after rewinding the rewind, locked.txt holds %q", got)
	}
	noRace(t, stderr)
}

func TestCheckpointsTurnedOff(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "a\n"})
	env, state := edgeEnv(t, `{"checkpoints": {"enabled": false}}`)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("w1", "write", obj{"path": "a.txt", "content": "changed\n"}),
			toolCall("b1", "bash", obj{"command": "echo b > b.txt"})),
		turn(text("done")),
	)})
	d.call("session/prompt", obj{"sessionId": sid, "text": "change"})
	if got := readState(t, filepath.Join(ws, "b.txt")).data; got != "b\n" {
		t.Fatalf("the run did not run: b.txt = %q", got)
	}
	for _, c := range []struct {
		method string
		params obj
	}{
		{"checkpoints/list", obj{"sessionId": sid}},
		{"checkpoints/diff", obj{"sessionId": sid, "checkpointId": "x"}},
		{"session/rewind", obj{"sessionId": sid, "checkpointId": "x", "restore": "files"}},
	} {
		if code, msg := d.callErr(c.method, c.params); code != -32803 || !strings.Contains(msg, "checkpoints") {
			t.Errorf("%s with checkpoints off: %d %q, want -32803 naming checkpoints", c.method, code, msg)
		}
	}
	d.call("shutdown", nil)
	if _, err := os.Lstat(filepath.Join(state, "pid", "checkpoints")); !os.IsNotExist(err) {
		t.Errorf("%s exists with checkpoints off (%v)", filepath.Join(state, "pid", "checkpoints"), err)
	}
}

func TestCheckpointBoundGivesUpAClosedSession(t *testing.T) {
	// Each session's files take 200 KB, and its command changes one of 100 KB (kept before
	// and after): 400 KB a session, 800 KB both; the bound is 600 KB.
	randomText := func(n int) string {
		b := make([]byte, n/2)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	_, wsA := newWorkspaceDir(t, map[string]string{"x.txt": randomText(100 << 10), "y.txt": randomText(100 << 10)})
	_, wsB := newWorkspaceDir(t, map[string]string{"x.txt": randomText(100 << 10), "y.txt": randomText(100 << 10)})
	bx := readState(t, filepath.Join(wsB, "x.txt"))
	env, state := edgeEnv(t, `{"checkpoints": {"maxBytes": 600000}}`)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, wsA, wsB)
	model := scriptModel(turn(toolCall("b1", "bash", obj{"command": "echo more >> x.txt"})), turn(text("done")))
	a := d.newSession(obj{"cwd": wsA, "permissions": obj{"default": "allow"}, "model": model})
	d.call("session/prompt", obj{"sessionId": a, "text": "change a"})
	// Closing a session waits for the eviction pass its prompt started.
	d.call("session/close", obj{"sessionId": a})
	b := d.newSession(obj{"cwd": wsB, "permissions": obj{"default": "allow"}, "model": model})
	d.call("session/prompt", obj{"sessionId": b, "text": "change b"})
	d.call("session/close", obj{"sessionId": b}) // B's pass ran while B was live

	d.call("session/load", obj{"sessionId": a})
	cpA := d.call("checkpoints/list", obj{"sessionId": a}).Get("checkpoints.0")
	if !cpA.Get("incomplete").Bool() || !strings.Contains(cpA.Get("reason").String(), "checkpoints.maxBytes") {
		t.Errorf("the old closed session's checkpoint should say it was given up: %s", cpA.Raw)
	}
	res := d.call("session/rewind", obj{"sessionId": a, "checkpointId": cpA.Get("id").String(), "restore": "files"})
	if sk := res.Get("skipped").Array(); len(sk) != 1 || !strings.Contains(sk[0].Get("reason").String(), "checkpoints.maxBytes") {
		t.Errorf("the given-up session's rewind: %s, want x.txt skipped naming the size limit", res.Raw)
	}

	d.call("session/load", obj{"sessionId": b})
	cpB := d.call("checkpoints/list", obj{"sessionId": b}).Get("checkpoints.0")
	if cpB.Get("incomplete").Bool() {
		t.Errorf("the session live during the pass was given up: %s", cpB.Raw)
	}
	res = d.call("session/rewind", obj{"sessionId": b, "checkpointId": cpB.Get("id").String(), "restore": "files"})
	if got := readState(t, filepath.Join(wsB, "x.txt")); got != bx || len(res.Get("skipped").Array()) != 0 {
		t.Errorf("the live session's rewind: %s", res.Raw)
	}

	// The store is the user's alone: folders 0700, files 0600.
	dir := filepath.Join(state, "pid", "checkpoints")
	n := 0
	filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		fi, err := de.Info()
		if err != nil {
			return nil
		}
		want := fs.FileMode(0o600)
		if de.IsDir() {
			want = 0o700
		} else {
			n++
		}
		if fi.Mode().Perm() != want || (!de.IsDir() && !fi.Mode().IsRegular()) {
			t.Errorf("%s: %v, want %v", p, fi.Mode(), want)
		}
		return nil
	})
	if n == 0 {
		t.Errorf("nothing in %s", dir)
	}
}

func TestParallelWriteAndBashShareACheckpoint(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"w.txt": "w\n", "b.txt": "b\n"})
	env, _ := edgeEnv(t, "")
	stderr := &syncBuffer{}
	d := startProcess(t, processOptions{Env: env, Stderr: stderr})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("r1", "read", obj{"path": "w.txt"})),
		turn(toolCall("w1", "write", obj{"path": "w.txt", "content": "written\n"}),
			toolCall("b1", "bash", obj{"command": "echo bashed >> b.txt && echo new > n.txt"}),
			toolCall("w2", "write", obj{"path": "v.txt", "content": "v\n"})),
		turn(text("done")),
	)})
	d.call("session/prompt", obj{"sessionId": sid, "text": "parallel"})
	list := d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints").Array()
	if len(list) != 1 {
		t.Fatalf("%d checkpoints, want 1", len(list))
	}
	got := map[string]string{}
	for _, f := range list[0].Get("files").Array() {
		got[filepath.Base(f.Get("path").String())] = f.Get("change").String()
	}
	if want := map[string]string{"w.txt": "modified", "b.txt": "modified", "n.txt": "added", "v.txt": "added"}; !mapsEqual(got, want) {
		t.Errorf("the batch's checkpoint lists %v, want %v", got, want)
	}
	res := d.call("session/rewind", obj{"sessionId": sid, "checkpointId": list[0].Get("id").String(), "restore": "files"})
	want := map[string]fileState{"w.txt": {data: "w\n", mode: 0o644}, "b.txt": {data: "b\n", mode: 0o644}, "n.txt": {absent: true}, "v.txt": {absent: true}}
	if now := treeState(t, ws, "w.txt", "b.txt", "n.txt", "v.txt"); !statesEqual(now, want) || len(res.Get("skipped").Array()) != 0 {
		t.Errorf("after the rewind: %+v (%s)", now, res.Raw)
	}
	d.call("shutdown", nil)
	d.closeInput()
	d.wait()
	noRace(t, stderr)
}

func TestRewindWhileAPromptRuns(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "a\n"})
	env, _ := edgeEnv(t, "")
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"},
		"scriptedTools": []obj{tool("hold", updateStep("holding"), waitForEnd("never"), resultStep("released"))},
		"model": scriptModel(
			turn(toolCall("r1", "read", obj{"path": "a.txt"})),
			turn(toolCall("w1", "write", obj{"path": "a.txt", "content": "changed\n"})),
			turn(text("first done")),
			turn(toolCall("h1", "hold", nil)),
			turn(text("second done")),
		)})
	d.call("session/prompt", obj{"sessionId": sid, "text": "first"})
	cp := d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints.0.id").String()

	id := d.request("session/prompt", obj{"sessionId": sid, "text": "second"})
	d.notification("$/toolUpdate", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "h1" })
	for _, restore := range []string{"files", "conversation", "both"} {
		if code, msg := d.callErr("session/rewind", obj{"sessionId": sid, "checkpointId": cp, "restore": restore}); code != -32803 {
			t.Errorf("rewind (%s) while a prompt runs: %d %q, want -32803", restore, code, msg)
		}
	}
	if got := readState(t, filepath.Join(ws, "a.txt")).data; got != "changed\n" {
		t.Errorf("a refused rewind changed a.txt: %q", got)
	}
	d.cancel(id)
	d.response(id)
	// Once the prompt ended, the same rewind is taken.
	d.call("session/rewind", obj{"sessionId": sid, "checkpointId": cp, "restore": "files"})
	if got := readState(t, filepath.Join(ws, "a.txt")).data; got != "a\n" {
		t.Errorf("after the prompt ended, the rewind left a.txt = %q", got)
	}
}
