package elide

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestShortArgsGoAsTheyAre(t *testing.T) {
	raw := json.RawMessage(`{"path":"a.go","content":"` + strings.Repeat("x", MaxArgs-40) + `"}`)
	if got := Args(raw); string(got) != string(raw) {
		t.Errorf("arguments of %d bytes were changed", len(raw))
	}
}

func TestLongArgsKeepTheShortMembersAndSaySo(t *testing.T) {
	big := `{"a":[` + strings.Repeat(`{"s":"}]\"{["},`, MaxArgs/10) + `1]}`
	raw := json.RawMessage(`{"path":"dir/a \"b\".go", "content":` + big + `,"n":3,"list":[1,2],"w":"` + strings.Repeat("é", 600) + `"}`)
	got := Args(raw)
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("elided arguments are not JSON: %v\n%.300s", err, got)
	}
	if len(got) > keepTotal+2<<10 {
		t.Errorf("elided arguments are %d bytes", len(got))
	}
	want := fmt.Sprintf(`map[$elided:map[bytes:%d omitted:[content w]] list:[1 2] n:3 path:dir/a "b".go]`, len(raw))
	if fmt.Sprint(v) != want {
		t.Errorf("elided = %v\nwant      %s", v, want)
	}
}

func TestManyLongMembersAreCounted(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 30 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":"%s"`, i, strings.Repeat("v", 3000))
	}
	b.WriteString("}")
	var v struct {
		E struct {
			Omitted []string
			More    int
		} `json:"$elided"`
	}
	if err := json.Unmarshal(Args(json.RawMessage(b.String())), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.E.Omitted) != maxNamed || v.E.Omitted[0] != "k0" || v.E.More != 30-maxNamed {
		t.Errorf("omitted %v, more %d; want the first %d named and %d more", v.E.Omitted, v.E.More, maxNamed, 30-maxNamed)
	}
}

func TestLongNonObjectsBecomeTheMarkerAlone(t *testing.T) {
	for _, raw := range []string{
		"[" + strings.Repeat("1,", MaxArgs) + "1]",
		`{"a":` + strings.Repeat("[", MaxArgs+1), // cut short: not JSON
	} {
		want := fmt.Sprintf(`{"$elided":{"bytes":%d}}`, len(raw))
		if got := string(Args(json.RawMessage(raw))); got != want {
			t.Errorf("Args(%.20s...) = %s, want %s", raw, got, want)
		}
	}
}

// Whatever JSON a model writes, the elided form is JSON that keeps only members of the
// original and says how long it was.
func FuzzElidedIsJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":"}\"{","b":[1,{"c":"]"}],"d":null}`, `[1,2]`, `"x"`, ` { "a" : true , "b" : -1.5e3 } `, `{"\u00e9\"":{"x":[]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		out := over(json.RawMessage(raw), 0)
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("elided %q = %s: not a JSON object: %v", raw, out, err)
		}
		var e struct {
			Bytes int `json:"bytes"`
		}
		if err := json.Unmarshal(got[Key], &e); err != nil || e.Bytes != len(raw) {
			t.Fatalf("elided %q = %s: %s does not say %d bytes", raw, out, Key, len(raw))
		}
		var orig map[string]json.RawMessage
		if json.Unmarshal([]byte(raw), &orig) != nil {
			if len(got) != 1 {
				t.Fatalf("elided non-object %q = %s, want the marker alone", raw, out)
			}
			return
		}
		for k, v := range got {
			if k == Key {
				continue
			}
			if o, ok := orig[k]; !ok || string(o) != string(v) {
				t.Fatalf("elided %q = %s: member %q is not the original's", raw, out, k)
			}
		}
	})
}
