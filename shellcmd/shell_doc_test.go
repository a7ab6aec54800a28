package shellcmd

// The lists of this package (options.go, wrappers.go, simple.go) that users read in
// docs/permissions.md must stay the same lists.

import (
	"os"
	"strings"
	"testing"
)

func TestDocsListTheShellTables(t *testing.T) {
	b, err := os.ReadFile("../docs/permissions.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### Rules on bash commands")
	if start < 0 {
		t.Fatal(`docs/permissions.md has no "Rules on bash commands" section`)
	}
	doc = doc[start:]
	for _, o := range commandOptions {
		switch o.Option {
		case "FILE", "COMMAND":
			if !strings.Contains(doc, "| `"+o.Command+"` |") {
				t.Errorf("the options table has no row for %s", o.Command)
			}
			continue
		case "w/W/e in the script":
			continue
		}
		want := "`" + o.Option + "`"
		if o.Sub != "" && o.Sub != "global" {
			want = "`" + o.Sub + " " + o.Option + "`"
		}
		if !strings.Contains(doc, want) {
			t.Errorf("docs do not list %s %s (%s)", o.Command, o.Option, o.What)
		}
	}
	for name := range harmlessVars {
		if !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("docs do not list the harmless variable %s", name)
		}
	}
	for name := range wrappers {
		if !strings.Contains(doc, "`"+name) {
			t.Errorf("docs do not name the wrapper %s", name)
		}
	}
	for name := range gitHarmlessGlobal {
		if !strings.Contains(doc, "`"+name+"`") && !strings.HasSuffix(name, "-pathspecs") {
			t.Errorf("docs do not list git's harmless option %s", name)
		}
	}
	for name := range opaque {
		if !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("docs do not list %s among the constructs never allowed", name)
		}
	}
}
