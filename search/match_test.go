package search_test

// The matching under grep and find: .gitignore decisions, globs, and grep's line finding
// in one file (chunks, long lines, binary files, encodings), against a line-by-line
// reference.

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/pid-agent/pid/search"
)

func TestGitignoreMatching(t *testing.T) {
	const gi = `# comment
*.log
!keep.log
build/
/root-only.txt
docs/*.tmp
**/cache
a/**/z
out/**
\#hash
trailing   
\!bang
`
	cases := []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{"x.log", false, true},
		{"deep/er/x.log", false, true},
		{"keep.log", false, false}, // negated
		{"sub/keep.log", false, false},
		{"build", true, true},
		{"src/build", true, true}, // no slash but the trailing one: any depth
		{"build", false, false},   // folder-only pattern, this is a file
		{"root-only.txt", false, true},
		{"sub/root-only.txt", false, false}, // anchored
		{"docs/a.tmp", false, true},
		{"docs/sub/a.tmp", false, false}, // * does not cross /
		{"cache", true, true},
		{"x/y/cache", false, true},
		{"a/z", false, true},
		{"a/b/c/z", false, true},
		{"b/a/z", false, false},
		{"out/x", false, true},
		{"out/x/y", false, true},
		{"out", true, false}, // out/** matches what is inside, not out itself
		{"#hash", false, true},
		{"comment", false, false},
		{"trailing", false, true},
		{"!bang", false, true},
		{"x.go", false, false},
	}
	for _, c := range cases {
		if got := search.Ignored(gi, c.rel, c.isDir); got != c.want {
			t.Errorf("Ignored(%q, dir=%v) = %v, want %v", c.rel, c.isDir, got, c.want)
		}
	}
	// The last matching pattern wins.
	if !search.Ignored("!a.txt\n*.txt\n", "a.txt", false) || search.Ignored("*.txt\n!a.txt\n", "a.txt", false) {
		t.Error("last match must win")
	}
	if !search.Ignored("[a-c]?.md\n", "b1.md", false) || search.Ignored("[a-c]?.md\n", "d1.md", false) || search.Ignored("[!a]*\n", "abc", false) {
		t.Error("classes")
	}
}

func TestGlobMatching(t *testing.T) {
	cases := []struct {
		glob, rel string
		want      bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true}, // no slash: matched against the name at any depth
		{"*.go", "main.go.txt", false},
		{"*_test.{go,ts}", "x/y_test.ts", true},
		{"*.{go,md}", "README.md", true},
		{"*.{go,md}", "a.txt", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/x/a.go", false},
		{"src/**/*.go", "src/a.go", true},
		{"src/**/*.go", "src/x/y/a.go", true},
		{"**/testdata/*", "a/testdata/f", true},
		{"**/testdata/*", "testdata/f", true},
		{"./src/*.go", "src/a.go", true},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"{a,b{c,d}}.txt", "bd.txt", true},
		{"{x}.txt", "{x}.txt", true}, // no comma: literal braces
	}
	for _, c := range cases {
		got, err := search.GlobMatch(c.glob, c.rel)
		if err != nil || got != c.want {
			t.Errorf("GlobMatch(%q, %q) = %v, %v; want %v", c.glob, c.rel, got, err, c.want)
		}
	}
}

// naiveGrepLines is the reference for grep's line finding: split at "\n" (a last empty
// piece is no line), match each line alone.
func naiveGrepLines(t *testing.T, pattern string, data []byte) []int {
	t.Helper()
	re := regexp.MustCompile(pattern)
	var out []int
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if re.Match(l) {
			out = append(out, i+1)
		}
	}
	return out
}

