// This file tests the modes offered and their check, which asks a mode keeps, where a
// write may run without asking on a real workspace (links and protected paths included),
// plan mode's parts and the catalog.

package modes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

func ids(ms []Info) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// bypassPermissions is offered only when the settings allow it; Check names the modes
// offered, or the setting.
func TestAvailableAndCheck(t *testing.T) {
	without, with := Available(false), Available(true)
	if !slices.Equal(ids(without), []string{"default", "acceptEdits", "plan", "auto"}) || !slices.Equal(ids(with), []string{"default", "acceptEdits", "plan", "auto", "bypassPermissions"}) {
		t.Fatalf("offered %v and %v", ids(without), ids(with))
	}
	if err := Check(prompt.ModePlan, without); err != nil {
		t.Errorf("plan: %v", err)
	}
	if err := Check(prompt.ModeBypass, without); err == nil || !strings.Contains(err.Error(), `"allowBypassPermissions": true`) {
		t.Errorf("bypass without the setting: %v", err)
	}
	if err := Check("yolo", with); err == nil || err.Error() != `mode must be one of default, acceptEdits, plan, auto, bypassPermissions, not "yolo"` {
		t.Errorf("an unknown mode: %v", err)
	}
}

// An ask from a rule or a settings layer is explicit; one from the tool's nature or a
// default is not.
func TestExplicitAsk(t *testing.T) {
	for _, c := range []struct {
		v    permissions.Verdict
		want bool
	}{
		{permissions.Verdict{Decision: permissions.Ask, Source: "user settings"}, true},
		{permissions.Verdict{Decision: permissions.Ask, Source: "built-in"}, false},
		{permissions.Verdict{Decision: permissions.Ask, Source: "default (writes ask)"}, false},
		{permissions.Verdict{Decision: permissions.Allow, Source: "user settings"}, false},
	} {
		if got := ExplicitAsk(c.v); got != c.want {
			t.Errorf("ExplicitAsk(%+v) = %v", c.v, got)
		}
	}
}

func call(path string) llm.ToolCall {
	args, _ := json.Marshal(map[string]string{"path": path})
	return llm.ToolCall{Name: tools.NameWrite, Arguments: args}
}

