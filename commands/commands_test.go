package commands

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/xdg/xdgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, text         string
		desc, hint, prompt string
	}{
		{"a", "---\r\ndescription: \"Quoted\"\r\nargument-hint: 'file'\r\n---\r\nDo $ARGUMENTS.\r\n", "Quoted", "file", "Do $ARGUMENTS."},
		{"b", "# Title line\n\nBody with $ARGUMENTS", "Title line", "arguments", "# Title line\n\nBody with $ARGUMENTS"},
		{"c", "---\ndescription: unterminated\nBody", "description: unterminated", "", "---\ndescription: unterminated\nBody"},
		{"d", "", "/d", "", ""},
		{"e", "---\ndescription: x: y\n---", "x: y", "", ""},
	} {
		c := Parse(tc.name, tc.text)
		hint := ""
		if c.Input != nil {
			hint = c.Input.Hint
		}
		if c.Description != tc.desc || hint != tc.hint || c.Template != tc.prompt {
			t.Errorf("%s: description %q hint %q template %q; want %q %q %q", tc.name, c.Description, hint, c.Template, tc.desc, tc.hint, tc.prompt)
		}
	}
}

func TestExpand(t *testing.T) {
	for _, tc := range []struct{ template, args, want string }{
		{"Fix #$ARGUMENTS, then test $ARGUMENTS.", "42", "Fix #42, then test 42."},
		{"Review.", "", "Review."},
		{"Review.", "the parser", "Review.\n\nthe parser"},
		{"Use $ARGUMENTS", "", "Use "},
	} {
		if got := Expand(tc.template, tc.args); got != tc.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tc.template, tc.args, got, tc.want)
		}
	}
}

