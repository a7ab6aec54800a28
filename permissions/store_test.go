package permissions_test

// Tests of remembered answers: persistence, list and revoke, scopes, and how Check combines
// them with the policy.

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/internal/xdg/xdgtest"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/permissions/permtest"
)

func openStore(t *testing.T) *permissions.Store {
	t.Helper()
	s, err := permissions.OpenStore("")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStorePersistsAcrossRestart(t *testing.T) {
	env := xdgtest.Isolate(t)
	s := openStore(t)
	wantPath := filepath.Join(env.State, "pid", "permissions.json")
	if s.Path() != wantPath {
		t.Fatalf("store path %q, want %q", s.Path(), wantPath)
	}
	if _, err := os.Stat(wantPath); !os.IsNotExist(err) {
		t.Fatalf("opening must not create the file: %v", err)
	}
	root := "/home/u/proj"
	a, err := s.Remember(root, "bash", "", "git status", permissions.Allow)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Remember(root, "write", "", "", permissions.Deny)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || a.ID == d.ID || a.Scope != "workspace:/home/u/proj" {
		t.Fatalf("entries %+v %+v", a, d)
	}

	// The file and its folder are private.
	fi, err := os.Stat(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(wantPath)); di.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", di.Mode().Perm())
	}
	// No temporary file is left behind.
	ents, _ := os.ReadDir(filepath.Dir(wantPath))
	if len(ents) != 1 {
		t.Errorf("folder holds %d files, want only permissions.json", len(ents))
	}

	// "Restart": a new Store on the same file sees both, with the same ids.
	s2 := openStore(t)
	l, err := s2.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Permissions) != 2 || l.Permissions[0] != a || l.Permissions[1] != d {
		t.Fatalf("after restart: %+v, want %+v and %+v", l.Permissions, a, d)
	}
	if r, ok := s2.Lookup(root, permtest.Call("bash", `{"command":"git status -s"}`)); !ok || r.ID != a.ID {
		t.Fatalf("lookup after restart: %+v %v", r, ok)
	}

	// The list result has the protocol's shape.
	b, _ := json.Marshal(l)
	want := `{"permissions":[{"id":"` + a.ID + `","tool":"bash","pattern":"git status","decision":"allow","scope":"workspace:/home/u/proj"},{"id":"` + d.ID + `","tool":"write","decision":"deny","scope":"workspace:/home/u/proj"}]}`
	if string(b) != want {
		t.Fatalf("list JSON\n got %s\nwant %s", b, want)
	}
}

