// This file tests the session's mode and model on the ACP face: modes and the mode and
// model configOptions in session/new and session/resume, session/set_mode,
// session/set_config_option for mode and model, current_mode_update and
// config_option_update, and exit_plan_mode as a switch_mode tool call whose permission
// request shows the plan.

package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
)

// userSettings writes the user settings file (under a test XDG_CONFIG_HOME).
func userSettings(t *testing.T, settings string) {
	t.Helper()
	config := filepath.Join(t.TempDir(), "config")
	t.Setenv("XDG_CONFIG_HOME", config)
	if err := os.MkdirAll(filepath.Join(config, "pid"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "pid", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
}

// modeUpdates returns the current_mode_update ids and the mode option's currentValue of
// each config_option_update among ms.
func modeUpdates(t *testing.T, sid string, ms []*msg) (modes, options []string) {
	t.Helper()
	for _, u := range updates(t, sid, ms) {
		switch u.Get("sessionUpdate").String() {
		case "current_mode_update":
			modes = append(modes, u.Get("currentModeId").String())
		case "config_option_update":
			options = append(options, u.Get(`configOptions.#(id=="mode").currentValue`).String())
		}
	}
	return modes, options
}

func TestModesAndConfigOptions(t *testing.T) {
	userSettings(t, `{}`)
	model := newRecordingModel(t)
	c := start(t)
	c.initialize(nil)
	cwd := t.TempDir()
	res, _ := c.result(c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": map[string]any{"pid": json.RawMessage(model.config())}}), nil)
	sid := res.Get("sessionId").String()
	if got := res.Get("modes.currentModeId").String(); got != "default" {
		t.Errorf("session/new's modes.currentModeId %q: %s", got, res.Get("modes").Raw)
	}
	// bypassPermissions is offered only when the user settings allow it.
	if got := res.Get("modes.availableModes.#.id").Raw; got != `["default","acceptEdits","plan","auto"]` {
		t.Errorf("availableModes %s", got)
	}
	if got := res.Get("configOptions.#.id").Raw; got != `["mode","model","thought_level"]` {
		t.Errorf("configOptions ids %s, want mode, model, thought_level", got)
	}
	mode := res.Get(`configOptions.#(id=="mode")`)
	if mode.Get("category").String() != "mode" || mode.Get("type").String() != "select" || mode.Get("currentValue").String() != "default" ||
		mode.Get("options.#.value").Raw != `["default","acceptEdits","plan","auto"]` {
		t.Errorf("the mode option: %s", mode.Raw)
	}
	if m := res.Get(`configOptions.#(id=="model")`); m.Get("currentValue").String() != "openai/m" || m.Get("category").String() != "model" {
		t.Errorf("the model option: %s", m.Raw)
	}

	// session/set_mode: the updates come before its (empty) answer.
	r, before := c.result(c.request("session/set_mode", map[string]any{"sessionId": sid, "modeId": "auto"}), nil)
	if r.Raw != "{}" {
		t.Errorf("session/set_mode answered %s", r.Raw)
	}
	if modes, opts := modeUpdates(t, sid, before); len(modes) != 1 || modes[0] != "auto" || len(opts) != 1 || opts[0] != "auto" {
		t.Errorf("after set_mode auto: current_mode_update %v, config_option_update's mode %v", modes, opts)
	}
	// The same mode again changes nothing and says nothing.
	_, before = c.result(c.request("session/set_mode", map[string]any{"sessionId": sid, "modeId": "auto"}), nil)
	if modes, opts := modeUpdates(t, sid, before); len(modes)+len(opts) != 0 {
		t.Errorf("setting the mode it is in sent %v %v", modes, opts)
	}
	c.wantError(c.request("session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}), -32602)
	c.wantError(c.request("session/set_mode", map[string]any{"sessionId": sid, "modeId": "bypassPermissions"}), -32602)
	c.wantError(c.request("session/set_mode", map[string]any{"sessionId": "nope", "modeId": "plan"}), -32002)

	// session/set_config_option for the mode.
	set, before := c.result(c.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "value": "plan"}), nil)
	if got := set.Get(`configOptions.#(id=="mode").currentValue`).String(); got != "plan" {
		t.Errorf("set_config_option mode plan answered %s", set.Raw)
	}
	if modes, _ := modeUpdates(t, sid, before); len(modes) != 1 || modes[0] != "plan" {
		t.Errorf("set_config_option mode plan: current_mode_update %v", modes)
	}
	c.wantError(c.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "value": "yolo"}), -32602)

	resumed, _ := c.result(c.request("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}), nil)
	if got := resumed.Get("modes.currentModeId").String(); got != "plan" {
		t.Errorf("session/resume's modes %s", resumed.Get("modes").Raw)
	}
	// The mode is saved with the session: a load after a close comes back in it.
	c.result(c.prompt(sid, "hi"), nil)
	c.result(c.request("session/close", map[string]any{"sessionId": sid}), nil)
	loaded, _ := c.result(c.request("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}), nil)
	if loaded.Get("modes.currentModeId").String() != "plan" || loaded.Get(`configOptions.#(id=="mode").currentValue`).String() != "plan" {
		t.Errorf("session/load's modes %s and configOptions %s", loaded.Get("modes").Raw, loaded.Get("configOptions").Raw)
	}
	c.stop()
}

// A plan the person rejects keeps the session in plan mode, and says nothing of modes.
func TestExitPlanModeKeepPlanning(t *testing.T) {
	userSettings(t, `{}`)
	c := start(t)
	c.initialize(nil)
	cfg := script(`"mode":"plan"`, toolTurn(call("p1", "exit_plan_mode", `{"plan":"1. Nothing"}`)), textTurn("still planning"))
	sid := c.newSession(t.TempDir(), cfg)
	_, before := c.result(c.prompt(sid, "plan it"), func(m *msg) {
		c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}})
	})
	if modes, opts := modeUpdates(t, sid, before); len(modes)+len(opts) != 0 {
		t.Errorf("a rejected plan sent mode updates %v %v", modes, opts)
	}
	failed := false
	for _, u := range updates(t, sid, before) {
		failed = failed || (u.Get("sessionUpdate").String() == "tool_call_update" && u.Get("status").String() == "failed")
	}
	if !failed {
		t.Errorf("the rejected exit_plan_mode did not end failed")
	}
	resumed, _ := c.result(c.request("session/resume", map[string]any{"sessionId": sid, "cwd": t.TempDir(), "mcpServers": []any{}}), nil)
	if got := resumed.Get("modes.currentModeId").String(); got != "plan" {
		t.Errorf("after a rejected plan the mode is %q", got)
	}
	c.stop()
}

// The model option lists the settings' models; setting it changes the model the next
// request goes to.
func TestModelConfigOption(t *testing.T) {
	model := newRecordingModel(t)
	userSettings(t, `{"models":[{"provider":"openai","id":"m","name":"Em","baseUrl":"`+model.URL+`/v1"},{"provider":"openai","id":"m2","name":"Em two","baseUrl":"`+model.URL+`/v1"}]}`)
	c := start(t)
	c.initialize(nil)
	cwd := t.TempDir()
	res, _ := c.result(c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": map[string]any{"pid": json.RawMessage(model.config())}}), nil)
	sid := res.Get("sessionId").String()
	opt := res.Get(`configOptions.#(id=="model")`)
	if opt.Get("currentValue").String() != "openai/m" || opt.Get("options.#.value").Raw != `["openai/m","openai/m2"]` || opt.Get("options.1.name").String() != "Em two" {
		t.Fatalf("the model option: %s", opt.Raw)
	}
	set, _ := c.result(c.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "openai/m2"}), nil)
	if got := set.Get(`configOptions.#(id=="model").currentValue`).String(); got != "openai/m2" {
		t.Errorf("after setting openai/m2: %s", set.Raw)
	}
	c.result(c.prompt(sid, "hi"), nil)
	if got := gjson.GetBytes(model.body(0), "model").String(); got != "m2" {
		t.Errorf("the request went to model %q, want m2", got)
	}
	c.wantError(c.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "openai/unlisted"}), -32602)
	c.stop()
}

