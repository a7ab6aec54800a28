package search_test

// The fuzz target of .gitignore matching (gitignore.go): any file content and any path are
// handled without a panic, and for simple patterns (letters, '.', '*', '?', '/', a leading
// '!' and a trailing '/') the answer is that of a reference matcher written here from
// gitignore(5) and git's wildmatch, independently of the regular expressions gitignore.go
// builds. TestGitignoreSeedsAgreeWithGit checks the committed seeds against
// `git check-ignore` too. Seeds: testdata/fuzz/FuzzGitignore.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pid-agent/pid/search"
)

func FuzzGitignore(f *testing.F) {
	for _, s := range []struct {
		ignore, rel string
		dir         bool
	}{
		{"*.log", "a/b.log", false},
		{"/build", "build", true},
		{"/build", "x/build", true},
		{"doc/*.txt", "doc/a/b.txt", false},
		{"**/foo", "a/b/foo", false},
		{"a/**/b", "a/b", false},
		{"a/**", "a", true},
		{"*.o\n!keep.o", "keep.o", false},
		{"out/", "out", false},
		{"#c\n\\#c", "#c", false},
		{"[a-", "[a-", false},
	} {
		f.Add(s.ignore, s.rel, s.dir)
	}
	f.Fuzz(func(t *testing.T, ignore, rel string, dir bool) {
		got := search.Ignored(ignore, rel, dir) // must not panic, whatever the input
		lines, ok := simpleIgnore(ignore)
		if !ok || !simplePath(rel) {
			return
		}
		if want := refIgnored(lines, rel, dir); got != want {
			t.Fatalf(".gitignore %q, path %q (folder: %v): Ignored says %v, the reference %v", ignore, rel, dir, got, want)
		}
	})
}

// simpleIgnore splits a .gitignore into its lines and reports whether every line is
// simple: "!"? "/"? SEG ("/" SEG)* "/"?, each SEG non-empty of letters, digits, '.', '*'
// and '?'. At most 4 lines of at most 16 bytes keep the reference's backtracking small.
func simpleIgnore(content string) ([]string, bool) {
	lines := strings.Split(content, "\n")
	if len(lines) > 4 {
		return nil, false
	}
	for _, l := range lines {
		if len(l) == 0 || len(l) > 16 {
			return nil, false
		}
		p := strings.TrimPrefix(l, "!")
		p = strings.TrimPrefix(p, "/")
		p = strings.TrimSuffix(p, "/")
		if p == "" {
			return nil, false
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "" {
				return nil, false
			}
			for _, c := range seg {
				if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '*' || c == '?') {
					return nil, false
				}
			}
		}
	}
	return lines, true
}

// simplePath reports whether rel is a relative path of at most 24 bytes whose segments are
// non-empty, not "." or "..", of letters, digits and '.'.
func simplePath(rel string) bool {
	if rel == "" || len(rel) > 24 {
		return false
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		for _, c := range seg {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.') {
				return false
			}
		}
	}
	return true
}

// refIgnored is gitignore(5) for one entry (not its folders): the last line that matches
// decides; "!" re-includes; a trailing "/" matches folders only; a pattern with a "/"
// before its end is matched against the whole path, one without against the last segment.
func refIgnored(lines []string, rel string, dir bool) bool {
	ignored := false
	for _, l := range lines {
		neg := strings.HasPrefix(l, "!")
		p := strings.TrimPrefix(l, "!")
		dirOnly := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		if dirOnly && !dir {
			continue
		}
		subject := rel
		if strings.Contains(p, "/") {
			p = strings.TrimPrefix(p, "/")
		} else {
			subject = rel[strings.LastIndexByte(rel, '/')+1:]
		}
		if wildmatch(p, subject) {
			ignored = !neg
		}
	}
	return ignored
}

// wildmatch is git's wildmatch with WM_PATHNAME, for patterns of literal bytes, '*' and
// '?': '*' and '?' never match '/'; a run of '*' that is a whole segment ("**" at the start
// or after '/', and at the end or before '/') matches across '/', and "**/" also matches
// no folder at all.
func wildmatch(pat, s string) bool { return wm(pat, 0, s) }

