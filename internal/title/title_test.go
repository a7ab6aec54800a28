package title

import "testing"

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"  go test ./...  ", 80, "go test ./..."},
		{"first\nsecond", 80, "first…"},
		{"abcdef", 3, "abc…"},
		{"ab c", 3, "ab…"},
		{"日本語テキスト", 3, "日本語…"},
		{"", 5, ""},
	} {
		if got := Line(tc.in, tc.max); got != tc.want {
			t.Errorf("Line(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestCode(t *testing.T) {
	if got := Code("ls -l"); got != "`ls -l`" {
		t.Errorf("Code = %q", got)
	}
	if got := Code("echo `date`"); got != "`` echo `date` ``" {
		t.Errorf("Code with a backtick = %q", got)
	}
	if Or("", "a file") != "a file" || Or("x", "a file") != "x" {
		t.Error("Or")
	}
}
