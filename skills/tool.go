// This file holds the skill tool (Tool), which gives the model a skill's instructions, and
// the skills' /NAME commands (Commands).

package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pid-agent/pid/commands"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/mdfile"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// ToolName is the skill tool's name.
const ToolName = "skill"

// toolSchema is the skill tool's parameters. No enum of names: the tool definitions (and
// the provider's prompt cache) stay the same when a skill is added.
const toolSchema = `{"type": "object", "properties": {
  "name": {"type": "string", "minLength": 1, "description": "The skill's name, as the system prompt lists it."}
}, "required": ["name"], "additionalProperties": false}`

// Tool returns the skill tool: it looks the skill named up in list() (a leading "/" is
// dropped) and answers with its ToolText, or fails naming the skills in use. A nil list
// gives the tool without Execute (its name, description and parameters only).
//
// list is called once per call, on the call's goroutine (several calls may run at once):
// it returns the skills of now (Find's). loaded, when not nil, is called with the skill
// found before its text is returned (the session lets read read its folder); it must not
// block.
func Tool(list func() []Skill, loaded func(Skill)) toolexec.Tool {
	t := toolexec.Tool{
		Name: ToolName,
		Description: "Load a skill: instructions for a particular kind of task that the user keeps, listed by name and description in the system prompt. " +
			"It returns the skill's instructions and the files in its folder, which you read with read when the instructions call for them.",
		Parameters: json.RawMessage(toolSchema),
		View: func(args json.RawMessage, _ any) toolexec.View {
			var a struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(args, &a)
			return toolexec.View{Kind: toolexec.KindRead, Title: "Skill: " + mdfile.OneLine(a.Name, 64)}
		},
	}
	if list != nil {
		t.Execute = func(_ context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			return run(call, list(), loaded)
		}
	}
	return t
}

// failure is an error result's text written for the model: whole sentences.
type failure string

func (f failure) Error() string { return string(f) }

// run is the skill tool's Execute over the skills of now.
func run(call toolexec.Call, list []Skill, loaded func(Skill)) (toolexec.Result, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := call.Decode(&a); err != nil {
		return toolexec.Result{}, err
	}
	sk, ok := Lookup(list, strings.TrimPrefix(strings.TrimSpace(a.Name), "/"))
	if !ok {
		var names []string
		for _, x := range list {
			if x.Used() {
				names = append(names, x.Name)
			}
		}
		if len(names) == 0 {
			return toolexec.Result{}, failure(fmt.Sprintf("There is no skill %q: no skill is in use.", mdfile.OneLine(a.Name, 64)))
		}
		return toolexec.Result{}, failure(fmt.Sprintf("There is no skill %q. The skills in use: %s.", mdfile.OneLine(a.Name, 64), strings.Join(names, ", ")))
	}
	if loaded != nil {
		loaded(sk)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(ToolText(sk))},
		Details: map[string]string{"name": sk.Name, "path": sk.Path}}, nil
}

// Commands returns a command for each skill of list in use whose name no other command has
// (have: the built-in ones and the person's command files win, and the first skill of a
// name).
//
// Contract: pure.
func Commands(list []Skill, have []commands.Command) []commands.Command {
	var out []commands.Command
	for _, sk := range list {
		if !sk.Used() {
			continue
		}
		taken := false
		for _, c := range have {
			taken = taken || c.Name == sk.Name
		}
		for _, c := range out {
			taken = taken || c.Name == sk.Name
		}
		if taken {
			continue
		}
		out = append(out, commands.Command{
			Info:     commands.Info{Name: sk.Name, Description: mdfile.OneLine(sk.Description, 100), Input: &commands.Input{Hint: "what to do (optional)"}},
			Source:   commands.Skill,
			Template: CommandText(sk, ""),
			Path:     sk.Path,
		})
	}
	return out
}
