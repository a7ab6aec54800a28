package loop

// sameMessage without unsafe (issue 33 item 5): Details of every kind a tool gives (maps,
// pointers, structs, values Go cannot compare) compare without a panic, by value where Go
// can compare them and by identity where it cannot.

import (
	"testing"

	"github.com/pid-agent/pid/llm"
)

func TestSameDetails(t *testing.T) {
	m := map[string]any{"n": 1}
	other := map[string]any{"n": 1}
	s := []int{1, 2}
	type withSlice struct{ S []int }
	type withAny struct{ V any }
	p := &struct{ N int }{1}
	cases := []struct {
		name string
		a, b any
		want bool
	}{
		{"both nil", nil, nil, true},
		{"nil and a value", nil, 1, false},
		{"the same map", m, m, true},
		{"equal maps, two of them", m, other, false},
		{"the same slice", s, s, true},
		{"a shorter view of it", s, s[:1], false},
		{"the same pointer", p, p, true},
		{"another pointer", p, &struct{ N int }{1}, false},
		{"equal structs", struct{ N int }{1}, struct{ N int }{1}, true},
		{"different types", 1, int64(1), false},
		{"a struct holding a slice", withSlice{s}, withSlice{s}, false},
		{"a struct holding a map in an interface", withAny{m}, withAny{m}, false},
		{"a struct holding a number in an interface", withAny{1}, withAny{1}, true},
	}
	for _, c := range cases {
		if got := sameDetails(c.a, c.b); got != c.want {
			t.Errorf("%s: sameDetails = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSameMessage(t *testing.T) {
	content := []llm.Content{llm.Text("x")}
	a := llm.Message{Role: llm.RoleToolResult, Content: content, Details: map[string]any{"k": "v"}, ToolCallID: "c"}
	b := a
	if !sameMessage(&a, &b) {
		t.Error("a copy is not the same message")
	}
	b.Details = map[string]any{"k": "v"}
	if sameMessage(&a, &b) {
		t.Error("another map of Details is the same message")
	}
	b = a
	b.Content = []llm.Content{llm.Text("x")}
	if sameMessage(&a, &b) {
		t.Error("equal content in another array is the same message")
	}
	b = a
	b.Timestamp = 1
	if sameMessage(&a, &b) {
		t.Error("another timestamp is the same message")
	}
}