func TestStoreRevoke(t *testing.T) {
	xdgtest.Isolate(t)
	s := openStore(t)
	a, _ := s.Remember("/p", "bash", "", "", permissions.Allow)
	b, _ := s.Remember("/p", "write", "", "", permissions.Allow)
	if err := s.Revoke(a.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Lookup("/p", permtest.Call("bash", `{"command":"ls"}`)); ok {
		t.Fatal("revoked answer still applies")
	}
	err := s.Revoke(a.ID)
	if !errors.Is(err, permissions.ErrUnknownID) || !strings.Contains(err.Error(), a.ID) {
		t.Fatalf("revoking twice: %v, want ErrUnknownID naming the id", err)
	}
	if err := s.Revoke("nope"); !errors.Is(err, permissions.ErrUnknownID) {
		t.Fatalf("unknown id: %v", err)
	}
	// The revocation is persisted.
	l, _ := openStore(t).List()
	if len(l.Permissions) != 1 || l.Permissions[0].ID != b.ID {
		t.Fatalf("after revoke and restart: %+v", l.Permissions)
	}
	// An empty store lists [] (not null).
	_ = s.Revoke(b.ID)
	l, _ = s.List()
	if j, _ := json.Marshal(l); string(j) != `{"permissions":[]}` {
		t.Fatalf("empty list: %s", j)
	}
}

func TestStoreRememberValidatesAndUpdates(t *testing.T) {
	xdgtest.Isolate(t)
	s := openStore(t)
	for name, f := range map[string]func() error{
		"relative root": func() error { _, err := s.Remember("proj", "bash", "", "", permissions.Allow); return err },
		"ask":           func() error { _, err := s.Remember("/p", "bash", "", "", permissions.Ask); return err },
		"no tool":       func() error { _, err := s.Remember("/p", "", "", "", permissions.Allow); return err },
		"no argument":   func() error { _, err := s.Remember("/p", "mcp_x", "", "a", permissions.Allow); return err },
		"bad glob":      func() error { _, err := s.Remember("/p", "write", "", "a[", permissions.Allow); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	a, _ := s.Remember("/p", "bash", "", "npm test", permissions.Allow)
	b, err := s.Remember("/p/", "bash", "", "npm test", permissions.Deny) // same root, cleaned
	if err != nil {
		t.Fatal(err)
	}
	if b.ID != a.ID || b.Decision != permissions.Deny {
		t.Fatalf("same scope must update in place: %+v then %+v", a, b)
	}
	if l, _ := s.List(); len(l.Permissions) != 1 {
		t.Fatalf("%d entries, want 1", len(l.Permissions))
	}
}

func TestStoreIDsUniqueUnderConcurrency(t *testing.T) {
	xdgtest.Isolate(t)
	s := openStore(t)
	var wg sync.WaitGroup
	ids := make([]string, 40)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.Remember("/p", "tool"+string(rune('a'+i%26))+string(rune('a'+i/26)), "", "", permissions.Allow)
			if err != nil {
				t.Error(err)
			}
			ids[i] = r.ID
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] {
			t.Fatalf("duplicate or empty id %q", id)
		}
		seen[id] = true
	}
	l, _ := openStore(t).List()
	if len(l.Permissions) != len(ids) {
		t.Fatalf("file holds %d entries, want %d", len(l.Permissions), len(ids))
	}
}

func TestStoreScopeAndPatterns(t *testing.T) {
	xdgtest.Isolate(t)
	s := openStore(t)
	_, _ = s.Remember("/a", "bash", "", "git push", permissions.Allow)
	_, _ = s.Remember("/a", "bash", "", "git push --force", permissions.Deny)
	_, _ = s.Remember("/a", "write", "", "docs/a.md", permissions.Allow)

	look := func(root string, c permissions.Call) permissions.Decision {
		r, ok := s.Lookup(root, c)
		if !ok {
			return ""
		}
		return r.Decision
	}
	if d := look("/a", permtest.Call("bash", `{"command":"git push origin"}`)); d != permissions.Allow {
		t.Errorf("pattern allow: %q", d)
	}
	if d := look("/a", permtest.Call("bash", `{"command":"git push --force origin"}`)); d != permissions.Deny {
		t.Errorf("deny wins over allow: %q", d)
	}
	if d := look("/a", permtest.Call("bash", `{"command":"git push; rm -rf /"}`)); d != "" {
		t.Errorf("a remembered allow must not match a command with metacharacters: %q", d)
	}
	if d := look("/a", permtest.Call("bash", `{"command":"git pull"}`)); d != "" {
		t.Errorf("other command: %q", d)
	}
	if d := look("/b", permtest.Call("bash", `{"command":"git push origin"}`)); d != "" {
		t.Errorf("other workspace: %q", d)
	}
	if d := look("/a", permtest.Call("write", `{"path":"docs/b.md"}`)); d != "" {
		t.Errorf("other path: %q", d)
	}
	if d := look("/a", permissions.Call{Tool: "write", Args: json.RawMessage(`{"path":"/a/docs/a.md"}`), Cwd: "/a"}); d != permissions.Allow {
		t.Errorf("same path, absolute: %q", d)
	}
}

func TestCheckCombinesPolicyAndStore(t *testing.T) {
	xdgtest.Isolate(t)
	s := openStore(t)
	_, _ = s.Remember("/w", "bash", "", "", permissions.Allow)
	_, _ = s.Remember("/w", "write", "", "", permissions.Deny)
	_, _ = s.Remember("/w", "edit", "", "", permissions.Allow)
	settings := permissions.Layer{Source: "user settings", Spec: permtest.Spec(t, `{"tools":{"bash":[{"pattern":"rm","decision":"deny"}],"edit":"deny","read":"allow"}}`)}
	p := permissions.NewPolicy(nil, settings)

	v := permissions.Check(p, s, "/w", permtest.Call("bash", `{"command":"ls"}`))
	if v.Decision != permissions.Allow || v.Source != "remembered" || v.Remembered == nil || v.Remembered.Tool != "bash" {
		t.Errorf("remembered allow answers ask: %+v", v)
	}
	if v := permissions.Check(p, s, "/w", permtest.Call("bash", `{"command":"rm -rf x"}`)); v.Decision != permissions.Deny || v.Source != "user settings" {
		t.Errorf("an explicit deny rule is never overridden by a remembered allow: %+v", v)
	}
	if v := permissions.Check(p, s, "/w", permtest.Call("edit", `{"path":"a"}`)); v.Decision != permissions.Deny {
		t.Errorf("an explicit deny entry is never overridden: %+v", v)
	}
	if v := permissions.Check(p, s, "/w", permtest.Call("write", `{"path":"a"}`)); v.Decision != permissions.Deny || v.Source != "remembered" {
		t.Errorf("remembered deny answers ask: %+v", v)
	}
	if v := permissions.Check(p, s, "/other", permtest.Call("bash", `{"command":"ls"}`)); v.Decision != permissions.Ask {
		t.Errorf("other workspace asks: %+v", v)
	}
	if v := permissions.Check(p, nil, "/w", permtest.Call("bash", `{"command":"ls"}`)); v.Decision != permissions.Ask {
		t.Errorf("nil store: %+v", v)
	}
}

func TestStoreSeesAnotherProcessAndRefusesBrokenFiles(t *testing.T) {
	env := xdgtest.Isolate(t)
	s1, s2 := openStore(t), openStore(t) // two daemons on one file
	a, _ := s1.Remember("/w", "bash", "", "", permissions.Allow)
	if r, ok := s2.Lookup("/w", permtest.Call("bash", `{}`)); !ok || r.ID != a.ID {
		t.Fatalf("second store does not see the first's answer: %+v %v", r, ok)
	}
	b, _ := s2.Remember("/w", "write", "", "", permissions.Allow)
	if l, _ := s1.List(); len(l.Permissions) != 2 || l.Permissions[1].ID != b.ID {
		t.Fatalf("first store's list: %+v", l.Permissions)
	}

	// A broken file: OpenStore fails rather than overwrite it; an open store keeps what it
	// had for lookups and refuses to change the file.
	path := filepath.Join(env.State, "pid", "permissions.json")
	if err := os.WriteFile(path, []byte(`{"permissions":[{"id":"x","tool":"bash","decision":"maybe","scope":"workspace:/w"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := permissions.OpenStore(""); err == nil || !strings.Contains(err.Error(), "maybe") {
		t.Fatalf("OpenStore on a broken file: %v", err)
	}
	if _, ok := s1.Lookup("/w", permtest.Call("bash", `{}`)); !ok {
		t.Fatal("lookup lost the entries read before the file broke")
	}
	if _, err := s1.Remember("/w", "edit", "", "", permissions.Allow); err == nil {
		t.Fatal("Remember overwrote a broken file")
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "maybe") {
		t.Fatal("broken file was changed")
	}
	if err := os.WriteFile(path, []byte(`not json`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := permissions.OpenStore(""); err == nil {
		t.Fatal("OpenStore accepted a file that is not JSON")
	}
}
