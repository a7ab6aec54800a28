package llm_test

// Every field of a message and of its blocks survives AppendJSON and UnmarshalJSON (issue
// 33): internal/codectest fills each one, and fails for a field nobody listed.

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/internal/codectest"
	"github.com/pid-agent/pid/llm"
)

func TestCodecKeepsEveryField(t *testing.T) {
	codectest.CheckFieldsListed(t)
	for _, m := range codectest.Full() {
		b, err := m.AppendJSON(nil)
		if err != nil {
			t.Fatalf("%s: %v", m.Role, err)
		}
		var back llm.Message
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v\n%s", m.Role, err, b)
		}
		if d := cmp.Diff(m, back); d != "" {
			t.Errorf("a %s message loses fields through AppendJSON and UnmarshalJSON (-sent +read):\n%s\nJSON: %s", m.Role, d, b)
		}
	}
}
