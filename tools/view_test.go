package tools

// The built-in tools' views: what a person reads about a call (kind, title, the file it
// touches) and what a write or an edit changed, from the tool's details live and as a saved
// session gives them back (decoded JSON).

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pid-agent/pid/toolexec"
)

func TestViewTitles(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    viewArgs
		want string
	}{
		{"read", viewArgs{Path: "src/main.go"}, "Read src/main.go"},
		{"bash", viewArgs{Command: "go test ./...\necho more"}, "Run `go test ./...…`"},
		{"bash", viewArgs{Command: "echo `date`"}, "Run `` echo `date` ``"},
		{"bash", viewArgs{Command: strings.Repeat("x", 100)}, "Run `" + strings.Repeat("x", 80) + "…`"},
		{"grep", viewArgs{Pattern: "TODO", Path: "pkg"}, "Search for `TODO` in pkg"},
		{"find", viewArgs{Pattern: "*.go"}, "Find `*.go`"},
		{"ls", viewArgs{}, "List ."},
		{"write", viewArgs{}, "Write a file"},
	} {
		if got := view(tc.name, "/w", tc.a, nil).Title; got != tc.want {
			t.Errorf("%s %+v: %q, want %q", tc.name, tc.a, got, tc.want)
		}
	}
	for name, kind := range map[string]toolexec.Kind{"edit": toolexec.KindEdit, "find": toolexec.KindSearch, "bash": toolexec.KindExecute, "read": toolexec.KindRead, "diagnostics": toolexec.KindOther} {
		if got := view(name, "/w", viewArgs{}, nil).Kind; got != kind {
			t.Errorf("%s: kind %q, want %q", name, got, kind)
		}
	}
}

// Every tool New returns has a view; a read's location is its file, absolute, at its offset.
func TestViewsOfTheTools(t *testing.T) {
	ws, err := NewWorkspace(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, tl := range New(ws) {
		if tl.View == nil {
			t.Errorf("%s has no view", tl.Name)
			continue
		}
		if tl.Name == NameRead {
			v := tl.View(json.RawMessage(`{"path":"a/b.go","offset":12}`), nil)
			if want := []toolexec.Location{{Path: ws.Cwd() + "/a/b.go", Line: 12}}; !reflect.DeepEqual(v.Locations, want) {
				t.Errorf("read's locations %+v, want %+v", v.Locations, want)
			}
		}
	}
}

// A write's and an edit's change, from their details as they are and as a saved session
// gives them back; other details, and none, give no change.
func TestViewChanges(t *testing.T) {
	content := "whole\n"
	for _, tc := range []struct {
		name    string
		a       viewArgs
		details any
		want    []toolexec.FileChange
	}{
		{"write", viewArgs{Content: &content}, WriteDetails{Path: "n.txt", Created: true, Diff: "D"}, []toolexec.FileChange{{Path: "/w/n.txt", Diff: "D", Created: true, Content: "whole\n"}}},
		{"edit", viewArgs{}, &EditDetails{Path: "/abs/e.go", Diff: "D", FirstChangedLine: 7}, []toolexec.FileChange{{Path: "/abs/e.go", Diff: "D", Line: 7}}},
		{"edit", viewArgs{}, map[string]any{"path": "e.go", "diff": "D", "firstChangedLine": float64(3)}, []toolexec.FileChange{{Path: "/w/e.go", Diff: "D", Line: 3}}},
		{"write", viewArgs{}, map[string]any{"path": "n.txt", "diff": "D", "created": true}, []toolexec.FileChange{{Path: "/w/n.txt", Diff: "D", Created: true}}},
		{"edit", viewArgs{}, nil, nil},
		{"edit", viewArgs{}, "not details", nil},
		{"bash", viewArgs{}, WriteDetails{Path: "x"}, nil},
	} {
		if got := view(tc.name, "/w", tc.a, tc.details).Changes; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %#v: changes %+v, want %+v", tc.name, tc.details, got, tc.want)
		}
	}
}
