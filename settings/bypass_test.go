package settings_test

// Tests of "allowBypassPermissions": only the user's file offers the mode that asks nothing.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/xdg/xdgtest"
	"github.com/pid-agent/pid/settings"
)

func TestAllowBypassPermissionsOnlyFromUserSettings(t *testing.T) {
	env := xdgtest.Isolate(t)
	root := t.TempDir()
	// A trusted workspace saying so is not enough.
	writeFile(t, settings.WorkspacePath(root), `{"allowBypassPermissions": true}`)
	var e errs
	l := newLoader(t, []string{root}, &e)
	if l.AllowBypassPermissions() {
		t.Fatal("a workspace's allowBypassPermissions offered bypassPermissions")
	}
	l.Close()

	writeFile(t, filepath.Join(env.Config, "pid", "settings.json"), `{"allowBypassPermissions": true}`)
	l2 := newLoader(t, []string{root}, &e)
	if !l2.AllowBypassPermissions() {
		t.Fatal("the user settings' allowBypassPermissions: true did not offer bypassPermissions")
	}
	if got := e.all(); len(got) != 0 {
		t.Fatalf("errors: %v", got)
	}
}

func TestAllowBypassPermissionsMustBeBoolean(t *testing.T) {
	_, err := settings.Parse([]byte(`{"allowBypassPermissions": "yes"}`))
	if err == nil || !strings.Contains(err.Error(), "allowBypassPermissions must be true or false") {
		t.Fatalf("Parse = %v, want an error naming allowBypassPermissions", err)
	}
}
