package toolexec

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/event"
)

// Sessions share compiled schemas: a second toolbox with the same tool compiles nothing.
func TestToolboxesShareCompiledSchemas(t *testing.T) {
	tool := Tool{Name: "cached_tool", Parameters: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`),
		Execute: func(context.Context, Call, func(event.Result)) (Result, error) { return Result{}, nil }}
	a, err := NewToolbox(tool)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewToolbox(tool)
	if err != nil {
		t.Fatal(err)
	}
	if a.byName["cached_tool"].schema != b.byName["cached_tool"].schema {
		t.Error("two toolboxes compiled the same schema twice")
	}
	other := tool
	other.Parameters = json.RawMessage(`{"type":"object","properties":{"p":{"type":"integer"}}}`)
	c, err := NewToolbox(other)
	if err != nil {
		t.Fatal(err)
	}
	if c.byName["cached_tool"].schema == a.byName["cached_tool"].schema {
		t.Error("different parameters share a schema")
	}
}