// wm matches pat[i:] against s; pat[:i] tells whether a '*' run at i starts a segment.
func wm(pat string, i int, s string) bool {
	for i < len(pat) {
		switch pat[i] {
		case '?':
			if s == "" || s[0] == '/' {
				return false
			}
			i, s = i+1, s[1:]
		case '*':
			j := i
			for j < len(pat) && pat[j] == '*' {
				j++
			}
			whole := j-i >= 2 && (i == 0 || pat[i-1] == '/') && (j == len(pat) || pat[j] == '/')
			if whole && j < len(pat) && wm(pat, j+1, s) {
				return true // "**/" matching no folder
			}
			for k := 0; k <= len(s); k++ {
				if wm(pat, j, s[k:]) {
					return true
				}
				if k < len(s) && s[k] == '/' && !whole {
					return false
				}
			}
			return false
		default:
			if s == "" || s[0] != pat[i] {
				return false
			}
			i, s = i+1, s[1:]
		}
	}
	return s == ""
}

// seed is one committed seed of FuzzGitignore.
type seed struct {
	ignore, rel string
	dir         bool
}

// readSeeds reads the committed corpus of FuzzGitignore.
func readSeeds(t *testing.T) []seed {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzGitignore", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seeds in testdata/fuzz/FuzzGitignore (%v)", err)
	}
	var out []seed
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			vals = append(vals, sc.Text())
		}
		f.Close()
		if len(vals) != 4 || vals[0] != "go test fuzz v1" {
			t.Fatalf("%s: not a seed of three values", name)
		}
		ignore, err1 := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(vals[1], "string("), ")"))
		rel, err2 := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(vals[2], "string("), ")"))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", name, err1, err2)
		}
		out = append(out, seed{ignore, rel, vals[3] == "bool(true)"})
	}
	return out
}

// walkIgnored is what grep and find do: an entry is skipped when it or a folder on its way
// is ignored (git cannot re-include a file inside an excluded folder).
func walkIgnored(ignore, rel string, dir bool) bool {
	segs := strings.Split(rel, "/")
	for i := 1; i < len(segs); i++ {
		if search.Ignored(ignore, strings.Join(segs[:i], "/"), true) {
			return true
		}
	}
	return search.Ignored(ignore, rel, dir)
}

// The simple seeds agree with the reference matcher and, when git is installed, with
// `git check-ignore` on a real repository holding the path (as a folder or a file).
func TestGitignoreSeedsAgreeWithGit(t *testing.T) {
	seeds := readSeeds(t)
	git, gitErr := exec.LookPath("git")
	if gitErr != nil {
		t.Logf("git is not installed: checking the seeds against the reference matcher only")
	}
	simple := 0
	for _, s := range seeds {
		lines, ok := simpleIgnore(s.ignore)
		if !ok || !simplePath(s.rel) {
			continue
		}
		simple++
		if got, want := search.Ignored(s.ignore, s.rel, s.dir), refIgnored(lines, s.rel, s.dir); got != want {
			t.Errorf(".gitignore %q, path %q (folder: %v): Ignored %v, reference %v", s.ignore, s.rel, s.dir, got, want)
		}
		if gitErr != nil {
			continue
		}
		repo := t.TempDir()
		if out, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		if err := os.WriteFile(filepath.Join(repo, ".gitignore"), []byte(s.ignore+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(repo, filepath.FromSlash(s.rel))
		if s.dir {
			err := os.MkdirAll(p, 0o755)
			if err == nil {
				err = os.WriteFile(filepath.Join(p, "f"), nil, 0o644) // git sees no empty folders
			}
			if err != nil {
				t.Fatal(err)
			}
		} else if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		} else if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(git, "check-ignore", "--no-index", "-q", s.rel)
		cmd.Dir = repo
		err := cmd.Run()
		var gitSays bool
		switch e := err.(type) {
		case nil:
			gitSays = true
		case *exec.ExitError:
			if e.ExitCode() != 1 {
				t.Fatalf("git check-ignore %q: %v", s.rel, err)
			}
		default:
			t.Fatalf("git check-ignore: %v", err)
		}
		if got := walkIgnored(s.ignore, s.rel, s.dir); got != gitSays {
			t.Errorf(".gitignore %q, path %q (folder: %v): pid's walk says ignored=%v, git check-ignore %v", s.ignore, s.rel, s.dir, got, gitSays)
		}
	}
	if simple < 20 {
		t.Errorf("only %d simple seeds; the corpus should exercise the reference", simple)
	}
}
