// This file tests, through the daemon, that a trust.json that is a symbolic link (here into
// the workspace it claims to trust) or that others may write is not believed, and that
// the editor is told why (issue 19).

package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnsafeTrustFileIsRefusedAndSaid(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		plant      func(t *testing.T, trustFile, content string)
	}{
		{"link into the workspace", "symbolic link", nil},
		{"writable by others", "may be written by others", func(t *testing.T, p, content string) {
			wsWriteFile(t, p, content)
			if err := os.Chmod(p, 0o666); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, state := xdgDirs(t)
			_, ws := newWorkspaceDir(t, map[string]string{
				".pid/settings.json": mustJSON(obj{"permissions": obj{"tools": obj{"bash": []obj{{"pattern": "echo", "decision": "allow"}}}}}),
			})
			trustFile := filepath.Join(state, "pid", "trust.json")
			content := mustJSON(obj{"version": 1, "folders": []obj{{"folder": ws, "trustedAt": "2026-12-01T00:00:00Z"}}})
			if err := os.MkdirAll(filepath.Dir(trustFile), 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.plant == nil {
				// The repository ships a trust file that trusts itself; a link points at it.
				planted := filepath.Join(ws, ".pid", "trust.json")
				wsWriteFile(t, planted, content)
				if err := os.Symlink(planted, trustFile); err != nil {
					t.Fatal(err)
				}
			} else {
				tc.plant(t, trustFile, content)
			}
			d := startInProcess(t)
			initWorkspace(d, obj{"beforeToolCall": true}, ws)
			sid := d.newSession(obj{})
			shown := d.notification("window/showMessage", func(m *wireMsg) bool {
				return strings.Contains(m.get("params.message").String(), "trust.json")
			})
			if msg := shown.get("params.message").String(); !strings.Contains(msg, tc.want) || !strings.Contains(msg, "no folder is trusted from it") {
				t.Errorf("showMessage %q; want it to say the file %s and is not believed", msg, tc.want)
			}
			if !echoAsked(t, d, sid, "e1") {
				t.Error("the workspace's allow rule applied: the unsafe trust.json was believed")
			}
			// trust/list answers why instead of listing what the file says.
			if code, text := d.callErr("trust/list", obj{}); code == 0 || !strings.Contains(text, tc.want) {
				t.Errorf("trust/list: %d %q; want an error saying the file %s", code, text, tc.want)
			}
		})
	}
}