func TestNames(t *testing.T) {
	for name, ok := range map[string]bool{"help": true, "fix-issue_2": true, "..": false, "a/b": false, "a.b": false, "": false, "-x": false} {
		if nameRE.MatchString(name) != ok {
			t.Errorf("name %q valid: %v, want %v", name, !ok, ok)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The catalogue: the built-in commands first, then the person's own in name order; a
// workspace's command replaces the user's of the same name, a file named like a built-in
// one is left out, and a workspace's link or a file too long is left out and reported. A
// workspace folder that is not given (not trusted) gives nothing.
func TestList(t *testing.T) {
	env := xdgtest.Isolate(t)
	user := filepath.Join(env.Config, "pid", "commands")
	root := t.TempDir()
	write(t, filepath.Join(user, "fix.md"), "Fix $ARGUMENTS.")
	write(t, filepath.Join(user, "both.md"), "The user's.")
	write(t, filepath.Join(user, "help.md"), "Not help.")
	write(t, filepath.Join(user, "no.txt"), "Not a command.")
	write(t, filepath.Join(WorkspaceFolder(root), "both.md"), "---\ndescription: the workspace's\n---\nThe workspace's.")
	write(t, filepath.Join(WorkspaceFolder(root), "big.md"), strings.Repeat("x", maxBytes+1))
	secret := filepath.Join(t.TempDir(), "secret.md")
	write(t, secret, "A file from elsewhere.")
	if err := os.Symlink(secret, filepath.Join(WorkspaceFolder(root), "link.md")); err != nil {
		t.Fatal(err)
	}
	var reports []string
	report := func(key, msg string) { reports = append(reports, msg) }
	list := List(root, report)
	var names []string
	for _, c := range list[len(Builtins):] {
		names = append(names, c.Name+"="+c.Source)
	}
	if got := strings.Join(names, " "); got != "both=workspace fix=user" {
		t.Errorf("own commands %q, want both=workspace fix=user", got)
	}
	if c := list[len(Builtins)]; c.Description != "the workspace's" || c.Template != "The workspace's." {
		t.Errorf("both: %+v", c)
	}
	if got := strings.Join(reports, "\n"); !strings.Contains(got, "big.md is left out: it is longer than 64 KiB") || !strings.Contains(got, "link.md is left out: a symbolic link") {
		t.Errorf("reports:\n%s", got)
	}
	untrusted := List("", func(string, string) {})
	if len(untrusted) != len(Builtins)+2 || untrusted[len(Builtins)].Source != User {
		t.Errorf("without the workspace folder: %+v", untrusted)
	}
}

func TestFind(t *testing.T) {
	list := []Command{{Info: Info{Name: "fix"}, Source: User}}
	for text, want := range map[string]string{"/fix 42 now": "fix|42 now", "/fix": "fix|", "/fix\n\tit": "fix|it", "/fixes": "", "/usr/bin is empty": "", "fix": "", "/../fix": ""} {
		c, ok := Find(list, text)
		got := ""
		if ok {
			got = c.Name + "|" + c.Args
		}
		if got != want {
			t.Errorf("Find(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestSame(t *testing.T) {
	a := []Info{{Name: "x", Description: "d", Input: &Input{Hint: "h"}}}
	for _, tc := range []struct {
		b    []Info
		same bool
	}{
		{[]Info{{Name: "x", Description: "d", Input: &Input{Hint: "h"}}}, true},
		{[]Info{{Name: "x", Description: "d", Input: &Input{Hint: "other"}}}, false},
		{[]Info{{Name: "x", Description: "d"}}, false},
		{[]Info{{Name: "x", Description: "e", Input: &Input{Hint: "h"}}}, false},
		{nil, false},
	} {
		if Same(a, tc.b) != tc.same {
			t.Errorf("Same(%+v, %+v) = %v", a, tc.b, !tc.same)
		}
	}
}

// A command file added to a watched workspace folder, even one whose commands folder did
// not exist when the watch began, is told; Close ends the watch's goroutine (goleak).
func TestWatcherTellsAChange(t *testing.T) {
	xdgtest.Isolate(t)
	root := t.TempDir()
	changed := make(chan struct{}, 1)
	w := NewWatcher(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}, nil)
	defer w.Close()
	if err := os.Mkdir(filepath.Join(root, ".pid"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.Watch(root)
	// The commands folder appears (seen through .pid's watch), then the file in it (seen
	// once the watch has re-armed on the new folder, or already there when List reads it).
	write(t, filepath.Join(WorkspaceFolder(root), "new.md"), "New.")
	for {
		select {
		case <-changed:
		case <-time.After(10 * time.Second): // a hang guard: the change was never told
			t.Fatal("the new command file was not told")
		}
		if len(List(root, func(string, string) {})) == len(Builtins)+1 {
			return
		}
	}
}

// The texts of the commands that answer by themselves.
func TestTexts(t *testing.T) {
	modes := []Mode{{"default", "Asks."}, {"plan", "Plans."}}
	if got := ModesText("plan", modes); got != "Mode: plan. The modes (`/mode NAME` switches):\n- default: Asks.\n- plan (current): Plans." {
		t.Errorf("ModesText %q", got)
	}
	if ModeSwitched("plan", modes) != "Mode: plan. Plans." || NoMode("x", modes) != `No mode "x": the session is offered default, plan.` {
		t.Error("mode texts")
	}
	cur := &Model{"openai", "a", ""}
	if got := ModelsText(cur, []Model{{"openai", "a", "A"}, {"anthropic", "b", ""}}); got != "Model: openai/a. The models (`/model PROVIDER/ID` switches):\n- openai/a (A), current\n- anthropic/b" {
		t.Errorf("ModelsText %q", got)
	}
	if m, ok := PickModel("anthropic/b", []Model{{"openai", "b", ""}, {"anthropic", "b", "B"}}); !ok || m.Name != "B" {
		t.Errorf("PickModel found %+v, %v; want anthropic/b (B)", m, ok)
	}
	if _, ok := PickModel("anthropic", []Model{{"anthropic", "", ""}, {"anthropic", "b", ""}}); ok {
		t.Error("PickModel took a provider alone for a model")
	}
	if got, failed := Compacted(1200, nil); failed || got != "Compacted the conversation: it was about 1200 tokens; the model now sees a summary of the older messages and the recent ones as they were." {
		t.Errorf("Compacted: %q, %v", got, failed)
	}
	if got, failed := Compacted(1200, errors.New("nothing to compact")); !failed || got != "The conversation was not compacted: nothing to compact" {
		t.Errorf("Compacted after a failure: %q, %v", got, failed)
	}
	if NoModel("x/y", nil) != `No model "x/y": the settings list no models (add them to "models" in the settings).` {
		t.Error("NoModel")
	}
	if got := ServersText([]Server{{"t", "ready", 3, ""}, {"u", "failed", 0, "exit\nstatus 1"}}); got != "MCP servers:\n- t: ready, 3 tools\n- u: failed (exit status 1)" {
		t.Errorf("ServersText %q", got)
	}
	if got := RewindText(Rewind{Prompt: "fix it", Restored: []string{"a"}, Skipped: []string{"b (changed since)"}, Safety: "s1"}); got != "Rewound to before the prompt \"fix it\": the conversation goes on from there; 1 file restored.\n- restored a\n- left as it is: b (changed since)\nFiles left as they are can be restored with session/rewind and force.\nTo undo this rewind, rewind to checkpoint s1." {
		t.Errorf("RewindText %q", got)
	}
}

// What a command sends the model: a person's template with the arguments (even when the
// command is named as a built-in one), /init's and /review's prompts; nothing for a skill's
// (read when it runs) or a built-in command that answers by itself.
func TestPromptText(t *testing.T) {
	call := func(name, source, template, args string) Call {
		return Call{Name: name, Args: args, Command: Command{Info: Info{Name: name}, Source: source, Template: template}}
	}
	for _, c := range []struct {
		call Call
		want string
		ok   bool
	}{
		{call("fix", User, "Fix $ARGUMENTS.", "#42"), "Fix #42.", true},
		{call("fix", Workspace, "Fix it.", "now"), "Fix it.\n\nnow", true},
		{call("init", User, "My own init.", ""), "My own init.", true},
		{call("init", Builtin, "", ""), InitPrompt, true},
		{call("review", Builtin, "", "main"), ReviewPrompt("main"), true},
		{call("init", Skill, "a skill's body", ""), "", false},
		{call("compact", Builtin, "", "focus"), "", false},
		{call("help", Builtin, "", ""), "", false},
	} {
		got, ok := PromptText(c.call)
		if got != c.want || ok != c.ok {
			t.Errorf("PromptText(/%s from %s) = %q, %v; want %q, %v", c.call.Name, c.call.Command.Source, got, ok, c.want, c.ok)
		}
	}
}
