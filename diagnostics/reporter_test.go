// This file tests the Reporter over a source given as its Ask callback (the editor's or pid's
// own servers stand behind it in a session; the faces' fixtures run those): what the settle
// step adds to edit's and write's results, what it asks, what it leaves alone, and the
// diagnostics tool's results and text.

package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/lsp"
	"github.com/pid-agent/pid/problems"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// source is a source of problems: its answer, and the questions it was asked.
type source struct {
	answer Problems
	err    error

	// mu guards asked.
	mu    sync.Mutex
	asked [][]string
}

func (s *source) ask(_ context.Context, paths []string) (Problems, error) {
	s.mu.Lock()
	s.asked = append(s.asked, slices.Clone(paths))
	s.mu.Unlock()
	return s.answer, s.err
}

const cwd = "/ws"

// reporter returns a Reporter over src with cwd /ws, serving only .go files when goOnly
// (pid's own servers), and what it failed with.
func reporter(src *source, goOnly bool) (*Reporter, *[]string) {
	var fails []string
	r := &Reporter{Source: "the editor", Ask: src.ask, Cwd: cwd,
		Resolve: func(p string) (string, error) {
			if strings.Contains(p, "..") {
				return "", errors.New("outside")
			}
			if filepath.IsAbs(p) {
				return p, nil
			}
			return filepath.Join(cwd, p), nil
		},
		Fail: func(msg string) { fails = append(fails, msg) }}
	if goOnly {
		r.Source = "the language server"
		r.Serves = func() func(string) bool { return func(p string) bool { return strings.HasSuffix(p, ".go") } }
	}
	return r, &fails
}

func diag(path string, line uint32, sev int, msg string) problems.Diagnostic {
	d := problems.Diagnostic{Path: path, Severity: sev, Message: msg}
	d.Range.Start.Line = line
	return d
}

// edit is the settle input of an edit of path whose result says text.
func edit(path, text string) toolexec.SettleInput {
	return toolexec.SettleInput{
		Call:   toolexec.Call{Name: tools.NameEdit, Args: []byte(fmt.Sprintf(`{"path":%q}`, path))},
		Result: toolexec.Result{Content: []llm.Content{llm.Text(text)}, Details: tools.EditDetails{Path: path}},
	}
}

func texts(c []llm.Content) []string {
	var out []string
	for _, b := range c {
		out = append(out, b.Text)
	}
	return out
}

// The settle step asks once for the files the batch changed (each once), and each result
// gets its file's errors after its own text and its whole list in details; a file with
// none gets an empty list and no text; a path that does not resolve gets nothing.
func TestSettleAddsEachFilesErrors(t *testing.T) {
	src := &source{answer: Problems{Diagnostics: []problems.Diagnostic{
		diag("/ws/a.go", 2, 1, "undefined: x"), diag("/ws/a.go", 4, 2, "unused"), diag("/ws/other.go", 0, 1, "elsewhere")}}}
	r, fails := reporter(src, false)
	out := r.Settle(context.Background(), []toolexec.SettleInput{edit("a.go", "edited a"), edit("b.go", "edited b"), edit("/ws/a.go", "again"), edit("../x", "out")})
	if len(src.asked) != 1 || !slices.Equal(src.asked[0], []string{"/ws/a.go", "/ws/b.go"}) {
		t.Fatalf("asked %v, want one question for a.go and b.go", src.asked)
	}
	if len(out) != 4 || out[3] != nil || len(*fails) != 0 {
		t.Fatalf("overrides %v, fails %v: want 4 with none for the unresolved path, no failure", out, *fails)
	}
	a := texts(out[0].Content)
	if len(a) != 2 || a[0] != "edited a" || !strings.Contains(a[1], "Problems the editor reports in a.go after this change:") || !strings.Contains(a[1], "undefined: x") || strings.Contains(a[1], "unused") {
		t.Fatalf("a.go's result = %q, want its own text then its error (not the warning)", a)
	}
	if d := out[0].Details.(tools.EditDetails); len(d.Diagnostics) != 2 {
		t.Fatalf("a.go's details list %v, want its error and warning", d.Diagnostics)
	}
	if out[1].Content != nil || out[1].Details.(tools.EditDetails).Diagnostics == nil || len(out[1].Details.(tools.EditDetails).Diagnostics) != 0 {
		t.Fatalf("b.go's override = %+v, want no text and an empty (not nil) list", out[1])
	}
}

// With pid's own servers, a file no server is for is neither asked about nor said clean;
// when the servers fail on some files, the others' problems stand and the failed ones get
// nothing; the failure is reported once.
func TestSettleOwnServers(t *testing.T) {
	src := &source{answer: Problems{Diagnostics: []problems.Diagnostic{diag("/ws/a.go", 0, 1, "bad")}},
		err: &lsp.Error{Msg: "gopls crashed on c.go", Paths: []string{"/ws/c.go"}}}
	r, fails := reporter(src, true)
	out := r.Settle(context.Background(), []toolexec.SettleInput{edit("a.go", "a"), edit("notes.txt", "n"), edit("c.go", "c")})
	if len(src.asked) != 1 || !slices.Equal(src.asked[0], []string{"/ws/a.go", "/ws/c.go"}) {
		t.Fatalf("asked %v, want the .go files only", src.asked)
	}
	if out[0] == nil || !strings.Contains(strings.Join(texts(out[0].Content), "\n"), "the language server reports in a.go") {
		t.Fatalf("a.go's override = %+v, want its problem", out[0])
	}
	if out[1] != nil || out[2] != nil {
		t.Fatalf("notes.txt and c.go got %+v and %+v, want nothing", out[1], out[2])
	}
	if len(*fails) != 1 || !strings.Contains((*fails)[0], "gopls crashed") {
		t.Fatalf("fails = %v, want the servers' failure once", *fails)
	}

	// Any other error: nothing changes.
	src.err = errors.New("no answer")
	if out := r.Settle(context.Background(), []toolexec.SettleInput{edit("a.go", "a")}); out != nil {
		t.Fatalf("a failed question changed the results: %+v", out)
	}
	// A cancelled run: nothing changes, nothing is reported.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	*fails = nil
	if out := r.Settle(ctx, []toolexec.SettleInput{edit("a.go", "a")}); out != nil || len(*fails) != 0 {
		t.Fatalf("a cancelled run gave %+v, fails %v", out, *fails)
	}
}

