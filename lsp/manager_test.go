package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/problems"
)

// serverBin is the test server (testdata/lspserver), built once by TestMain; buildErr says
// why it could not be.
var serverBin, buildErr = "", error(nil)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pid-lsp-test-")
	if err != nil {
		panic(err)
	}
	serverBin = filepath.Join(dir, "lspserver")
	if out, err := exec.Command("go", "build", "-o", serverBin, "../testdata/lspserver").CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("building the test server: %v\n%s", err, out)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// testServer returns the test server's binary.
func testServer(t testing.TB) string {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return serverBin
}

func request(dir string, cfg *ServerConfig, paths ...string) Request {
	return Request{Paths: paths, Servers: map[string]*ServerConfig{"test": cfg}, FolderOf: func(string) string { return dir }}
}

func waitState(t *testing.T, m *Manager, want string, restarts int) Status {
	t.Helper()
	var st []Status
	proctest.WaitUntilState(t, 10*time.Second, fmt.Sprintf("one server %s, restarted %d times", want, restarts), func() (bool, string) {
		st = m.Servers()
		return len(st) == 1 && st[0].State == want && st[0].Restarts >= restarts, fmt.Sprintf("%+v", st)
	})
	return st[0]
}

// The client starts the server for a matching extension, tells it the file, and returns
// the error on the BROKEN line (0-based range) and the warning; a later change that fixes the
// file reports nothing; a file of another extension starts nothing.
func TestDiagnosticsPushAndChange(t *testing.T) {
	for _, pull := range []bool{false, true} {
		t.Run(map[bool]string{false: "push", true: "pull"}[pull], func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "a.tst")
			os.WriteFile(f, []byte("ok\n  BROKEN here\nWARN\n"), 0o644)
			cfg := &ServerConfig{Command: []string{testServer(t)}, Extensions: []string{".tst"}}
			if pull {
				cfg.Env = map[string]string{"PIDTESTLSP_PULL": "1"}
			}
			m := NewManager(Options{})
			defer m.Close()
			ds, err := m.Diagnostics(t.Context(), request(dir, cfg, f, filepath.Join(dir, "b.txt")), time.Now().Add(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 2 || ds[0].Severity != 1 || ds[0].Range.Start.Line != 1 || ds[0].Range.Start.Character != 2 || ds[0].Path != f || ds[0].Source != "pidtestlsp" {
				t.Fatalf("diagnostics = %+v", ds)
			}
			if got := problems.Report("the language server", []string{f}, ds, filepath.Base); got != "Problems the language server reports in a.tst after this change:\nL2:3 BROKEN is not allowed here (pidtestlsp)" {
				t.Errorf("report = %q", got)
			}
			os.WriteFile(f, []byte("fine\n"), 0o644)
			ds, err = m.Diagnostics(t.Context(), request(dir, cfg, f), time.Now().Add(10*time.Second))
			if err != nil || len(ds) != 0 {
				t.Fatalf("after the fix: %+v, %v", ds, err)
			}
			st := m.Servers()
			if len(st) != 1 || st[0].State != StateReady || st[0].Folder != dir || st[0].Name != "test" {
				t.Errorf("servers = %+v", st)
			}
		})
	}
}

// A server that crashes is marked failed with the end of its stderr, restarted after its
// backoff, and serves again.
func TestCrashRestarts(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.tst")
	os.WriteFile(f, []byte("CRASH\n"), 0o644)
	cfg := &ServerConfig{Command: []string{testServer(t)}, Extensions: []string{".tst"}}
	m := NewManager(Options{Backoff: 50 * time.Millisecond})
	defer m.Close()
	_, err := m.Diagnostics(t.Context(), request(dir, cfg, f), time.Now().Add(10*time.Second))
	if err == nil {
		t.Fatal("a crashing server gave diagnostics without an error")
	}
	// Whether the crash was seen before the restart or not, the error was kept until then.
	st := waitState(t, m, StateReady, 1)
	if st.Restarts != 1 {
		t.Errorf("restarts = %d, want 1", st.Restarts)
	}
	os.WriteFile(f, []byte("BROKEN\n"), 0o644)
	ds, err := m.Diagnostics(t.Context(), request(dir, cfg, f), time.Now().Add(10*time.Second))
	if err != nil || len(ds) != 1 {
		t.Fatalf("after the restart: %+v, %v", ds, err)
	}
}

// A crash keeps the server's stderr in its error.
func TestCrashErrorHasStderr(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.tst")
	os.WriteFile(f, []byte("CRASH\n"), 0o644)
	cfg := &ServerConfig{Command: []string{testServer(t)}, Extensions: []string{".tst"}}
	m := NewManager(Options{Backoff: time.Hour})
	defer m.Close()
	m.Diagnostics(t.Context(), request(dir, cfg, f), time.Now().Add(10*time.Second))
	st := waitState(t, m, StateFailed, 1)
	if !strings.Contains(st.Error, "crashing as asked") || !strings.Contains(st.Error, "exit status 3") {
		t.Errorf("error = %q, want the exit status and the stderr", st.Error)
	}
}

// A command that does not exist fails with a readable error; the wait ends at the deadline
// at the latest.
func TestMissingCommand(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.tst")
	os.WriteFile(f, []byte("x\n"), 0o644)
	m := NewManager(Options{Backoff: time.Hour})
	defer m.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := m.Diagnostics(ctx, request(dir, &ServerConfig{Command: []string{"/nonexistent/pid-lsp"}, Extensions: []string{".tst"}}, f), time.Now().Add(time.Second))
	if err == nil || !strings.Contains(err.Error(), "could not start") {
		t.Fatalf("err = %v", err)
	}
	if st := m.Servers(); len(st) != 1 || st[0].State != StateFailed {
		t.Errorf("servers = %+v", st)
	}
}

