// This file holds what a session needs of its hooks besides running them: the set that
// applies now, made again only when the settings it comes from changed (Cache); what the
// person sees of each hook (Info); the folder a hook is told is the project (ProjectDir);
// and the audit log's line for a hook's decision (AuditEntry).

package hooks

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/pid-agent/pid/audit"
	"github.com/pid-agent/pid/internal/mdfile"
	"github.com/pid-agent/pid/redact"
)

// Cache keeps the set Current made last, with the settings it was made from. The zero
// Cache is ready; it is safe for concurrent use.
type Cache struct {
	last atomic.Pointer[snapshot]
}

// snapshot is the hooks made from one version of the settings.
type snapshot struct {
	user, workspace json.RawMessage
	trusted         bool
	own             *Set
	set             *Set
}

// Current returns the hooks that apply: the user settings' (user), the workspace's
// (workspace) only when its folder is trusted, then own (a session's own; nil for none), in
// that order. A source that does not parse adds no hooks. The set is made again only when
// the settings changed: a settings loader gives the same slices until it reloads.
func (c *Cache) Current(user, workspace json.RawMessage, trusted bool, own *Set) *Set {
	if l := c.last.Load(); l != nil && sameBytes(l.user, user) && sameBytes(l.workspace, workspace) && l.trusted == trusted && l.own == own {
		return l.set
	}
	u, _ := Parse(user, "user")
	var ws *Set
	if trusted {
		ws, _ = Parse(workspace, "workspace")
	}
	set := Join(u, ws, own)
	c.last.Store(&snapshot{user: user, workspace: workspace, trusted: trusted, own: own, set: set})
	return set
}

// sameBytes reports whether a and b are the same slice (the same length at the same
// address, or both empty).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// Info is one configured hook, as hooks/list shows it.
type Info struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	Source  string `json:"source"`
}

// Infos returns the set's hooks as hooks/list shows them, in the order they run (empty, not
// nil, when there are none).
func (s *Set) Infos() []Info {
	out := []Info{}
	for _, h := range s.All() {
		out = append(out, Info{Event: h.Event, Matcher: h.Matcher, Command: h.Command, Source: h.Source})
	}
	return out
}

// ProjectDir returns the folder a hook of a session in cwd is told is the project (Env):
// the last of the workspace's roots that holds cwd, else the first root, else cwd itself
// when there are none.
func ProjectDir(cwd string, roots []string) string {
	project := cwd
	if len(roots) > 0 {
		project = roots[0]
		for _, r := range roots {
			if mdfile.Within(cwd, r) {
				project = r
			}
		}
	}
	return project
}

// AuditEntry returns the audit log's entry for a decision of hook h about the call callID of
// tool in session (tool "" and callID "" for a decision about no call: the entry names the
// hook's event in its place). The entry says which hook decided, from which settings, and
// why, with what r knows of secrets taken out.
func AuditEntry(h Hook, session, callID, tool, decision, reason string, r *redact.Redactor) audit.Entry {
	by := fmt.Sprintf("%s hook %q (%s)", h.Event, h.Command, h.Source)
	if reason != "" {
		by += ": " + reason
	}
	if tool == "" {
		tool = "(" + h.Event + ")"
	}
	return audit.Entry{Session: session, Tool: tool, ToolCallID: callID, Args: json.RawMessage("{}"),
		Decision: "hook " + decision, DecidedBy: audit.SanitizeText(by, r)}
}
