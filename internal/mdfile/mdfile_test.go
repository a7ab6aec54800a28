package mdfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, err, name, body string
		keys                []string
	}{
		{in: "---\nname: a\n---\nbody\n", name: "a", body: "body\n", keys: []string{"name"}},
		{in: "\ufeff---\r\nname: a\r\n---  \r\nbody", name: "a", body: "body", keys: []string{"name"}},
		{in: "---\nname: a\n---", name: "a", body: "", keys: []string{"name"}},
		{in: "---\n---\nonly body", body: "only body"},
		{in: "---\nname: 'quoted: yes'\ndescription: |\n  two\n  lines\n---\n", name: "quoted: yes", keys: []string{"name", "description"}},
		{in: "no front\n", err: "no front matter"},
		{in: "---\nname: a\n", err: `no closing line "---"`},
		{in: "---\nname: a\nname: b\n---\n", err: `sets "name" twice`},
		{in: "---\n- a\n- b\n---\n", err: "not a YAML mapping"},
		{in: "---\nname: [a\n---\n", err: "not valid YAML"},
	} {
		d, err := Parse([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) = %v, want an error saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		name, _ := d.String("name")
		if name != c.name || d.Body != c.body || !cmp.Equal(d.Keys, c.keys) {
			t.Errorf("Parse(%q) = name %q body %q keys %q, want %q %q %q", c.in, name, d.Body, d.Keys, c.name, c.body, c.keys)
		}
	}
}

func TestList(t *testing.T) {
	d, err := Parse([]byte("---\na: Read, Grep ,\nb: [Read, Glob]\nc:\n  - Bash\nd: {x: 1}\ne: []\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][]string{"a": {"Read", "Grep"}, "b": {"Read", "Glob"}, "c": {"Bash"}, "e": {}} {
		got, set, err := d.List(key)
		if err != nil || !set || !cmp.Equal(got, want) {
			t.Errorf("List(%s) = %q, %v, %v; want %q", key, got, set, err, want)
		}
	}
	if _, set, err := d.List("d"); !set || err == nil {
		t.Errorf("List(d) of a mapping: set %v, err %v; want an error", set, err)
	}
	if _, set, _ := d.List("none"); set {
		t.Error("List of a missing key says it is set")
	}
}

func TestReadRefusesLinksAndLargeFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, MaxBytes+1), 0o644)
	if _, err := Read(big); err != ErrTooLarge {
		t.Errorf("Read(big) = %v, want ErrTooLarge", err)
	}
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, make([]byte, MaxBytes), 0o644)
	if b, err := Read(ok); err != nil || len(b) != MaxBytes {
		t.Errorf("Read(64 KiB) = %d bytes, %v", len(b), err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(ok, link)
	if _, err := Read(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Read(link) = %v, want refused: Read takes resolved paths", err)
	}
	root := filepath.Join(dir, "root")
	os.Mkdir(root, 0o755)
	os.Symlink(ok, filepath.Join(root, "out"))
	if _, err := Contain(filepath.Join(root, "out"), root); err == nil || !strings.Contains(err.Error(), "leads outside the workspace folder") {
		t.Errorf("Contain(out) = %v, want ErrOutside", err)
	}
}

// Within counts the folder itself and what is under it, not a sibling whose name starts
// the same, and everything under "/".
func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, folder string
		want      bool
	}{
		{"/ws", "/ws", true}, {"/ws/a/b", "/ws", true}, {"/wsx", "/ws", false}, {"/other", "/ws", false}, {"/anything", "/", true},
	} {
		if got := Within(c.p, c.folder); got != c.want {
			t.Errorf("Within(%s, %s) = %v", c.p, c.folder, got)
		}
	}
}
