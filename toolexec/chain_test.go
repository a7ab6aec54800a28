package toolexec_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

const ghp = "ghp_A1b2A1b2A1b2A1b2A1b2A1b2A1b2A1b2A1b2"

// R11: ChainAfter runs the hooks in order, each seeing the result the ones before it left,
// and returns one override with every field any of them set (a later one winning).
func TestChainAfter(t *testing.T) {
	var order []string
	mk := func(name string, o *toolexec.Override, err error) toolexec.AfterHook {
		return func(_ context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
			order = append(order, fmt.Sprintf("%s:%v:%s", name, in.IsError, in.Result.Content[0].Text))
			return o, err
		}
	}
	yes, no := true, false
	editor := mk("editor", &toolexec.Override{Content: []llm.Content{llm.Text("from editor " + ghp)}, IsError: &yes}, nil)
	redact := func(_ context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
		order = append(order, "redact")
		return &toolexec.Override{Content: []llm.Content{llm.Text(strings.ReplaceAll(in.Result.Content[0].Text, ghp, "[REDACTED]"))}}, nil
	}
	keep := mk("keep", nil, nil)
	term := mk("term", &toolexec.Override{Terminate: &no, Details: "d"}, nil)
	h := toolexec.ChainAfter(nil, editor, redact, keep, term)
	in := toolexec.AfterInput{Call: llm.ToolCall{ID: "c"}, Result: toolexec.TextResult("orig")}
	o, err := h(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, ",") != "editor:false:orig,redact,keep:true:from editor [REDACTED],term:true:from editor [REDACTED]" {
		t.Fatalf("each hook must see the result the previous ones left: %v", order)
	}
	if o == nil || o.Content[0].Text != "from editor [REDACTED]" || o.IsError == nil || !*o.IsError || o.Terminate == nil || *o.Terminate || o.Details != "d" {
		t.Fatalf("merged override: %+v", o)
	}
	if in.Result.Content[0].Text != "orig" {
		t.Fatal("Chain modified its input")
	}

	// All nil: nil override. A failing hook stops the chain.
	order = nil
	if o, err := toolexec.ChainAfter(keep, keep)(context.Background(), in); o != nil || err != nil {
		t.Fatal(o, err)
	}
	boom := errors.New("boom")
	order = nil
	if _, err := toolexec.ChainAfter(keep, mk("fail", nil, boom), keep)(context.Background(), in); !errors.Is(err, boom) || len(order) != 2 {
		t.Fatalf("err %v, order %v", err, order)
	}
	if toolexec.ChainAfter(nil, nil) != nil {
		t.Fatal("a chain of nothing must be nil (toolexec then costs nothing)")
	}
}