// grepLinePatterns exercise every way the matcher finds candidates: exact literals (with
// and without case folding, with letters whose folds leave ASCII), required literals inside
// expressions, expressions with no literal (run over the whole buffer), matches that would
// span lines, line and text edges, and empty matches.
var grepLinePatterns = []string{
	`ab`, `(?i)ab`, `(?i)kas`, `(?i)sk`, `(?i)é`, `a\nb`, `b\s+a`, `[^x]+`, `a|b`, `^a`, `b$`, `^$`, `\Ab`,
	`a\z`, `x*`, `\bab\b`, `(?i)[a-c]k+`, `a.b`, `\r$`, `(ab)+c`, `K`, `(?i)ka`, `é+`, `.`, `ba\r`,
	`(?m)^b`, `(?s)a.b`, `a{2,}`, `(?i)AB|k`,
}

func TestGrepLinesAgreeWithLineByLine(t *testing.T) {
	alphabet := []string{"a", "b", "c", "k", "K", "s", "\u212a", "é", "É", "\n", "\n", "\r", " ", "x", "\xff"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 400 {
		var sb strings.Builder
		for range rng.IntN(60) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		data := []byte(sb.String())
		for _, p := range grepLinePatterns {
			want := naiveGrepLines(t, p, data)
			got, _, bin, _, _, err := search.GrepLines(p, bytes.NewReader(data), int64(len(data)))
			if err != nil || bin || !slices.Equal(got, want) {
				t.Fatalf("round %d, pattern %q on %q: got %v (binary %v, %v), want %v", round, p, data, got, bin, err, want)
			}
		}
	}
}

func FuzzGrepLines(f *testing.F) {
	f.Add(0, "ab\nkab\r\nK\u212a\n")
	f.Add(5, "b a\n\nba\n")
	f.Fuzz(func(t *testing.T, i int, s string) {
		if i < 0 {
			i = -i
		}
		p := grepLinePatterns[i%len(grepLinePatterns)]
		data := []byte(strings.ReplaceAll(s, "\x00", "0")) // a NUL makes the input binary
		if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.HasPrefix(data, []byte{0xef, 0xbb, 0xbf}) {
			return // a byte order mark changes what the lines are (TestGrepBinaryAndEncodings)
		}
		want := naiveGrepLines(t, p, data)
		got, _, bin, _, _, err := search.GrepLines(p, bytes.NewReader(data), int64(len(data)))
		if err != nil || bin || !slices.Equal(got, want) {
			t.Fatalf("pattern %q on %q: got %v (binary %v, %v), want %v", p, data, got, bin, err, want)
		}
	})
}

func TestGrepLiteralPrefilter(t *testing.T) {
	for _, c := range []struct {
		pattern, lit string
		exact        bool
	}{
		{`hello`, "hello", true},
		{`(?i)Hello`, "hello", true},
		{`(?i)mask`, "ma", false}, // k and s fold outside ASCII: the literal stops before them
		{`[A-Z]\w+Error\(`, "Error(", false},
		{`func (\w+)\.Close`, ".Close", false},
		{`(foo)+bar`, "foobar", false}, // every match ends its (foo)+ with foo
		{`a|b`, "", false},
		{`x*`, "", false},
	} {
		lit, exact := search.GrepLiteral(c.pattern)
		if lit != c.lit || exact != c.exact {
			t.Errorf("%q: literal %q (exact %v), want %q (%v)", c.pattern, lit, exact, c.lit, c.exact)
		}
	}
}

// oneByteReader yields its content a few bytes per Read, so chunks end anywhere.
type oneByteReader struct {
	data []byte
	n    int
}

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

func TestGrepChunksAndLongLines(t *testing.T) {
	// Matches on both sides of every chunk boundary, numbered right.
	var sb strings.Builder
	for i := 1; i <= 60_000; i++ {
		if i%7_000 == 0 {
			fmt.Fprintf(&sb, "needle %d\n", i)
		} else {
			fmt.Fprintf(&sb, "line %d of filler text\n", i)
		}
	}
	data := []byte(sb.String())
	got, _, _, _, _, _ := search.GrepLines("needle", &oneByteReader{data: data, n: 4093}, 0)
	if want := []int{7000, 14000, 21000, 28000, 35000, 42000, 49000, 56000}; !slices.Equal(got, want) {
		t.Errorf("across chunks: %v, want %v", got, want)
	}
	// A line longer than a chunk is searched whole; one longer than the most searched is
	// searched that far, reported, and the lines after it keep their numbers.
	mid := "start " + strings.Repeat("y", 1<<20) + " needle in a 1 MB line\n"
	huge := "needle " + strings.Repeat("z", search.MaxSearchedLineBytes) + " needle past the cut\n"
	data = []byte("first\n" + mid + huge + "needle after\n")
	got, texts, _, _, long, _ := search.GrepLines("needle", bytes.NewReader(data), int64(len(data)))
	if !slices.Equal(got, []int{2, 3, 4}) || !slices.Equal(long, []int{3}) || texts[2] != "needle after" {
		t.Errorf("long lines: lines %v, cut %v", got, long)
	}
	if got, _, _, _, long, _ := search.GrepLines("past the cut", bytes.NewReader(data), int64(len(data))); len(got) != 0 || !slices.Equal(long, []int{3}) {
		t.Errorf("a match past the cut: %v, cut %v", got, long)
	}
}

func TestGrepBinaryAndEncodings(t *testing.T) {
	lines := func(p string, data []byte) ([]int, []string, bool, int) {
		got, texts, bin, at, _, err := search.GrepLines(p, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		return got, texts, bin, at
	}
	// A NUL in the first chunk: binary, even after a match.
	if got, _, bin, _ := lines("needle", []byte("needle\n\x00")); !bin || got != nil {
		t.Errorf("NUL in the first chunk: %v, binary %v", got, bin)
	}
	// A NUL far in, after a match: the match stays, the search stops at the NUL's line.
	far := []byte("needle one\n" + strings.Repeat("filler\n", 100_000) + "needle two\nx\x00y\nneedle three\n")
	if got, _, bin, at := lines("needle", far); bin || !slices.Equal(got, []int{1, 100_002}) || at != 100_003 {
		t.Errorf("late NUL: %v, binary %v, stopped at %d", got, bin, at)
	}
	// A NUL far in, before any match: binary.
	if got, _, bin, _ := lines("needle", []byte(strings.Repeat("filler\n", 100_000)+"\x00needle\n")); !bin || got != nil {
		t.Errorf("late NUL before a match: %v, binary %v", got, bin)
	}
	// Latin-1 is searched, shown with U+FFFD.
	if got, texts, bin, _ := lines("caf.", []byte("caf\xe9 au lait\n")); bin || !slices.Equal(got, []int{1}) || texts[0] != "caf\uFFFD au lait" {
		t.Errorf("Latin-1: %v %q binary %v", got, texts, bin)
	}
	// UTF-16 with a byte order mark, both byte orders, is transcoded.
	for _, big := range []bool{false, true} {
		data := []byte{0xff, 0xfe}
		if big {
			data = []byte{0xfe, 0xff}
		}
		for _, u := range utf16.Encode([]rune("one\ncafé needle\n")) {
			if big {
				data = append(data, byte(u>>8), byte(u))
			} else {
				data = append(data, byte(u), byte(u>>8))
			}
		}
		if got, texts, bin, _ := lines("é needle", data); bin || !slices.Equal(got, []int{2}) || texts[0] != "café needle" {
			t.Errorf("UTF-16 (big endian %v): %v %q binary %v", big, got, texts, bin)
		}
	}
	// A UTF-8 byte order mark is not part of the first line; a \r ending a line is not shown.
	if got, texts, _, _ := lines("^needle", []byte("\xef\xbb\xbfneedle\r\n")); !slices.Equal(got, []int{1}) || texts[0] != "needle" {
		t.Errorf("UTF-8 BOM: %v %q", got, texts)
	}
}
