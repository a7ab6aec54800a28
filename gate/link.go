// This file holds the decision on a file tool's path that leads elsewhere through a symbolic
// link (Verdict): the call on the place it leads to (Led), and the stricter of the two
// verdicts (Stricter).

package gate

import (
	"encoding/json"
	"path/filepath"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/tools"
)

// Verdict returns the verdict on call, on deciding a call as given: a built-in file tool's call
// (builtin) whose path leads elsewhere through a symbolic link (Led; cwd and leads as there)
// is decided twice, as written and where it leads, and the stricter verdict wins (Stricter),
// so that no rule on paths is passed by a link.
func Verdict(call llm.ToolCall, builtin bool, cwd string, leads func(path string) (root, rel string, ok bool), on func(llm.ToolCall) permissions.Verdict) permissions.Verdict {
	v := on(call)
	if !builtin {
		return v
	}
	if led, rel, ok := Led(call, cwd, leads); ok {
		v = Stricter(v, on(led), rel)
	}
	return v
}

// Led returns, for a call of a built-in file tool (read, write, edit, grep, find, ls) whose
// path leads through a symbolic link to another place in the workspace, the same call on the
// path it leads to (absolute, under the workspace folder as given), that path relative to its
// folder, and true; call and false otherwise. cwd is the session's working folder (a relative
// path is under it); leads is the workspace's tools.Workspace.Leads. The caller checks that
// the tool is the built-in one.
func Led(call llm.ToolCall, cwd string, leads func(path string) (root, rel string, ok bool)) (llm.ToolCall, string, bool) {
	switch call.Name {
	case tools.NameRead, tools.NameWrite, tools.NameEdit, tools.NameGrep, tools.NameFind, tools.NameLs:
	default:
		return call, "", false
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(call.Arguments, &args) != nil {
		return call, "", false
	}
	var p string
	if json.Unmarshal(args["path"], &p) != nil || p == "" {
		return call, "", false
	}
	root, rel, ok := leads(p)
	if !ok {
		return call, "", false
	}
	led := filepath.Join(root, rel)
	asWritten := p
	if !filepath.IsAbs(asWritten) {
		asWritten = filepath.Join(cwd, asWritten)
	}
	if filepath.Clean(asWritten) == led {
		return call, "", false
	}
	args["path"], _ = json.Marshal(led)
	out := call
	out.Arguments, _ = json.Marshal(args)
	return out, rel, true
}

// Stricter returns the stricter of v, the verdict on a call as written, and led, the verdict
// on the call where its path leads (Led; rel is that place): deny > ask > allow. led wins
// only when it is stricter, and then says where it looked ("through a link to rel"), so that
// no rule on paths is passed by a link.
func Stricter(v, led permissions.Verdict, rel string) permissions.Verdict {
	if strictness(led.Decision) > strictness(v.Decision) {
		led.Part = "through a link to " + rel
		return led
	}
	return v
}

// strictness orders decisions: deny > ask > allow.
func strictness(d permissions.Decision) int {
	switch d {
	case permissions.Deny:
		return 2
	case permissions.Ask:
		return 1
	}
	return 0
}