func TestParse(t *testing.T) {
	got, err := Parse([]byte(`{"go": {"command": ["gopls"], "extensions": [".go"]}, "off": null}`))
	if err != nil || got["go"].Command[0] != "gopls" || got["off"] != nil {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{`{"x": {"extensions": [".go"]}}`, `{"x": {"command": ["a"]}}`, `{"x": {"command": ["a"], "extensions": ["go"]}}`, `{"x": {"command": ["a"], "extensions": [".go"], "nope": 1}}`, `[]`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted it", bad)
		}
	}
	merged := Merge(got, map[string]*ServerConfig{"go": nil})
	if len(merged) != 0 {
		t.Errorf("merge = %+v", merged)
	}
}

// BenchmarkDiagnosticsRoundTrip measures one Diagnostics call on a changed file with the
// test server running: didChange, the server's publishDiagnostics, back (docs/performance.md).
func BenchmarkDiagnosticsRoundTrip(b *testing.B) {
	bin := testServer(b)
	dir := b.TempDir()
	f := filepath.Join(dir, "a.tst")
	cfg := &ServerConfig{Command: []string{bin}, Extensions: []string{".tst"}}
	m := NewManager(Options{})
	defer m.Close()
	var times []time.Duration
	for i := range b.N + 1 {
		os.WriteFile(f, []byte(strings.Repeat("ok\n", i%7)+"BROKEN\n"), 0o644)
		t0 := time.Now()
		ds, err := m.Diagnostics(context.Background(), request(dir, cfg, f), time.Now().Add(10*time.Second))
		times = append(times, time.Since(t0))
		if err != nil || len(ds) != 1 {
			b.Fatalf("%v %v", ds, err)
		}
	}
	first := times[0]
	times = times[1:]
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "ms-p90")
	b.ReportMetric(float64(first.Microseconds())/1000, "ms-first")
}

// One server failing leaves its files out, named in the error; the other server's report
// stands.
func TestPartialFailure(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tst"), filepath.Join(dir, "b.bad")
	os.WriteFile(a, []byte("BROKEN\n"), 0o644)
	os.WriteFile(b, []byte("BROKEN\n"), 0o644)
	m := NewManager(Options{Backoff: time.Hour})
	defer m.Close()
	r := Request{Paths: []string{a, b}, FolderOf: func(string) string { return dir }, Servers: map[string]*ServerConfig{
		"good": {Command: []string{testServer(t)}, Extensions: []string{".tst"}},
		"bad":  {Command: []string{"/nonexistent/pid-lsp"}, Extensions: []string{".bad"}},
	}}
	ds, err := m.Diagnostics(t.Context(), r, time.Now().Add(10*time.Second))
	var le *Error
	if !errors.As(err, &le) || len(le.Paths) != 1 || le.Paths[0] != b {
		t.Fatalf("err = %v, want an *Error naming %s", err, b)
	}
	if len(ds) != 1 || ds[0].Path != a {
		t.Errorf("diagnostics = %+v, want a.tst's", ds)
	}
}

// A server that writes garbage (a line outside any frame, a frame that is not JSON, one that
// is no JSON-RPC message) is answered for each and read on: its diagnostics after the garbage
// arrive, and the connection serves the next change too.
func TestGarbledFramesAreSkipped(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.tst")
	os.WriteFile(f, []byte("GARBAGE\nBROKEN\n"), 0o644)
	cfg := &ServerConfig{Command: []string{testServer(t)}, Extensions: []string{".tst"}}
	m := NewManager(Options{})
	defer m.Close()
	ds, err := m.Diagnostics(t.Context(), request(dir, cfg, f), time.Now().Add(10*time.Second))
	if err != nil || len(ds) != 1 || ds[0].Range.Start.Line != 1 || ds[0].Severity != 1 {
		t.Fatalf("diagnostics after the garbage = %+v, %v; want the BROKEN error on line 1", ds, err)
	}
	os.WriteFile(f, []byte("GARBAGE\nWARN\n"), 0o644)
	ds, err = m.Diagnostics(t.Context(), request(dir, cfg, f), time.Now().Add(10*time.Second))
	if err != nil || len(ds) != 1 || ds[0].Severity != 2 {
		t.Fatalf("diagnostics of the next change = %+v, %v; want the WARN warning", ds, err)
	}
	if st := m.Servers(); len(st) != 1 || st[0].State != StateReady || st[0].Restarts != 0 {
		t.Errorf("servers = %+v, want the one server ready, never restarted", st)
	}
}

// The server's requests are answered from pid's method table: workspace/configuration with
// one null per item, a method pid does not know with -32601.
func TestServerRequestsAnswered(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.tst")
	os.WriteFile(f, []byte("ok\n"), 0o644)
	cfg := &ServerConfig{Command: []string{testServer(t)}, Extensions: []string{".tst"}, Env: map[string]string{"PIDTESTLSP_ASK": "1"}}
	m := NewManager(Options{})
	defer m.Close()
	ds, err := m.Diagnostics(t.Context(), request(dir, cfg, f), time.Now().Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.Message)
	}
	want := []string{`answer "cfg": [null,null]`, `answer "odd": {"code":-32601,"message":"pid does not answer pidtest/unknown"}`}
	if !slices.Equal(got, want) {
		t.Errorf("the server saw %q, want %q", got, want)
	}
}
