package tools_test

// Shared test helpers: a workspace fixture on real files in t.TempDir(), a way to run one
// tool call through the real pipeline (toolexec.Run: prepareArguments, schema, Execute), and
// a bounded wait for conditions that other goroutines make true.

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newWorkspace makes a workspace whose cwd and only root is a fresh folder holding files
// (path -> content, slash-separated). It is closed when the test ends.
func newWorkspace(t *testing.T, files map[string]string) (*tools.Workspace, string) {
	t.Helper()
	dir := testfs.RealTemp(t)
	testfs.WriteFiles(t, dir, files)
	ws, err := tools.NewWorkspace(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, dir
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// result is one finished call as the model and the editor see it.
type result struct {
	text    string // the text blocks, joined
	content []llm.Content
	details any
	isError bool
}

// call runs one call of the tool named name with the JSON arguments args through
// toolexec.Run, as the agent loop would.
func call(t *testing.T, ws *tools.Workspace, name, args string) result {
	t.Helper()
	out := runBatch(t, ws, nil, llm.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
	return out[0]
}

// runBatch runs the calls as one parallel batch of the built-in tools, or of the given
// tools when set is not nil.
func runBatch(t *testing.T, ws *tools.Workspace, toolset []toolexec.Tool, calls ...llm.ToolCall) []result {
	t.Helper()
	if toolset == nil {
		toolset = tools.New(ws)
	}
	return runIn(activeSet(t, toolset), calls...)
}

// activeSet builds the toolbox of toolset and activates every tool in it.
func activeSet(t *testing.T, toolset []toolexec.Tool) *toolexec.ActiveSet {
	t.Helper()
	tb, err := toolexec.NewToolbox(toolset...)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := tb.Activate(tb.Names()...)
	return set
}

// newCaller returns a call function for ws whose toolbox is built once, for tests that make
// thousands of calls (building a toolbox compiles every schema). It is safe for concurrent
// use.
func newCaller(t *testing.T, ws *tools.Workspace) func(name, args string) result {
	t.Helper()
	set := activeSet(t, tools.New(ws))
	return func(name, args string) result {
		return runIn(set, llm.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)})[0]
	}
}

// runIn runs the calls as one parallel batch of the tools in set.
func runIn(set *toolexec.ActiveSet, calls ...llm.ToolCall) []result {
	oc := toolexec.Run(context.Background(), nil, toolexec.Batch{Calls: calls, Tools: set})
	var out []result
	for _, m := range oc.Messages {
		r := result{content: m.Content, details: m.Details, isError: m.IsError}
		var texts []string
		for _, c := range m.Content {
			if c.Type == llm.ContentText {
				texts = append(texts, c.Text)
			}
		}
		r.text = strings.Join(texts, "\n")
		out = append(out, r)
	}
	return out
}

// mustOK fails the test when r is an error result, and returns its text.
func mustOK(t *testing.T, r result) string {
	t.Helper()
	if r.isError {
		t.Fatalf("unexpected error result: %s", r.text)
	}
	return r.text
}

// mustFail fails the test unless r is an error result whose text holds every want.
func mustFail(t *testing.T, r result, want ...string) {
	t.Helper()
	if !r.isError {
		t.Fatalf("want an error result, got: %s", r.text)
	}
	for _, w := range want {
		if !strings.Contains(r.text, w) {
			t.Errorf("error result lacks %q:\n%s", w, r.text)
		}
	}
}

// jsonArgs marshals v as a call's arguments.
func jsonArgs(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
