// This file holds plan mode's parts: exit_plan_mode's spec and the plan its call carries,
// the refusals of calls that would change files, and the catalog that offers the tool.

package modes

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/toolexec"
)

// ExitPlanName is the built-in tool the model calls to put its plan to the person and
// leave plan mode. It is offered in every mode (so the tools stay the same bytes), and
// outside plan mode its call is refused.
const ExitPlanName = "exit_plan_mode"

// PlanBlock is the refusal of the call of tool name that would change files in plan mode.
func PlanBlock(name string) *toolexec.Block {
	return &toolexec.Block{Reason: fmt.Sprintf("You are in plan mode: %s cannot change files now. Read and explore, then call %s with your plan; once the user approves it, you can make the changes.", name, ExitPlanName)}
}

// PlanBlockMCP is the refusal of MCP tool name, which its server does not mark read-only,
// in plan mode.
func PlanBlockMCP(name string) *toolexec.Block {
	return &toolexec.Block{Reason: fmt.Sprintf("You are in plan mode: %s is an MCP tool its server does not mark read-only (readOnlyHint), so it cannot run now. Use read-only tools to explore, then call %s with your plan; once the user approves it, you can use it.", name, ExitPlanName)}
}

// PlanText is the plan of an exit_plan_mode call's arguments ("" when they have none).
func PlanText(args json.RawMessage) string {
	var a struct {
		Plan string `json:"plan"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Plan
}

// ExitPlanSpec is exit_plan_mode's name, description, parameters and view, without Execute
// (the session's tool tells the model the mode it is in now).
func ExitPlanSpec() toolexec.Tool {
	return toolexec.Tool{
		Name: ExitPlanName,
		Description: "In plan mode only: when your plan is ready, call this with the plan (markdown) to put it to the user. " +
			"If they approve it, plan mode ends and you can make the changes; if not, keep planning with their reason.",
		Parameters:    json.RawMessage(`{"type":"object","properties":{"plan":{"type":"string","minLength":1,"description":"The plan, in markdown."}},"required":["plan"],"additionalProperties":false}`),
		ExecutionMode: toolexec.Sequential,
		View: func(json.RawMessage, any) toolexec.View {
			return toolexec.View{Kind: toolexec.KindSwitchMode, Title: "Leave plan mode"}
		},
	}
}

// ExitPlanTool is exit_plan_mode: by the time it runs, the person allowed the plan and the
// session has left plan mode; it tells the model the mode it is in now (mode returns it).
func ExitPlanTool(mode func() string) toolexec.Tool {
	t := ExitPlanSpec()
	t.Execute = func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
		return toolexec.TextResult(fmt.Sprintf("The user approved the plan. You are now in %s mode: carry it out.", mode())), nil
	}
	return t
}

// Catalog is a session's catalog (toolexec.Catalog): exit_plan_mode first, when ExitPlan
// is set (it never changes), then Inner's tools (its MCP servers').
type Catalog struct {
	// Inner is the catalog of the session's MCP servers; nil for none.
	Inner toolexec.Catalog
	// ExitPlan is exit_plan_mode; nil for a session without it (an explore subagent).
	ExitPlan *toolexec.Tool
}

// Lookup implements toolexec.Catalog.
func (c Catalog) Lookup(name string) (toolexec.Tool, bool) {
	if name == ExitPlanName && c.ExitPlan != nil {
		return *c.ExitPlan, true
	}
	if c.Inner == nil {
		return toolexec.Tool{}, false
	}
	return c.Inner.Lookup(name)
}

// Always implements toolexec.Catalog.
func (c Catalog) Always() []toolexec.Tool {
	var out []toolexec.Tool
	if c.ExitPlan != nil {
		out = append(out, *c.ExitPlan)
	}
	if c.Inner != nil {
		out = append(out, c.Inner.Always()...)
	}
	return out
}

// Version implements toolexec.Catalog: exit_plan_mode never changes, so it is Inner's
// version.
func (c Catalog) Version() uint64 {
	if c.Inner == nil {
		return 0
	}
	return c.Inner.Version()
}