// On a real workspace: a file inside is inside; the protected paths (.git, .vscode: even a
// link named .vscode leading inside), a path outside, a link leading out or to a protected
// path (dangling), and a call without path are not.
func TestInsideWorkspace(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	for _, d := range []string{ws + "/src", ws + "/.git", root + "/outside"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{ws + "/out": root + "/outside", ws + "/docs.md": ".git/config", ws + "/editor": ws + "/src", ws + "/.vscode": ws + "/src"} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	w, err := tools.NewWorkspace(ws, []string{ws})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for path, want := range map[string]bool{
		"src/main.go":          true,
		ws + "/src/new.go":     true,
		"editor/x.go":          true,
		".git/config":          false,
		".vscode/tasks.json":   false,
		"docs.md":              false,
		"out/x.txt":            false,
		root + "/outside/x.go": false,
		".":                    false,
	} {
		if got := InsideWorkspace(w, call(path)); got != want {
			t.Errorf("InsideWorkspace(%s) = %v, want %v", path, got, want)
		}
	}
	if InsideWorkspace(w, llm.ToolCall{Name: tools.NameWrite, Arguments: json.RawMessage(`{}`)}) {
		t.Error("a call without path is inside")
	}
}

// exit_plan_mode's spec, plan and refusals; the catalog offers it first, then the inner
// catalog's tools, and without it only those.
func TestPlanParts(t *testing.T) {
	spec := ExitPlanSpec()
	if spec.Name != ExitPlanName || spec.Execute != nil || spec.ExecutionMode != toolexec.Sequential || !json.Valid(spec.Parameters) {
		t.Fatalf("spec %+v", spec)
	}
	if got := PlanText(json.RawMessage(`{"plan":"1. read\n2. write"}`)); got != "1. read\n2. write" {
		t.Errorf("PlanText = %q", got)
	}
	if got := PlanText(json.RawMessage(`not json`)); got != "" {
		t.Errorf("PlanText of bad arguments = %q", got)
	}
	if r := PlanBlock("write").Reason; !strings.Contains(r, "write cannot change files now") || !strings.Contains(r, ExitPlanName) {
		t.Errorf("PlanBlock: %s", r)
	}
	if r := PlanBlockMCP("mcp__s__t").Reason; !strings.Contains(r, "mcp__s__t is an MCP tool") {
		t.Errorf("PlanBlockMCP: %s", r)
	}
	inner := Catalog{ExitPlan: &toolexec.Tool{Name: "inner_tool"}} // a catalog standing in for the MCP servers'
	c := Catalog{Inner: innerCatalog{inner}, ExitPlan: &spec}
	var names []string
	for _, tl := range c.Always() {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{ExitPlanName, "inner_tool"}) {
		t.Errorf("Always = %v", names)
	}
	if _, ok := c.Lookup(ExitPlanName); !ok {
		t.Error("exit_plan_mode not found")
	}
	if c.Version() != 7 {
		t.Errorf("Version = %d, want the inner catalog's 7", c.Version())
	}
	if _, ok := (Catalog{}).Lookup(ExitPlanName); ok {
		t.Error("a catalog without exit_plan_mode found it")
	}
	if (Catalog{}).Version() != 0 || len((Catalog{}).Always()) != 0 {
		t.Error("an empty catalog has tools or a version")
	}
}

// innerCatalog is a toolexec.Catalog over a Catalog, at version 7.
type innerCatalog struct{ Catalog }

func (innerCatalog) Version() uint64 { return 7 }

// A loaded session starts in its saved mode unless that is bypassPermissions, none, or a mode
// no longer offered (then default); a new one in the settings' mode, which must be offered.
func TestStart(t *testing.T) {
	offered, withBypass := Available(false), Available(true)
	cases := []struct {
		saved, want string
		loaded      bool
		available   []Info
		mode, err   string
	}{
		{"auto", "plan", true, offered, "auto", ""},
		{"", "plan", true, offered, "default", ""},
		{"bypassPermissions", "", true, withBypass, "default", ""},
		{"gone", "", true, offered, "default", ""},
		{"auto", "plan", false, offered, "plan", ""},
		{"auto", "", false, offered, "default", ""},
		{"", "bypassPermissions", false, withBypass, "bypassPermissions", ""},
		{"", "bypassPermissions", false, offered, "", `mode "bypassPermissions" is not offered: the user settings do not say "allowBypassPermissions": true`},
		{"", "fast", false, offered, "", `mode must be one of default, acceptEdits, plan, auto, not "fast"`},
	}
	for _, tc := range cases {
		mode, err := Start(tc.saved, tc.want, tc.loaded, tc.available)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if mode != tc.mode || msg != tc.err {
			t.Errorf("Start(%q, %q, loaded %v) = %q, %q; want %q, %q", tc.saved, tc.want, tc.loaded, mode, msg, tc.mode, tc.err)
		}
	}
}

// exit_plan_mode, once it runs, tells the model the mode it is in then, read when it runs.
func TestExitPlanTool(t *testing.T) {
	mode := prompt.ModePlan
	tool := ExitPlanTool(func() string { return mode })
	if tool.Name != ExitPlanName || tool.ExecutionMode != toolexec.Sequential {
		t.Fatalf("tool %+v", tool)
	}
	mode = prompt.ModeAcceptEdits
	res, err := tool.Execute(context.Background(), toolexec.Call{ID: "c1"}, nil)
	if err != nil || len(res.Content) != 1 || res.Content[0].Text != "The user approved the plan. You are now in acceptEdits mode: carry it out." {
		t.Errorf("Execute = %+v, %v", res, err)
	}
}
