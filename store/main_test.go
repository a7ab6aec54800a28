// This file holds what the package's tests share: TestMain (goleak, and the helper-process
// mode in which the test binary holds a session's lock for another test), a Store in a
// temporary folder, and realistic messages.

package store

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/llm"
	"go.uber.org/goleak"
)

// holdEnv, when set to "DIR ID", makes the test binary a helper process: it opens session
// ID of the sessions folder DIR, appends one user message "from the helper", prints "held"
// and the entry's id, and waits for its stdin to close (or for SIGKILL) without syncing.
const holdEnv = "PID_STORE_TEST_HOLD"

func TestMain(m *testing.M) {
	if arg := os.Getenv(holdEnv); arg != "" {
		os.Exit(holdHelper(arg))
	}
	goleak.VerifyTestMain(m)
}

// holdHelper is the helper process's body.
func holdHelper(arg string) int {
	dir, id, _ := strings.Cut(arg, " ")
	s, err := Open(dir)
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	f, _, err := s.OpenSession(id)
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	ids, err := f.Append(Entry{Kind: KindMessage, Message: ptr(llm.NewUser("from the helper"))})
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	fmt.Println("held", ids[0])
	io.Copy(io.Discard, os.Stdin)
	f.Close()
	return 0
}

// holder is a helper process holding a session.
type holder struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	entryID string // the entry it appended
}

// startHolder starts a helper process holding session id of s, and returns once it holds
// it (it says so on stdout: a gate, not a sleep). The test's cleanup kills it if the test
// did not.
func startHolder(t *testing.T, s *Store, id string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+s.Dir()+" "+id)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	fields := strings.Fields(line)
	if err != nil || len(fields) != 2 || fields[0] != "held" {
		t.Fatalf("helper process said %q (%v), want \"held ID\"", line, err)
	}
	h.entryID = fields[1]
	return h
}

// kill ends the helper with SIGKILL (no Close, no sync, no lock release of its own) and
// reaps it.
func (h *holder) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	h.cmd.Wait()
}

// newStore returns a Store in a new temporary folder.
func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// create makes a session in cwd and fails the test on error.
func create(t testing.TB, s *Store, cwd string) *File {
	t.Helper()
	f, err := s.Create(Header{Cwd: cwd, Tools: []string{"read", "bash"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func ptr[T any](v T) *T { return &v }

// at is a fixed time plus n seconds, to the millisecond in UTC as read back.
func at(n int) time.Time {
	return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
}

// msg makes a message entry at time at(n).
func msg(n int, m llm.Message) Entry {
	return Entry{Kind: KindMessage, Timestamp: at(n), Message: &m}
}

// userMsg is a user message of text.
func userMsg(text string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text(text)}, Timestamp: 1772366400000}
}

// assistantMsg is an assistant message with some text and n tool calls, about 300 bytes of
// JSON with one call.
func assistantMsg(n int) llm.Message {
	m := llm.Message{
		Role:       llm.RoleAssistant,
		Content:    []llm.Content{llm.Text("I'll look at the handler first, then run the tests to see what fails.")},
		StopReason: llm.StopToolUse,
		Usage:      &llm.Usage{Input: 15230, Output: 212, CacheRead: 14000, Total: 15442},
		Timestamp:  1772366401000,
	}
	for i := range n {
		m.Content = append(m.Content, llm.NewToolCall(fmt.Sprintf("call_%02d_Xk3b9QpL", i), "read",
			json.RawMessage(`{"path":"internal/server/handler.go","offset":120,"limit":80}`)))
	}
	return m
}

// resultMsg is a tool result of about 1 KB of text.
func resultMsg(i int) llm.Message {
	var b strings.Builder
	for b.Len() < 1000 {
		fmt.Fprintf(&b, "%4d\tfunc (h *Handler) serve%d(w http.ResponseWriter, r *http.Request) error {\n", b.Len()/70+120, i)
	}
	return llm.Message{
		Role: llm.RoleToolResult, ToolCallID: fmt.Sprintf("call_%02d_Xk3b9QpL", i), ToolName: "read",
		Content:   []llm.Content{llm.Text(b.String())},
		Details:   map[string]any{"lines": float64(14), "truncated": false},
		Timestamp: 1772366402000,
	}
}
