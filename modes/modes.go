// Package modes holds what a session's modes are (default, acceptEdits, plan, auto,
// bypassPermissions) apart from the session that is in one: the list offered (Available)
// and its check (Check), which "ask" a mode never skips (ExplicitAsk), where acceptEdits
// and auto let a write run without asking (InsideWorkspace), and plan mode's parts: the
// exit_plan_mode tool's spec (ExitPlanSpec), the refusals of calls that would change files
// (PlanBlock, PlanBlockMCP), and the catalog that offers exit_plan_mode in every mode
// (Catalog). The entry points are Available and Catalog.
//
// This file holds the modes offered and their check.
package modes

import (
	"fmt"
	"strings"

	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/prompt"
)

// Info describes a mode, as session/new's modes.availableModes lists it.
type Info struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Modes is a session's mode and the modes it may switch to (session/new's modes).
type Modes struct {
	CurrentModeID  string `json:"currentModeId"`
	AvailableModes []Info `json:"availableModes"`
}

// all are every mode, in the order they are offered.
var all = []Info{
	{prompt.ModeDefault, "Default", "Changing files and running commands ask first, unless a rule or an \"always\" answer allows them."},
	{prompt.ModeAcceptEdits, "Accept edits", "Writes and edits inside the workspace run without asking; commands ask."},
	{prompt.ModePlan, "Plan", "Nothing changes files: the agent reads, runs commands in a read-only sandbox and proposes a plan."},
	{prompt.ModeAuto, "Auto", "Edits inside the workspace and sandboxed commands run without asking; leaving the sandbox asks."},
	{prompt.ModeBypass, "Bypass permissions", "Nothing asks; only deny rules stop a call."},
}

// Available returns the modes offered, in order: bypassPermissions only when the user
// settings allow it (allowBypass).
func Available(allowBypass bool) []Info {
	out := make([]Info, 0, len(all))
	for _, m := range all {
		if m.ID == prompt.ModeBypass && !allowBypass {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Start returns the mode a session starts in: a loaded one's saved mode (bypassPermissions
// loads as default, and so does a mode no longer offered, or none), else want (the settings'
// mode; "" for default), which must be one of available (Check's error otherwise).
func Start(saved, want string, loaded bool, available []Info) (string, error) {
	if loaded {
		if saved == "" || saved == prompt.ModeBypass || Check(saved, available) != nil {
			return prompt.ModeDefault, nil
		}
		return saved, nil
	}
	if want == "" {
		return prompt.ModeDefault, nil
	}
	if err := Check(want, available); err != nil {
		return "", err
	}
	return want, nil
}

// Check returns why id is no mode of available (nil when it is one), naming the modes
// offered, or the setting that offers bypassPermissions.
func Check(id string, available []Info) error {
	var ids []string
	for _, m := range available {
		if m.ID == id {
			return nil
		}
		ids = append(ids, m.ID)
	}
	if id == prompt.ModeBypass {
		return fmt.Errorf(`mode %q is not offered: the user settings do not say "allowBypassPermissions": true`, id)
	}
	return fmt.Errorf("mode must be one of %s, not %q", strings.Join(ids, ", "), id)
}

// ExplicitAsk reports whether a verdict to ask comes from a rule or a settings layer (an
// "ask" the user wrote, which every mode but bypassPermissions keeps), not from the tool's
// nature.
func ExplicitAsk(v permissions.Verdict) bool {
	return v.Decision == permissions.Ask && v.Source != "built-in" && !strings.HasPrefix(v.Source, "default")
}
