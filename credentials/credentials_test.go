package credentials

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func entries() *File {
	return &File{Credentials: map[string]Entry{
		"anthropic":     {Provider: "anthropic", BaseURL: "https://api.anthropic.com", APIKey: "key-anthropic-123456"},
		"openrouter.ai": {Provider: "openai", BaseURL: "https://openrouter.ai/api/v1", APIKey: "key-openrouter-123456"},
	}}
}

// Save makes a 0600 file in a 0700 folder, making an existing open folder private; Load
// reads back what Save wrote.
func TestSaveIsPrivateAndLoadReadsIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pid")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	made, err := Save(path, entries())
	if err != nil || !made {
		t.Fatalf("Save = %v, %v; want the folder made private", made, err)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("file %v, folder %v; want 0600 and 0700", fi.Mode().Perm(), di.Mode().Perm())
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Names(), ","); got != "anthropic,openrouter.ai" || f.Credentials["anthropic"].APIKey != "key-anthropic-123456" {
		t.Errorf("loaded %v", f.Credentials)
	}
	if f, err := Load(filepath.Join(dir, "missing.json")); err != nil || len(f.Credentials) != 0 {
		t.Errorf("a missing file: %v, %v; want an empty file and no error", f, err)
	}
}

// A file that is a link, that others may read, or whose folder others may write is
// refused: Load wraps ErrUnsafe and says how to fix it; Save refuses to write through a
// link.
func TestLoadRefusesWhatIsNotPrivate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir, path string)
		want  string
	}{
		{"link", func(t *testing.T, dir, path string) {
			target := filepath.Join(t.TempDir(), "elsewhere.json")
			if _, err := Save(target, entries()); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"group-readable", func(t *testing.T, dir, path string) { os.Chmod(path, 0o640) }, "chmod 600"},
		{"other-readable", func(t *testing.T, dir, path string) { os.Chmod(path, 0o604) }, "chmod 600"},
		{"open folder", func(t *testing.T, dir, path string) { os.Chmod(dir, 0o777) }, "chmod 700"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pid")
			path := filepath.Join(dir, FileName)
			if tc.name != "link" {
				if _, err := Save(path, entries()); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir, path)
			f, err := Load(path)
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), tc.want) || f != nil {
				t.Fatalf("Load = %v, %v; want ErrUnsafe naming %q", f, err, tc.want)
			}
			if strings.Contains(err.Error(), "key-anthropic") {
				t.Errorf("the error holds a key: %v", err)
			}
			if tc.name == "link" {
				if _, err := Save(path, entries()); !errors.Is(err, ErrUnsafe) {
					t.Errorf("Save through a link = %v, want ErrUnsafe", err)
				}
			}
		})
	}
}

func TestOriginAndFind(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.anthropic.com":         "https://api.anthropic.com:443",
		"HTTPS://API.Anthropic.com:443/v1/": "https://api.anthropic.com:443",
		"http://localhost:11434/v1":         "http://localhost:11434",
		"http://[::1]/v1":                   "http://[::1]:80",
		"ftp://example.com":                 "",
		"not a url":                         "",
		"":                                  "",
	} {
		if got := Origin(in); got != want {
			t.Errorf("Origin(%q) = %q, want %q", in, got, want)
		}
	}
	f := entries()
	if n, _, ok := f.Find("openai", "https://openrouter.ai/api/v1/"); !ok || n != "openrouter.ai" {
		t.Errorf("Find openrouter = %q, %v", n, ok)
	}
	for _, miss := range [][2]string{{"anthropic", "https://evil.example"}, {"openai", "https://api.anthropic.com"}, {"anthropic", "http://api.anthropic.com"}} {
		if n, _, ok := f.Find(miss[0], miss[1]); ok {
			t.Errorf("Find(%q, %q) = %q: a key for another provider or origin", miss[0], miss[1], n)
		}
	}
}

// The cache reads the file again when it changes, and follows XDG_CONFIG_HOME.
func TestLookupSeesChanges(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if key, _, err := Lookup("anthropic", "https://api.anthropic.com"); key != "" || err != nil {
		t.Fatalf("no file: %q, %v", key, err)
	}
	path, _ := DefaultPath()
	if _, err := Save(path, entries()); err != nil {
		t.Fatal(err)
	}
	key, name, err := Lookup("anthropic", "https://api.anthropic.com/v1")
	if key != "key-anthropic-123456" || name != "anthropic" || err != nil {
		t.Errorf("Lookup = %q, %q, %v", key, name, err)
	}
	if s := Secrets(); len(s) != 2 || !s["anthropic"].Active() {
		t.Errorf("Secrets = %v", s)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if key, _, err := Lookup("anthropic", "https://api.anthropic.com"); key != "" || !errors.Is(err, ErrUnsafe) {
		t.Errorf("after chmod 644: %q, %v; want no key and ErrUnsafe", key, err)
	}
	if s := Secrets(); len(s) != 2 {
		t.Errorf("Secrets of a file others may read = %v: want its keys still redacted", s)
	}
	os.Remove(path)
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), path); err != nil {
		t.Fatal(err)
	}
	if s := Secrets(); s != nil {
		t.Errorf("Secrets of a link = %v, want none", s)
	}
}
