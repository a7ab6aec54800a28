// This file tests skills and agent files through the real daemon (issue 39): skills/list's
// discovery order and precedence (the workspace's over the person's, .agents over .claude
// over .opencode), an untrusted folder's skills ignored and named in its trust question,
// allowed-tools ignored with a warning, a skill folder linked outside refused, a BOM
// accepted; once trusted, the system prompt lists the skills, the skill tool returns the
// body and the files beside it, and /NAME sends the body before the person's text.

package rpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// skillFile is a SKILL.md with the given front matter lines and body.
func skillFile(front, body string) string { return "---\n" + front + "\n---\n" + body + "\n" }

// homeEnv returns an environment whose HOME is a new folder of the test's, with the
// session's XDG folders; home is that folder and config is $XDG_CONFIG_HOME.
func homeEnv(t *testing.T) (env []string, home, config string) {
	t.Helper()
	env = sessionEnv(t)
	home = filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	return append(env, "HOME="+home), home, strings.TrimPrefix(env[0], "XDG_CONFIG_HOME=")
}

// byName returns the entries of a skills/list or agents/list answer by name and path.
func listed(res gjson.Result, key string) map[string]gjson.Result {
	out := map[string]gjson.Result{}
	for _, s := range res.Get(key).Array() {
		out[s.Get("name").String()+" "+s.Get("path").String()] = s
	}
	return out
}

