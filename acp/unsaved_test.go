// This file tests that session/load and session/resume over ACP say where a saved session
// has a hole (an unsaved marker: saving failed there), in _meta.pid.unsaved.

package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/store"
)

func TestLoadReportsUnsavedHole(t *testing.T) {
	dir := t.TempDir()
	a := start(t)
	a.initialize(nil)
	sid := a.newSession(dir, script("", textTurn("one"), textTurn("two")))
	a.result(a.prompt(sid, "hello"), nil)
	a.stop()

	// Saving failed after the first answer: the file ends with the marker, as pid leaves it.
	st, err := store.Open(filepath.Join(os.Getenv("XDG_STATE_HOME"), "pid", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := st.OpenSession(sid)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.MarkUnsaved("write: no space left on device"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	for _, method := range []string{"session/resume", "session/load"} {
		b := start(t)
		b.initialize(nil)
		res, _ := b.result(b.request(method, loadParams(sid, dir)), nil)
		holes := res.Get("_meta.pid.unsaved").Array()
		if len(holes) != 1 || holes[0].Get("index").Int() != 2 || !strings.Contains(holes[0].Get("reason").String(), "no space left") {
			t.Errorf("%s: _meta.pid.unsaved %s, want one hole after the 2 items saved", method, res.Get("_meta.pid.unsaved").Raw)
		}
		b.stop()
	}
}
