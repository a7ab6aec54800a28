package tools_test

// Benchmarks of grep and find over Go's own source tree (present wherever Go is), for
// profiling the search path: go test -run X -bench GoTree -cpuprofile cpu.out ./tools/.
// The end-to-end comparison with ripgrep and fd is cmd/searchbench's.

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/pid-agent/pid/tools"
)

// goTree returns a workspace on $(go env GOROOT)/src.
func goTree(b *testing.B) *tools.Workspace {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatalf("go env GOROOT: %v", err)
	}
	ws, err := tools.NewWorkspace(strings.TrimSpace(string(out))+"/src", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	return ws
}

func BenchmarkGoTree(b *testing.B) {
	ws := goTree(b)
	for _, c := range []struct{ name, tool, args string }{
		{"GrepLiteral", tools.NameGrep, `{"pattern":"func NewReader\\(","limit":1000}`},
		{"GrepRegex", tools.NameGrep, `{"pattern":"func \\(\\w+ \\*?Reader\\) Read\\w*\\(","limit":1000}`},
		{"GrepNoMatch", tools.NameGrep, `{"pattern":"zqxjkvw_nomatch"}`},
		{"GrepIgnoreCase", tools.NameGrep, `{"pattern":"func newreader\\(","ignoreCase":true,"limit":1000}`},
		{"Find", tools.NameFind, `{"pattern":"**/*_linux.go","limit":10000}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			tool := benchTool(b, ws, c.tool)
			for b.Loop() {
				if r := runTool(b, tool, c.args); len(r.Content) == 0 {
					b.Fatal("no content")
				}
			}
		})
	}
}