func TestSkillsNative(t *testing.T) {
	env, home, config := homeEnv(t)
	wsWriteFile(t, filepath.Join(home, ".claude", "skills", "deploy", "SKILL.md"), skillFile("name: deploy\ndescription: The person's deploy", "USER DEPLOY BODY"))
	wsWriteFile(t, filepath.Join(home, ".agents", "skills", "lint", "SKILL.md"), skillFile("description: Lints the code", "LINT BODY"))
	wsWriteFile(t, filepath.Join(config, "pid", "skills", "lint", "SKILL.md"), skillFile("description: A second lint", "LINT TWO"))
	base, ws := newWorkspaceDir(t, map[string]string{
		".agents/skills/deploy/SKILL.md":      skillFile("name: deploy\ndescription: >-\n  Deploys the\n  workspace", "WS DEPLOY BODY: run scripts/go.sh"),
		".agents/skills/deploy/scripts/go.sh": "echo go\n",
		".agents/skills/deploy/reference.md":  "the reference\n",
		".claude/skills/deploy/SKILL.md":      skillFile("description: Claude's deploy", "CLAUDE DEPLOY"),
		".claude/skills/guarded/SKILL.md":     skillFile("description: Has allowed tools\nallowed-tools: Bash(rm:*)", "GUARDED"),
		".opencode/skills/bommed/SKILL.md":    "\ufeff" + skillFile("description: Starts with a BOM", "BOM BODY"),
		".opencode/skills/broken/SKILL.md":    "---\ndescription: [unclosed\n---\nbody\n",
		"notes.txt":                           "plain\n",
	})
	outside := filepath.Join(base, "elsewhere")
	wsWriteFile(t, filepath.Join(outside, "SKILL.md"), skillFile("description: Outside", "OUTSIDE BODY"))
	if err := os.Symlink(outside, filepath.Join(ws, ".claude", "skills", "escape")); err != nil {
		t.Fatal(err)
	}
	srv := newFakeOpenAI(t,
		sseAnswer(textAnswer("hello")...),
		callsAnswer([3]string{"k1", "skill", `{"name":"deploy"}`}, [3]string{"k2", "skill", `{"name":"nope"}`}),
		sseAnswer(textAnswer("loaded")...),
		sseAnswer(textAnswer("deploying")...),
	)
	d := startProcess(t, processOptions{Env: append(env, e2eEnv...)})
	initWorkspace(d, obj{"trust": true}, ws)
	newID := d.request("session/new", obj{"cwd": ws, "model": e2eModel(srv)})
	req := d.await("workspace/requestTrust", func(m *wireMsg) bool { return m.isRequest() && m.method() == "workspace/requestTrust" })
	sid := d.response(newID).get("result.sessionId").String()

	// Untrusted: the workspace's skills are listed as ignored and named in the question;
	// the person's are used.
	var q struct {
		Ignored []string `json:"ignored"`
	}
	json.Unmarshal([]byte(req.get("params").Raw), &q)
	joined := strings.Join(q.Ignored, "\n")
	for _, want := range []string{"skill: deploy (.agents/skills/deploy/SKILL.md)", "skill: guarded (.claude/skills/guarded/SKILL.md)", "skill: bommed (.opencode/skills/bommed/SKILL.md)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the trust question does not name %q: %q", want, q.Ignored)
		}
	}
	list := d.call("skills/list", obj{"sessionId": sid})
	got := listed(list, "skills")
	wsDeploy := got["deploy "+filepath.Join(ws, ".agents/skills/deploy/SKILL.md")]
	if wsDeploy.Get("source").String() != "workspace" || !strings.Contains(wsDeploy.Get("ignored").String(), "not trusted") {
		t.Errorf("the untrusted workspace's deploy: %s", wsDeploy.Raw)
	}
	userDeploy := got["deploy "+filepath.Join(home, ".claude/skills/deploy/SKILL.md")]
	if userDeploy.Get("source").String() != "user" || userDeploy.Get("ignored").Exists() || userDeploy.Get("description").String() != "The person's deploy" {
		t.Errorf("the person's deploy must be used while the workspace is untrusted: %s", userDeploy.Raw)
	}
	d.answer(req, obj{"trusted": true})
	d.notification("window/logMessage", func(m *wireMsg) bool {
		return strings.Contains(m.get("params.message").String(), "is trusted")
	})

	// Trusted: precedence and reasons.
	list = d.call("skills/list", obj{"sessionId": sid})
	got = listed(list, "skills")
	p := func(rel string) string { return filepath.Join(ws, rel) }
	checks := []struct {
		key, ignored string // ignored: "" for a skill in use, else a piece of the reason
	}{
		{"deploy " + p(".agents/skills/deploy/SKILL.md"), ""},
		{"deploy " + p(".claude/skills/deploy/SKILL.md"), "is used instead"},
		{"guarded " + p(".claude/skills/guarded/SKILL.md"), ""},
		{"escape " + p(".claude/skills/escape/SKILL.md"), "outside"},
		{"bommed " + p(".opencode/skills/bommed/SKILL.md"), ""},
		{"broken " + p(".opencode/skills/broken/SKILL.md"), "bad front matter"},
		{"deploy " + filepath.Join(home, ".claude/skills/deploy/SKILL.md"), "is used instead"},
		{"lint " + filepath.Join(home, ".agents/skills/lint/SKILL.md"), ""},
		{"lint " + filepath.Join(config, "pid/skills/lint/SKILL.md"), "is used instead"},
	}
	for _, c := range checks {
		s, ok := got[c.key]
		switch {
		case !ok:
			t.Errorf("skills/list has no %s: %s", c.key, list.Raw)
		case c.ignored == "" && s.Get("ignored").Exists():
			t.Errorf("%s must be used: %s", c.key, s.Raw)
		case c.ignored != "" && !strings.Contains(s.Get("ignored").String(), c.ignored):
			t.Errorf("%s must be ignored with %q: %s", c.key, c.ignored, s.Raw)
		}
	}
	if w := got["guarded "+p(".claude/skills/guarded/SKILL.md")].Get("warnings.0").String(); !strings.Contains(w, "allowed-tools") || !strings.Contains(w, "never widens permissions") {
		t.Errorf("allowed-tools must be named in the warnings: %q", w)
	}
	if got["deploy "+p(".agents/skills/deploy/SKILL.md")].Get("description").String() != "Deploys the workspace" {
		t.Errorf("a folded description: %s", list.Raw)
	}
	if len(list.Get("skills").Array()) != len(checks) {
		t.Errorf("skills/list has %d skills, want %d: %s", len(list.Get("skills").Array()), len(checks), list.Raw)
	}

	// The system prompt lists the skills in use.
	if r := d.call("session/prompt", obj{"sessionId": sid, "text": "hi"}); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	sys := gjson.GetBytes(srv.requests()[0].body, "messages.0.content").String()
	for _, want := range []string{"- deploy: Deploys the workspace", "- lint: Lints the code", "- guarded: Has allowed tools", "- bommed: Starts with a BOM"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt does not list %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, "Outside") || strings.Contains(sys, "The person's deploy") {
		t.Errorf("the system prompt lists a skill left out:\n%s", sys)
	}

	// The skill tool: the body and the files beside it; an unknown name is an error result
	// naming the skills in use.
	if r := d.call("session/prompt", obj{"sessionId": sid, "text": "use the deploy skill"}); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	body := srv.requests()[2].body
	k1 := toolMessage(body, "k1")
	for _, want := range []string{`<skill name="deploy">`, "WS DEPLOY BODY: run scripts/go.sh", "- reference.md", "- scripts/go.sh"} {
		if !strings.Contains(k1, want) {
			t.Errorf("skill's result lacks %q:\n%s", want, k1)
		}
	}
	if strings.Contains(k1, "USER DEPLOY BODY") || strings.Contains(k1, "- SKILL.md") {
		t.Errorf("skill's result:\n%s", k1)
	}
	if k2 := toolMessage(body, "k2"); !strings.Contains(k2, `There is no skill "nope"`) || !strings.Contains(k2, "deploy") {
		t.Errorf("an unknown skill: %q", k2)
	}

	// /NAME: commands/list has the skill; the prompt is its body, then the person's text.
	cmds := d.call("commands/list", obj{"sessionId": sid}).Get("commands")
	if c := cmds.Get(`#(name=="deploy")`); c.Get("description").String() != "Deploys the workspace" || c.Get("input.hint").String() == "" {
		t.Errorf("commands/list's deploy: %s", cmds.Raw)
	}
	if cmds.Get(`#(name=="broken")`).Exists() || cmds.Get(`#(name=="escape")`).Exists() {
		t.Errorf("a skill left out is a command: %s", cmds.Raw)
	}
	r := d.call("session/prompt", obj{"sessionId": sid, "text": "/deploy to staging"})
	if r.Get("command.name").String() != "deploy" || r.Get("stopReason").String() != "stop" {
		t.Errorf("/deploy: %s", r.Raw)
	}
	if u := lastUserText(srv.requests()[3].body); u != "WS DEPLOY BODY: run scripts/go.sh\n\nto staging" {
		t.Errorf("/deploy's prompt = %q", u)
	}
	out := d.call("session/prompt", obj{"sessionId": sid, "text": "/help"}).Get("command.output").String()
	if !strings.Contains(out, "`/deploy` [what to do (optional)]: Deploys the workspace (skill)") {
		t.Errorf("/help:\n%s", out)
	}
}

