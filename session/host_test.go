package session_test

// Tests of Host.SetUp and Close: the state folder is cleared of the temporary files a killed
// pid left, and the sessions of many hosts share one file watcher.

import (
	"errors"

	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/internal/xdg/xdgtest"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// isolate points pid's user folders (config, state, home) at a fresh temporary folder and
// returns the state folder pid uses, $XDG_STATE_HOME/pid.
func isolate(t *testing.T) string {
	t.Helper()
	return filepath.Join(xdgtest.Isolate(t).State, "pid")
}

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A pid killed between writing a temporary file and renaming it over trust.json or
// permissions.json leaves the temporary file in the state folder; the next SetUp removes it,
// and leaves the temporary files of live processes and every other file alone.
func TestSetUpRemovesStaleTempFiles(t *testing.T) {
	state := isolate(t)
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := []string{
		fmt.Sprintf(".trust.json%s%d-0123456789ab", safefile.TempPrefix, deadPID(t)),
		fmt.Sprintf(".permissions.json%s%d-ba9876543210", safefile.TempPrefix, deadPID(t)),
	}
	kept := []string{
		fmt.Sprintf(".trust.json%s%d-0123456789ab", safefile.TempPrefix, os.Getpid()), // a live writer's
		"notes.txt",
		".trust.json.pid-tmp-notanumber-0123456789ab",
	}
	for _, name := range append(append([]string{}, stale...), kept...) {
		if err := os.WriteFile(filepath.Join(state, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := session.NewHost(session.HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	for _, name := range stale {
		if _, err := os.Lstat(filepath.Join(state, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after SetUp (%v)", name, err)
		}
	}
	for _, name := range kept {
		if _, err := os.Lstat(filepath.Join(state, name)); err != nil {
			t.Errorf("SetUp removed %s: %v", name, err)
		}
	}
}

// face is a Face that records nothing and denies every question.
type face struct{}

func (face) Emit(*session.Session, event.Event) {}
func (face) Ask(context.Context, *session.Session, session.Approval) (session.Answer, error) {
	return session.Answer{Decision: "deny"}, nil
}
func (face) Warn(*session.Session, string) {}
func (face) Elicit(context.Context, *session.Session, session.Elicitation) (session.ElicitAnswer, error) {
	return session.ElicitAnswer{}, errors.New("no editor")
}

// readIn runs the read tool on name in the session and checks that it worked.
func readIn(t *testing.T, s *session.Session, name string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"path": name})
	out, err := s.Execute(context.Background(), []llm.ToolCall{{ID: "r1", Name: "read", Arguments: args}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 || out.Messages[0].IsError {
		t.Fatalf("read %s: %+v", name, out.Messages)
	}
}
