package protected

import "testing"

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want string // the entry's name, "" for none
	}{
		{".git/config", ".git"},
		{".git", ".git"},
		{".git/commondir", ".git"},
		{".git/modules/sub/config", ".git"},
		{".git/info/attributes", ".git"},
		{".GIT/config", ".git"}, // a case-insensitive file system's .git
		{"vendor/lib/.git/hooks/pre-commit", ".git"},
		{"sub/.git", ".git"}, // a gitfile
		{".pid/settings.json", ".pid"},
		{".vscode/tasks.json", ".vscode"},
		{".Claude/settings.json", ".claude"},
		{".zed/tasks.json", ".zed"},
		{".devcontainer/devcontainer.json", ".devcontainer"},
		{".idea", ".idea"},
		{".envrc", ".envrc"},
		{"sub/.envrc", ".envrc"},
		{"sub/.mcp.json", ".mcp.json"},
		{".envrc/notes.md", ""}, // .envrc is a file entry: a folder of that name is not it
		{"docs/git/config", ""},
		{"gitconfig", ""},
		{".gitignore", ""},
		{".github/workflows/ci.yml", ""},
		{"src/main.go", ""},
		{".", ""},
		{"", ""},
	} {
		e, ok := Match(c.rel)
		if got := map[bool]string{true: e.Name}[ok]; got != c.want {
			t.Errorf("Match(%q) = %q, want %q", c.rel, got, c.want)
		}
	}
}

func TestEveryEntrySaysWhy(t *testing.T) {
	for _, e := range Names {
		if e.Why == "" || !IsName(e.Name) {
			t.Errorf("entry %q: why %q", e.Name, e.Why)
		}
	}
	if IsName("src") || !IsName(".VSCODE") {
		t.Error("IsName")
	}
}
