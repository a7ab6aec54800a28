// Instruction files over ACP (issue 24): the cwd's AGENTS.md reaches the model only once the
// cwd is trusted (ACP has no trust question: the user settings' trustedFolders); the user's
// own AGENTS.md always does.

package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestInstructionsNeedTrust(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("CWD-AGENTS: from the repository.\n"), 0o644)
	for _, trusted := range []bool{false, true} {
		settings := `{}`
		if trusted {
			settings = `{"trustedFolders":["` + dir + `"]}`
		}
		userSettings(t, settings)
		config := os.Getenv("XDG_CONFIG_HOME")
		os.WriteFile(filepath.Join(config, "pid", "AGENTS.md"), []byte("USER-AGENTS: the person's own.\n"), 0o644)
		model := newRecordingModel(t)
		c := start(t)
		c.initialize(nil)
		sid := c.newSession(dir, model.config())
		c.result(c.prompt(sid, "hi"), nil)
		sys := gjson.GetBytes(model.body(0), "messages.0.content").String()
		if !strings.Contains(sys, "USER-AGENTS: the person's own.") {
			t.Errorf("trusted=%v: the user's AGENTS.md is not in the system prompt:\n%s", trusted, sys)
		}
		if got := strings.Contains(sys, "CWD-AGENTS: from the repository."); got != trusted {
			t.Errorf("trusted=%v: the cwd's AGENTS.md in the system prompt: %v\n%s", trusted, got, sys)
		}
		c.stop()
	}
}
