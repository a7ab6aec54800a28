package toolexec_test

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/toolexec"
)

// A tool is shown as its View says, with the call's arguments and details; one without a
// View by its name, of kind other.
func TestViewOf(t *testing.T) {
	plain := toolexec.Tool{Name: "deploy"}
	if v := plain.ViewOf(json.RawMessage(`{}`), nil); v.Kind != toolexec.KindOther || v.Title != "deploy" || v.Locations != nil || v.Changes != nil {
		t.Errorf("a tool without a view: %+v", v)
	}
	var gotArgs json.RawMessage
	var gotDetails any
	viewed := toolexec.Tool{Name: "x", View: func(args json.RawMessage, details any) toolexec.View {
		gotArgs, gotDetails = args, details
		return toolexec.View{Kind: toolexec.KindRead, Title: "Read it"}
	}}
	if v := viewed.ViewOf(json.RawMessage(`{"a":1}`), 42); v.Title != "Read it" || string(gotArgs) != `{"a":1}` || gotDetails != 42 {
		t.Errorf("a tool with a view: %+v, saw %s and %v", v, gotArgs, gotDetails)
	}
}