// A file whose server was still starting gets the note that its problems may come later,
// with the path its result shows.
func TestSettleStarting(t *testing.T) {
	src := &source{answer: Problems{Starting: []string{"/ws/a.ts"}}}
	r, _ := reporter(src, false)
	in := edit("a.ts", "edited")
	in.Result.Details = tools.EditDetails{Path: "a.ts"}
	out := r.Settle(context.Background(), []toolexec.SettleInput{in})
	if got := texts(out[0].Content); len(got) != 2 || got[0] != "edited" || got[1] != StartingText("a.ts") {
		t.Fatalf("result = %q, want its text then the starting note", got)
	}
}

// The tool reports every file's problems by file, sorted, relative to the cwd, labelled;
// severity 1 leaves the warnings out; a path no server is for gets a text saying so, and a
// source that gives nothing but an error fails the call.
func TestTool(t *testing.T) {
	src := &source{answer: Problems{Diagnostics: []problems.Diagnostic{
		diag("/ws/z.go", 0, 1, "zed"), diag("/ws/a.go", 3, 2, "careful"), diag("/elsewhere/x.go", 0, 1, "out")}}}
	r, _ := reporter(src, true)
	res, err := r.report(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	text := texts(res.Content)[0]
	for _, want := range []string{"a.go: 0 errors, 1 warnings", "warning: careful", "z.go: 1 errors, 0 warnings", "error: zed", "/elsewhere/x.go: 1 errors"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "/elsewhere") > strings.Index(text, "a.go") {
		t.Errorf("files not sorted:\n%s", text)
	}
	res, _ = r.report(context.Background(), "", 1)
	if text := texts(res.Content)[0]; strings.Contains(text, "careful") || !strings.Contains(text, "zed") {
		t.Errorf("severity 1 gave:\n%s", text)
	}
	if n := len(res.Details.(map[string]any)["diagnostics"].([]problems.Diagnostic)); n != 2 {
		t.Errorf("severity 1's details list %d problems, want the 2 errors", n)
	}
	res, _ = r.report(context.Background(), "a.go", 0)
	if got := texts(res.Content)[0]; !strings.HasPrefix(got, "a.go: 0 errors, 1 warnings") || strings.Contains(got, "zed") {
		t.Errorf("a.go's report:\n%s", got)
	}
	res, _ = r.report(context.Background(), "notes.txt", 0)
	if got := texts(res.Content)[0]; !strings.HasPrefix(got, "No language server is set up for notes.txt") {
		t.Errorf("a file no server is for: %q", got)
	}
	src.answer, src.err = Problems{}, errors.New("down")
	if _, err := r.report(context.Background(), "", 0); err == nil || err.Error() != "the language server gave no problems: down" {
		t.Errorf("a failed source: %v", err)
	}
	src.err = nil
	res, _ = r.report(context.Background(), "a.go", 0)
	if got := texts(res.Content)[0]; got != "No problems reported in a.go." {
		t.Errorf("a clean file: %q", got)
	}
}

// The text lists MaxFilesShown files at most, then says how many more.
func TestTextCutsManyFiles(t *testing.T) {
	r, _ := reporter(&source{}, false)
	var ds []problems.Diagnostic
	for i := range MaxFilesShown + 3 {
		ds = append(ds, diag(fmt.Sprintf("/ws/f%03d.go", i), 0, 1, "e"))
	}
	text := r.Text("", ds)
	if !strings.Contains(text, fmt.Sprintf("f%03d.go", MaxFilesShown-1)) || strings.Contains(text, fmt.Sprintf("f%03d.go", MaxFilesShown)) || !strings.HasSuffix(text, "... and 3 more files with problems (ask about one with path)") {
		t.Fatalf("text of %d files:\n%s", len(ds), text)
	}
}

// The waits are the defaults where the settings name none.
func TestWaits(t *testing.T) {
	var none *Settings
	if w := none.Waits(); w != (Wait{Change: DefaultWait, First: DefaultFirstWait}) {
		t.Errorf("no settings: %+v", w)
	}
	if w := (&Settings{WaitMs: 200}).Waits(); w != (Wait{Change: 200 * time.Millisecond, First: DefaultFirstWait}) {
		t.Errorf("waitMs 200: %+v", w)
	}
	if w := (&Settings{FirstWaitMs: 3000}).Waits(); w != (Wait{Change: DefaultWait, First: 3 * time.Second}) {
		t.Errorf("firstWaitMs 3000: %+v", w)
	}
}