// exit_plan_mode is a switch_mode tool call; its permission request shows the plan and
// offers the modes to go on in; the chosen one is announced before the call ends.
func TestExitPlanMode(t *testing.T) {
	userSettings(t, `{}`)
	c := start(t)
	c.initialize(nil)
	plan := "1. Add the test\n2. Fix the bug"
	planArgs, _ := json.Marshal(map[string]string{"plan": plan})
	cfg := script(`"mode":"plan"`, toolTurn(call("p1", "exit_plan_mode", string(planArgs))), textTurn("done"))
	sid := c.newSession(t.TempDir(), cfg)
	var asked []*msg
	_, before := c.result(c.prompt(sid, "plan it"), func(m *msg) {
		asked = append(asked, m)
		c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "plan:acceptEdits"}})
	})
	if len(asked) != 1 || asked[0].Method != "session/request_permission" {
		t.Fatalf("want one permission request, got %d", len(asked))
	}
	q := asked[0]
	if got := q.get("params.toolCall.kind").String(); got != "switch_mode" {
		t.Errorf("the request's kind %q", got)
	}
	if got := q.get("params.toolCall.content.0.content.text").String(); got != plan {
		t.Errorf("the request shows %q, not the plan", got)
	}
	if got := q.get("params.options.#.optionId").Raw; got != `["plan:default","plan:acceptEdits","plan:auto","reject_once"]` {
		t.Errorf("the plan's options %s", got)
	}
	var kinds []string
	ended := false
	for _, u := range updates(t, sid, before) {
		switch u.Get("sessionUpdate").String() {
		case "tool_call":
			kinds = append(kinds, u.Get("kind").String())
		case "current_mode_update":
			if ended {
				t.Errorf("current_mode_update after the call ended")
			}
		case "tool_call_update":
			ended = ended || u.Get("status").String() == "completed"
		}
	}
	if len(kinds) != 1 || kinds[0] != "switch_mode" {
		t.Errorf("tool_call kinds %v", kinds)
	}
	if modes, opts := modeUpdates(t, sid, before); len(modes) != 1 || modes[0] != "acceptEdits" || len(opts) != 1 || opts[0] != "acceptEdits" {
		t.Errorf("current_mode_update %v, config_option_update's mode %v, want acceptEdits", modes, opts)
	}
	if !ended {
		t.Errorf("exit_plan_mode did not complete")
	}
	c.stop()
}
