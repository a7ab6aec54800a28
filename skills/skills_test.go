package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writeSkill writes dir/SKILL.md with a front matter naming the skill and describing it.
func writeSkill(t *testing.T, dir, front, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, FileName)
	if err := os.WriteFile(p, []byte("---\n"+front+"\n---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// env gives the test a home folder and a config folder of its own and returns the home.
func env(t *testing.T) (home, config string) {
	t.Helper()
	dir := t.TempDir()
	home, config = filepath.Join(dir, "home"), filepath.Join(dir, "config")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", config)
	return home, config
}

// row is what a test compares of a listed skill.
type row struct {
	Name, Source, Path, Ignored, Description string
}

func rows(list []Skill, base string) []row {
	var out []row
	for _, s := range list {
		ign := s.Ignored
		if i := strings.IndexAny(ign, ":("); i >= 0 {
			ign = ign[:i]
		}
		rel, _ := filepath.Rel(base, s.Path)
		out = append(out, row{s.Name, string(s.Source), rel, strings.TrimSpace(ign), s.Description})
	}
	return out
}

func TestFindOrderAndPrecedence(t *testing.T) {
	home, config := env(t)
	base := filepath.Dir(home)
	ws := filepath.Join(base, "ws")
	// The workspace: .agents before .claude before .opencode.
	writeSkill(t, filepath.Join(ws, ".agents/skills/deploy"), "name: deploy\ndescription: from .agents", "A")
	writeSkill(t, filepath.Join(ws, ".claude/skills/deploy"), "name: deploy\ndescription: from .claude", "B")
	writeSkill(t, filepath.Join(ws, ".claude/skills/lint"), "name: lint\ndescription: ws lint", "C")
	writeSkill(t, filepath.Join(ws, ".opencode/skills/review"), "description: no name, so the folder's", "D")
	// The person's: ~/.agents, ~/.claude, then $XDG_CONFIG_HOME/pid/skills.
	writeSkill(t, filepath.Join(home, ".agents/skills/lint"), "name: lint\ndescription: user lint", "E")
	writeSkill(t, filepath.Join(home, ".claude/skills/pdf"), "name: pdf\ndescription: claude pdf", "F")
	writeSkill(t, filepath.Join(config, "pid/skills/pdf"), "name: pdf\ndescription: pid pdf", "G")
	writeSkill(t, filepath.Join(config, "pid/skills/notes"), "name: notes\ndescription: pid notes", "H")
	// Not skills: a folder without SKILL.md, a file, a hidden folder.
	os.MkdirAll(filepath.Join(ws, ".claude/skills/empty"), 0o755)
	os.WriteFile(filepath.Join(ws, ".claude/skills/README.md"), []byte("x"), 0o644)
	writeSkill(t, filepath.Join(ws, ".claude/skills/.hidden"), "name: hidden\ndescription: x", "")

	dirs := UserDirs()
	if want := []string{filepath.Join(home, ".agents/skills"), filepath.Join(home, ".claude/skills"), filepath.Join(config, "pid/skills")}; !cmp.Equal(dirs, want) {
		t.Fatalf("UserDirs = %v, want %v", dirs, want)
	}
	list, notes := Find([]Folder{{Path: ws, Trusted: true}}, dirs)
	if len(notes) != 0 {
		t.Errorf("notes: %v", notes)
	}
	want := []row{
		{"deploy", "workspace", "ws/.agents/skills/deploy/SKILL.md", "", "from .agents"},
		{"deploy", "workspace", "ws/.claude/skills/deploy/SKILL.md", `the workspace skill "deploy" of ` + filepath.Join(ws, ".agents/skills/deploy/SKILL.md") + " is used instead", "from .claude"},
		{"lint", "workspace", "ws/.claude/skills/lint/SKILL.md", "", "ws lint"},
		{"review", "workspace", "ws/.opencode/skills/review/SKILL.md", "", "no name, so the folder's"},
		{"lint", "user", "home/.agents/skills/lint/SKILL.md", `the workspace skill "lint" of ` + filepath.Join(ws, ".claude/skills/lint/SKILL.md") + " is used instead", "user lint"},
		{"pdf", "user", "home/.claude/skills/pdf/SKILL.md", "", "claude pdf"},
		{"notes", "user", "config/pid/skills/notes/SKILL.md", "", "pid notes"},
		{"pdf", "user", "config/pid/skills/pdf/SKILL.md", `the user skill "pdf" of ` + filepath.Join(home, ".claude/skills/pdf/SKILL.md") + " is used instead", "pid pdf"},
	}
	if d := cmp.Diff(want, rows(list, base)); d != "" {
		t.Errorf("Find (-want +got):\n%s", d)
	}
	if s, ok := Lookup(list, "deploy"); !ok || s.Body != "A" {
		t.Errorf("Lookup(deploy) = %+v, %v; want the .agents one, body A", s, ok)
	}
	if s, ok := Lookup(list, "pdf"); !ok || s.Body != "F" {
		t.Errorf("Lookup(pdf) = %+v, %v; want ~/.claude's, body F", s, ok)
	}
}

func TestUntrustedFolderListedNotRead(t *testing.T) {
	home, _ := env(t)
	ws := filepath.Join(filepath.Dir(home), "ws")
	writeSkill(t, filepath.Join(ws, ".claude/skills/deploy"), "name: deploy\ndescription: the workspace's", "ws body")
	// A FIFO as SKILL.md: reading it would block a careless reader; an untrusted folder's
	// file is never opened.
	os.MkdirAll(filepath.Join(ws, ".agents/skills/fifo"), 0o755)
	if err := mkfifo(filepath.Join(ws, ".agents/skills/fifo/SKILL.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, filepath.Join(home, ".claude/skills/deploy"), "name: deploy\ndescription: the person's", "user body")

	list, _ := Find([]Folder{{Path: ws, Trusted: false}}, UserDirs())
	if len(list) != 3 {
		t.Fatalf("Find = %+v, want 3 skills", list)
	}
	for _, s := range list[:2] {
		if s.Source != SourceWorkspace || !strings.Contains(s.Ignored, "is not trusted") || s.Description != "" || s.Body != "" {
			t.Errorf("untrusted folder's skill %+v: want listed, ignored as untrusted, not read", s)
		}
	}
	if list[0].Name != "fifo" || list[1].Name != "deploy" {
		t.Errorf("names %q, %q: want the folders' (fifo, deploy)", list[0].Name, list[1].Name)
	}
	if got, want := TrustItems(list, ws), []string{"skill: fifo (.agents/skills/fifo/SKILL.md)", "skill: deploy (.claude/skills/deploy/SKILL.md)"}; !cmp.Equal(got, want) {
		t.Errorf("TrustItems = %q, want %q", got, want)
	}
	// The untrusted skill hides nothing: the person's of the same name is used.
	if s, ok := Lookup(list, "deploy"); !ok || s.Source != SourceUser || s.Body != "user body" {
		t.Errorf("Lookup(deploy) = %+v, %v; want the person's", s, ok)
	}
	// Trusted, the workspace's wins, and the FIFO is refused without blocking.
	list, _ = Find([]Folder{{Path: ws, Trusted: true}}, UserDirs())
	if s, _ := Lookup(list, "deploy"); s.Body != "ws body" {
		t.Errorf("trusted: deploy = %+v, want the workspace's", s)
	}
	if !strings.Contains(list[0].Ignored, "not a regular file") {
		t.Errorf("FIFO skill = %+v, want ignored as not a regular file", list[0])
	}
}

func TestBadSkillsIgnoredWithReason(t *testing.T) {
	home, _ := env(t)
	d := filepath.Join(home, ".claude/skills")
	// A BOM and CRLF line ends are accepted.
	os.MkdirAll(filepath.Join(d, "bom"), 0o755)
	os.WriteFile(filepath.Join(d, "bom", FileName), []byte("\ufeff---\r\nname: bom\r\ndescription: >-\r\n  folded\r\n  text\r\n---\r\nBody line\r\n"), 0o644)
	// Over 64 KiB.
	writeSkill(t, filepath.Join(d, "big"), "name: big\ndescription: big", strings.Repeat("x", MaxBytes))
	// No front matter; YAML that does not parse; no description; a bad name; a list as name.
	os.MkdirAll(filepath.Join(d, "nofront"), 0o755)
	os.WriteFile(filepath.Join(d, "nofront", FileName), []byte("# just markdown\n"), 0o644)
	writeSkill(t, filepath.Join(d, "badyaml"), "name: [unclosed\ndescription: x", "")
	writeSkill(t, filepath.Join(d, "nodesc"), "name: nodesc", "")
	writeSkill(t, filepath.Join(d, "badname"), "name: ../etc\ndescription: x", "")
	writeSkill(t, filepath.Join(d, "listname"), "name: [a, b]\ndescription: x", "")
	// allowed-tools is ignored, with a warning; so is a key pid does not know.
	writeSkill(t, filepath.Join(d, "tools"), "name: tools\ndescription: uses tools\nallowed-tools: Bash(rm -rf *), Write\nlicense: MIT", "do it")

	list, _ := Find(nil, UserDirs())
	got := map[string]Skill{}
	for _, s := range list {
		got[filepath.Base(filepath.Dir(s.Path))] = s
	}
	if s := got["bom"]; !s.Used() || s.Name != "bom" || s.Description != "folded text" || s.Body != "Body line" {
		t.Errorf("BOM skill = %+v, want used, description %q, body %q", s, "folded text", "Body line")
	}
	for dir, reason := range map[string]string{
		"big":      "larger than 64 KiB",
		"nofront":  "bad front matter: it has no front matter",
		"badyaml":  "bad front matter: its front matter is not valid YAML",
		"nodesc":   `bad front matter: no "description"`,
		"badname":  `bad front matter: the name "../etc" is not a skill name`,
		"listname": `bad front matter: "name" in its front matter is not text`,
	} {
		if s := got[dir]; !strings.Contains(s.Ignored, reason) {
			t.Errorf("%s: ignored %q, want it to say %q", dir, s.Ignored, reason)
		}
	}
	s := got["tools"]
	want := []string{`"allowed-tools" is ignored: a skill never widens permissions (they come only from your settings)`, `"license" is ignored: pid does not use it`}
	if !s.Used() || !cmp.Equal(s.Warnings, want) {
		t.Errorf("tools skill = %+v, want used with warnings %q", s, want)
	}
}

func TestSymlinksLeavingTheWorkspaceRefused(t *testing.T) {
	home, _ := env(t)
	base := filepath.Dir(home)
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	writeSkill(t, filepath.Join(outside, "secret"), "name: secret\ndescription: outside", "SECRET")
	os.MkdirAll(filepath.Join(ws, ".claude/skills/file"), 0o755)
	// A skill folder that is a link out of the workspace folder.
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, ".claude/skills/secret"))
	// A SKILL.md that is a link out.
	os.Symlink(filepath.Join(outside, "secret", FileName), filepath.Join(ws, ".claude/skills/file", FileName))
	// A link inside the workspace folder is fine.
	writeSkill(t, filepath.Join(ws, "shared/inside"), "name: inside\ndescription: linked within", "IN")
	os.Symlink(filepath.Join(ws, "shared/inside"), filepath.Join(ws, ".claude/skills/inside"))
	// A skills folder that is itself a link out: noted, nothing of it listed.
	os.MkdirAll(filepath.Join(ws, ".agents"), 0o755)
	os.Symlink(outside, filepath.Join(ws, ".agents/skills"))

	list, notes := Find([]Folder{{Path: ws, Trusted: true}}, nil)
	got := map[string]Skill{}
	for _, s := range list {
		got[s.Name] = s
	}
	if len(list) != 3 {
		t.Fatalf("Find = %+v, want the three of .claude/skills", list)
	}
	if s := got["secret"]; !strings.Contains(s.Ignored, "the skill's folder leads outside the workspace folder") || s.Body != "" {
		t.Errorf("linked folder = %+v, want refused and not read", s)
	}
	if s := got["file"]; !strings.Contains(s.Ignored, "SKILL.md leads outside the workspace folder") || s.Body != "" {
		t.Errorf("linked SKILL.md = %+v, want refused and not read", s)
	}
	realInside, _ := filepath.EvalSymlinks(filepath.Join(ws, "shared/inside"))
	if s := got["inside"]; !s.Used() || s.Body != "IN" || s.Dir != realInside {
		t.Errorf("link within = %+v, want used, Dir %s", s, realInside)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "leads outside the workspace folder") {
		t.Errorf("notes = %q, want the .agents/skills link named", notes)
	}
	// The person's own folders may be links to anywhere.
	os.MkdirAll(filepath.Join(home, ".claude/skills"), 0o755)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(home, ".claude/skills/secret"))
	list, _ = Find(nil, UserDirs())
	if s, ok := Lookup(list, "secret"); !ok || s.Body != "SECRET" {
		t.Errorf("the person's linked skill = %+v, %v; want used", s, ok)
	}
}

func TestPromptBlock(t *testing.T) {
	var list []Skill
	for i := range 53 {
		list = append(list, Skill{Name: fmt.Sprintf("s%02d", i), Description: "does\n  thing " + fmt.Sprint(i)})
	}
	list = append([]Skill{{Name: "left", Description: "x", Ignored: "untrusted"}}, list...)
	got := PromptBlock(list)
	lines := strings.Split(got, "\n")
	if len(lines) != 1+50+1 {
		t.Fatalf("%d lines, want a header, 50 skills and a count:\n%s", len(lines), got)
	}
	if lines[1] != "- s00: does thing 0" || lines[50] != "- s49: does thing 49" {
		t.Errorf("skill lines %q ... %q", lines[1], lines[50])
	}
	if lines[51] != "- and 3 more skills, not listed here." {
		t.Errorf("last line %q", lines[51])
	}
	if strings.Contains(got, "left") {
		t.Error("a skill left out is in the prompt")
	}
	if PromptBlock(list[:1]) != "" {
		t.Error("no skill in use should give no block")
	}
}

func TestToolTextListsFilesAndCommandText(t *testing.T) {
	home, _ := env(t)
	base := filepath.Dir(home)
	dir := filepath.Join(home, ".claude/skills/pdf")
	writeSkill(t, dir, "name: pdf\ndescription: fill PDF forms", "Run scripts/fill.py.\n")
	os.MkdirAll(filepath.Join(dir, "scripts/lib"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	for _, f := range []string{"scripts/fill.py", "scripts/lib/util.py", "reference.md", ".git/config"} {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(base, "secret"), []byte("x"), 0o644)
	os.Symlink(filepath.Join(base, "secret"), filepath.Join(dir, "leak"))
	os.Symlink("reference.md", filepath.Join(dir, "ref-link.md"))

	list, _ := Find(nil, UserDirs())
	s, ok := Lookup(list, "pdf")
	if !ok {
		t.Fatal("no pdf skill")
	}
	got := ToolText(s)
	real, _ := filepath.EvalSymlinks(dir)
	want := "<skill name=\"pdf\">\nRun scripts/fill.py.\n</skill>\n\n" +
		"The skill's folder is " + real + ". Its other files, which you can read with read when the instructions call for them (paths relative to that folder):\n" +
		"- ref-link.md\n- reference.md\n- scripts/fill.py\n- scripts/lib/util.py"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ToolText (-want +got):\n%s", d)
	}
	if got := CommandText(s, "  fill form.pdf "); got != "Run scripts/fill.py.\n\nfill form.pdf" {
		t.Errorf("CommandText = %q", got)
	}
	if got := CommandText(s, ""); got != "Run scripts/fill.py." {
		t.Errorf("CommandText without text = %q", got)
	}
}

func TestFilesBounded(t *testing.T) {
	home, _ := env(t)
	dir := filepath.Join(home, ".claude/skills/many")
	writeSkill(t, dir, "name: many\ndescription: many files", "")
	for i := range MaxListedFiles + 5 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), nil, 0o644)
	}
	list, _ := Find(nil, UserDirs())
	s, _ := Lookup(list, "many")
	files, more, cut, err := Files(s)
	if err != nil || len(files) != MaxListedFiles || more != 5 || cut {
		t.Fatalf("Files: %d files, %d more, cut %v, %v; want %d and 5 more", len(files), more, cut, err, MaxListedFiles)
	}
	if !strings.HasSuffix(ToolText(s), "(and 5 more files, not listed)") {
		t.Errorf("ToolText does not name the rest by count")
	}
}
