package session

// Tests of build's failure paths: what a build opened before a later step failed is closed
// again (issue 33).

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/pid-agent/pid/internal/xdg/xdgtest"
)

// A build that fails after the session's checkpoints were opened (its hooks do not parse,
// or its id is taken by a live session) leaves no checkpoint session open: the store would
// otherwise keep its blobs from eviction, and a second Session for a live id breaks the
// store's one-per-id contract.
func TestFailedBuildLeavesNoCheckpointSession(t *testing.T) {
	xdgtest.Isolate(t)
	dir := t.TempDir()
	h := NewHost(HostOptions{})
	h.SetUp([]string{dir})
	defer h.Close()
	if h.checkpoints == nil {
		t.Fatal("the host has no checkpoint store")
	}
	bad := Config{Cwd: dir, Hooks: json.RawMessage(`{"NoSuchEvent": []}`)}
	if _, err := h.New(bad, Options{Face: quietFace{}, ID: "bad-hooks"}); err == nil {
		t.Fatal("a session with hooks that do not parse was made")
	}
	if got := h.checkpoints.Sessions(); len(got) != 0 {
		t.Errorf("after a build that failed on its hooks, open checkpoint sessions %v, want none", got)
	}
	s, err := h.New(Config{Cwd: dir}, Options{Face: quietFace{}, ID: "taken"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.New(Config{Cwd: dir}, Options{Face: quietFace{}, ID: "taken"}); err == nil {
		t.Fatal("a second session with a live session's id was made")
	}
	if got := h.checkpoints.Sessions(); !slices.Equal(got, []string{"taken"}) {
		t.Errorf("after a build that failed on a taken id, open checkpoint sessions %v, want the live one's alone", got)
	}
	if err := h.CloseSession(s.ID()); err != nil {
		t.Fatal(err)
	}
	if got := h.checkpoints.Sessions(); len(got) != 0 {
		t.Errorf("after the last session closed, open checkpoint sessions %v, want none", got)
	}
}
