// This file writes what the built-in commands that do not call the model show the person:
// /plan's checklist, /mode's and /model's lists and switches, /mcp's servers, /rewind's
// outcome. The session layer does what they ask; these are only its words.

package commands

import (
	"fmt"
	"strings"

	"github.com/pid-agent/pid/event"
)

// PlanText is /plan's text: the plan's entries as a checklist ("No plan yet." when the
// session has none, ok false). Pure.
func PlanText(entries []event.PlanEntry, ok bool) string {
	if !ok {
		return "No plan yet."
	}
	if len(entries) == 0 {
		return "The plan is empty."
	}
	var b strings.Builder
	b.WriteString("Plan:")
	for _, t := range entries {
		mark := "[ ]"
		switch t.Status {
		case "completed":
			mark = "[x]"
		case "in_progress":
			mark = "[~]"
		}
		fmt.Fprintf(&b, "\n- %s %s", mark, t.Content)
		if t.Priority == "high" || t.Priority == "low" {
			fmt.Fprintf(&b, " (%s priority)", t.Priority)
		}
	}
	return b.String()
}

// Mode is a mode as /mode shows it.
type Mode struct{ ID, Description string }

// ModesText is /mode's text without an argument: the mode, and the modes offered. Pure.
func ModesText(current string, modes []Mode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Mode: %s. The modes (`/mode NAME` switches):\n", current)
	for _, a := range modes {
		mark := ""
		if a.ID == current {
			mark = " (current)"
		}
		fmt.Fprintf(&b, "- %s%s: %s\n", a.ID, mark, a.Description)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ModeSwitched is /mode's text once the session switched to id (found among modes or
// not). Pure.
func ModeSwitched(id string, modes []Mode) string {
	for _, a := range modes {
		if a.ID == id {
			return fmt.Sprintf("Mode: %s. %s", id, a.Description)
		}
	}
	return "Mode: " + id + "."
}

// NoMode is /mode's text for an id that is none of modes. Pure.
func NoMode(id string, modes []Mode) string {
	ids := make([]string, len(modes))
	for i, a := range modes {
		ids[i] = a.ID
	}
	return fmt.Sprintf("No mode %q: the session is offered %s.", id, strings.Join(ids, ", "))
}

// Model is a model as /model shows it, named PROVIDER/ID.
type Model struct{ Provider, ID, Name string }

// Value is the model's PROVIDER/ID.
func (m Model) Value() string { return m.Provider + "/" + m.ID }

// ModelsText is /model's text without an argument: the session's model (nil: none), and the
// settings' models. Pure.
func ModelsText(current *Model, models []Model) string {
	var b strings.Builder
	if current != nil {
		fmt.Fprintf(&b, "Model: %s.", current.Value())
	} else {
		b.WriteString("The session has no model.")
	}
	if len(models) == 0 {
		b.WriteString(` No other model is listed: add them to "models" in the settings.`)
		return b.String()
	}
	b.WriteString(" The models (`/model PROVIDER/ID` switches):")
	for _, m := range models {
		fmt.Fprintf(&b, "\n- %s", m.Value())
		if m.Name != "" {
			fmt.Fprintf(&b, " (%s)", m.Name)
		}
		if current != nil && m.Value() == current.Value() {
			b.WriteString(", current")
		}
	}
	return b.String()
}

// PickModel returns the model of models that arg, /model's argument, names by its
// PROVIDER/ID (Value); false when none does. Pure.
func PickModel(arg string, models []Model) (Model, bool) {
	for _, m := range models {
		if m.Value() == arg {
			return m, true
		}
	}
	return Model{}, false
}

// ModelSwitched is /model's text once the session switched to m. Pure.
func ModelSwitched(m Model) string {
	name := m.Value()
	if m.Name != "" {
		name += " (" + m.Name + ")"
	}
	return "Model: " + name + ", from the next model call on."
}

// NoModel is /model's text for an argument that is none of models. Pure.
func NoModel(arg string, models []Model) string {
	if len(models) == 0 {
		return fmt.Sprintf(`No model %q: the settings list no models (add them to "models" in the settings).`, arg)
	}
	known := make([]string, len(models))
	for i, m := range models {
		known[i] = m.Value()
	}
	return fmt.Sprintf("No model %q among the settings' models: %s.", arg, strings.Join(known, ", "))
}

// Server is an MCP server as /mcp shows it.
type Server struct {
	Name, Status string
	Tools        int
	Error        string
}

// ServersText is /mcp's text: the session's MCP servers and their status. Pure.
func ServersText(servers []Server) string {
	if len(servers) == 0 {
		return "The session has no MCP servers."
	}
	var b strings.Builder
	b.WriteString("MCP servers:")
	for _, srv := range servers {
		fmt.Fprintf(&b, "\n- %s: %s", srv.Name, srv.Status)
		if srv.Status == "ready" {
			fmt.Fprintf(&b, ", %d tools", srv.Tools)
		}
		if srv.Error != "" {
			fmt.Fprintf(&b, " (%s)", oneLine(srv.Error))
		}
	}
	return b.String()
}

// Rewind is what a rewind did, as /rewind shows it.
type Rewind struct {
	// Prompt is the prompt the conversation went back to before.
	Prompt            string
	Restored, Removed []string
	// Skipped are the files left as they are, with why: "PATH (REASON)".
	Skipped []string
	// Safety is the rewind's own checkpoint, which undoes it.
	Safety string
}

// RewindText is /rewind's text once the rewind was done. Pure.
func RewindText(r Rewind) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rewound to before the prompt %q: the conversation goes on from there", oneLine(r.Prompt))
	switch n := len(r.Restored) + len(r.Removed); n {
	case 0:
		b.WriteString("; no file needed restoring.")
	case 1:
		b.WriteString("; 1 file restored.")
	default:
		fmt.Fprintf(&b, "; %d files restored.", n)
	}
	for _, p := range r.Removed {
		fmt.Fprintf(&b, "\n- removed %s", p)
	}
	for _, p := range r.Restored {
		fmt.Fprintf(&b, "\n- restored %s", p)
	}
	for _, sk := range r.Skipped {
		fmt.Fprintf(&b, "\n- left as it is: %s", sk)
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\nFiles left as they are can be restored with session/rewind and force.")
	}
	fmt.Fprintf(&b, "\nTo undo this rewind, rewind to checkpoint %s.", r.Safety)
	return b.String()
}

// oneLine is a text on one line, cut to 300 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// Compacted is /compact's text, and whether it tells of a failure: the conversation was
// about tokensBefore tokens before the compaction, or err says why it was not compacted.
// Pure.
func Compacted(tokensBefore int, err error) (string, bool) {
	if err != nil {
		return "The conversation was not compacted: " + err.Error(), true
	}
	return fmt.Sprintf("Compacted the conversation: it was about %d tokens; the model now sees a summary of the older messages and the recent ones as they were.", tokensBefore), false
}
