// Package escalate holds a bash call's request to run outside the sandbox ("unsandboxed":
// true) apart from the session that decides on it: what the call asks (Of), the command an
// "always" answer to it covers, exactly (Command, Describe), and the answers a session
// remembers, per working folder and command (Memory). The entry points are Of and Memory.
package escalate

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/pid-agent/pid/permissions"
)

// Request is a bash call's request to run outside the sandbox, in the shape of
// beforeToolCall's params.sandbox.
type Request struct {
	Escalation    bool   `json:"escalation"`
	Justification string `json:"justification"`
}

// Of returns the request a bash call's arguments make: "unsandboxed": true, with its
// justification; nil when they make none (or do not parse).
func Of(args json.RawMessage) *Request {
	var a struct {
		Unsandboxed   bool   `json:"unsandboxed"`
		Justification string `json:"justification"`
	}
	if json.Unmarshal(args, &a) != nil || !a.Unsandboxed {
		return nil
	}
	return &Request{Escalation: true, Justification: a.Justification}
}

// Command returns a bash call's command as the key of an "always" answer to its request:
// the text as the model wrote it, without the spaces around it; false when it has none. A
// pattern would be wider: `touch ../x` as a rule covers every command starting with those
// words, and a person allowing one command outside the sandbox has allowed that one, not
// its longer relatives.
func Command(args json.RawMessage) (string, bool) {
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &a) != nil || strings.TrimSpace(a.Command) == "" {
		return "", false
	}
	return strings.TrimSpace(a.Command), true
}

// Describe is what a person reads of an "always" answer to the request of command cmd.
func Describe(cmd string) string {
	return "exactly the bash command `" + cmd + "`, run outside the sandbox, for this session"
}

// Memory keeps a session's "always" answers to requests, by working folder and exact
// command; never written anywhere (the store's answers allow sandboxed calls only). Its
// zero value remembers nothing; it is safe for concurrent use.
type Memory struct {
	// mu guards answers.
	mu      sync.Mutex
	answers map[[2]string]permissions.Decision
}

// Recall returns the answer kept for command cmd in folder cwd.
func (m *Memory) Recall(cwd, cmd string) (permissions.Decision, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.answers[[2]string{cwd, cmd}]
	return d, ok
}

// Remember keeps answer d for command cmd in folder cwd.
func (m *Memory) Remember(cwd, cmd string, d permissions.Decision) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.answers == nil {
		m.answers = map[[2]string]permissions.Decision{}
	}
	m.answers[[2]string{cwd, cmd}] = d
}
