package settings

import (
	"strings"
	"testing"
)

// "acp": {"terminals": false} turns the client's terminals off; a misspelt key or a wrong
// type is refused with the shape it must have.
func TestParseACP(t *testing.T) {
	for _, tc := range []struct {
		in   string
		off  bool
		fail bool
	}{
		{`{}`, false, false},
		{`{"acp": null}`, false, false},
		{`{"acp": {}}`, false, false},
		{`{"acp": {"terminals": true}}`, false, false},
		{`{"acp": {"terminals": false}}`, true, false},
		{`{"acp": {"terminal": false}}`, false, true},
		{`{"acp": {"terminals": "no"}}`, false, true},
		{`{"acp": false}`, false, true},
	} {
		f, err := Parse([]byte(tc.in))
		if tc.fail {
			if err == nil || !strings.Contains(err.Error(), `acp must be an object {"terminals"?: true|false}`) {
				t.Errorf("%s: err %v", tc.in, err)
			}
			continue
		}
		if err != nil || f.ACP.NoTerminals != tc.off {
			t.Errorf("%s: %+v, %v; want terminals off %v", tc.in, f, err, tc.off)
		}
	}
}