// TestSkillFilesReadable: once the model loaded a skill, read reads the files of its folder
// although it is outside the workspace folders (that folder only); write there, and read of
// another skill's folder not loaded, stay refused.
func TestSkillFilesReadable(t *testing.T) {
	env, home, _ := homeEnv(t)
	lint := filepath.Join(home, ".claude", "skills", "lint")
	wsWriteFile(t, filepath.Join(lint, "SKILL.md"), skillFile("description: Lints", "Read reference.md first."))
	wsWriteFile(t, filepath.Join(lint, "reference.md"), "THE REFERENCE\n")
	other := filepath.Join(home, ".claude", "skills", "other")
	wsWriteFile(t, filepath.Join(other, "SKILL.md"), skillFile("description: Another", "body"))
	wsWriteFile(t, filepath.Join(other, "secret.md"), "NOT LOADED\n")
	_, ws := newWorkspaceDir(t, nil)
	ref := filepath.Join(lint, "reference.md")
	model := scriptModel(
		turn(toolCall("r0", "read", obj{"path": ref})),
		turn(toolCall("s1", "skill", obj{"name": "lint"})),
		turn(toolCall("r1", "read", obj{"path": ref}), toolCall("r2", "read", obj{"path": filepath.Join(other, "secret.md")})),
		turn(toolCall("w1", "write", obj{"path": filepath.Join(lint, "new.md"), "content": "x"})),
		turn(text("done")))
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	sid := d.newSession(obj{"cwd": ws, "model": model, "mode": "acceptEdits"})
	prompt := d.request("session/prompt", obj{"sessionId": sid, "text": "lint"})
	// The write outside the workspace asks; allowed, the tool itself refuses it.
	asks := awaitApprovals(d, 1)
	if asks[0].get("params.toolCallId").String() != "w1" {
		t.Fatalf("only the write should ask: %s", asks[0])
	}
	d.answer(asks[0], obj{"decision": "allow"})
	if r := d.result(prompt); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	res := func(id string) (string, bool) {
		r := taskResult(d, sid, id)
		return r.Get("result.content.0.text").String(), r.Get("isError").Bool()
	}
	if txt, isErr := res("r0"); !isErr || !strings.Contains(txt, "outside the workspace") {
		t.Errorf("read before the skill was loaded: %q", txt)
	}
	if txt, isErr := res("r1"); isErr || !strings.Contains(txt, "THE REFERENCE") {
		t.Errorf("read of the loaded skill's file: %q (error %v)", txt, isErr)
	}
	if txt, isErr := res("r2"); !isErr || strings.Contains(txt, "NOT LOADED") {
		t.Errorf("read of another skill's file: %q", txt)
	}
	if _, isErr := res("w1"); !isErr || wsExists(filepath.Join(lint, "new.md")) {
		t.Errorf("write into the skill's folder must be refused")
	}
}
