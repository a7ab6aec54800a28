package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// setMember changes the member in place or adds it first, keeping every other byte.
func TestSetMemberKeepsTheRest(t *testing.T) {
	model := json.RawMessage(`{"provider": "anthropic", "id": "claude-sonnet-4-6"}`)
	for _, tc := range []struct{ name, in, want string }{
		{"new file", "", "{\n  \"model\": {\"provider\": \"anthropic\", \"id\": \"claude-sonnet-4-6\"}\n}\n"},
		{"empty object", "{}\n", "{\n  \"model\": {\"provider\": \"anthropic\", \"id\": \"claude-sonnet-4-6\"}\n}\n"},
		{"added first, indented like the rest",
			"{\n    \"permissions\": {\"allow\": [\"read\"]},\n    \"theme\": 1\n}\n",
			"{\n    \"model\": {\"provider\": \"anthropic\", \"id\": \"claude-sonnet-4-6\"},\n    \"permissions\": {\"allow\": [\"read\"]},\n    \"theme\": 1\n}\n"},
		{"replaced where it stands",
			"{\"a\": 1,\n \"model\" :  {\n   \"provider\": \"openai\",\n   \"id\": \"gpt-4.1\"\n },\n \"z\": [1, 2]}",
			"{\"a\": 1,\n \"model\" :  {\"provider\": \"anthropic\", \"id\": \"claude-sonnet-4-6\"},\n \"z\": [1, 2]}"},
		{"a nested model is not the top-level one",
			"{\"models\": [{\"model\": 1}]}",
			"{\"model\": {\"provider\": \"anthropic\", \"id\": \"claude-sonnet-4-6\"},\"models\": [{\"model\": 1}]}"},
	} {
		got, err := setMember([]byte(tc.in), "model", model)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %q, %v\nwant %q", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range []string{"[1]", "{\"a\": 1", "{} {}", "// comment\n{}"} {
		if got, err := setMember([]byte(bad), "model", model); err == nil {
			t.Errorf("setMember(%q) = %q, want an error", bad, got)
		}
	}
}

// SetUserMember writes through a link to the file it points to, keeping the link and the
// file's mode.
func TestSetUserMemberFollowsALink(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	dots := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(dots, []byte("{\"theme\": 1}\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(config, "pid"), 0o700)
	link := filepath.Join(config, "pid", "settings.json")
	if err := os.Symlink(dots, link); err != nil {
		t.Fatal(err)
	}
	if _, err := SetUserMember("model", json.RawMessage(`{"provider": "openai", "id": "gpt-5"}`)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	b, _ := os.ReadFile(dots)
	fi, _ := os.Stat(dots)
	if string(b) != "{\"model\": {\"provider\": \"openai\", \"id\": \"gpt-5\"},\"theme\": 1}\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("the linked file: %q, mode %v", b, fi.Mode().Perm())
	}
}
