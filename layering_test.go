// Package pid_test keeps the shape of the module true (house style 1, issue 33): the layers
// point one way and the two faces stand on the session layer alone. The check reads the code
// as the toolchain sees it (go list), so that what it guards cannot drift from what is built.
package pid_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the module's path: its packages are "pid's".
const module = "github.com/pid-agent/pid"

// faceAllowed are the packages of pid's a face (rpc, acp, and any package under them) may
// import, each with why. Everything else a face needs, package session hands out as its own
// names: a face that reaches past it is coupled to how the core is built.
var faceAllowed = map[string]string{
	"session":           "the core the faces stand on: sessions, what they share, and the names of what they hand out",
	"event":             "the closed set of events a run emits, which each face renders on its wire",
	"llm":               "messages and content blocks, which both wires carry as they are",
	"internal/rpcconn":  "the one JSON-RPC connection core both faces run on (house style 3)",
	"internal/rpcwire":  "the JSON scanner and id keys of that core, which each face's framing uses",
	"internal/lspframe": "the LSP framing of that core (the native face's, and the language servers')",
	"internal/elide":    "the elision of long tool arguments a face shows a person",
	"internal/title":    "the short lines (one line, cut; Markdown code) a face writes for a person",
	"internal/leangc":   "the lower GC target a face holds while it encodes a big session",
}

// lowerAllowed are, for the packages at the bottom of the stack, the packages of pid's they
// may depend on at all (transitively), each with why: loop and toolexec know no wire, no
// files of their own and no servers (house style 1); the search engine, the workspace's
// confinement and stale-edit guard, the launcher of commands in the sandbox, and the
// checkpoints, which the tools and the session stand on, know neither the tools nor the
// session (issue 33).
var lowerAllowed = map[string]map[string]string{
	"search": {
		"internal/rootfile": "a file opened through its folder's os.Root without blocking, regular files only",
		"internal/safefile": "git's configuration and global excludes file, read so that they cannot hang a walk",
		"internal/textcut":  "a matching line cut without splitting a rune, as the read tool cuts its lines",
	},
	"workspace": {
		"search":            "search.ErrOutside, so that a refusal reads the same from the walk, and the Fence it is",
		"internal/rootfile": "through search",
		"internal/safefile": "through search",
		"internal/textcut":  "through search",
		"internal/watch":    "the process's one file watcher, which the stale-edit guard subscribes to",
	},
	"workspace/launch": {
		"workspace":          "the session's cwd and folders, which commands run in and a workspace-write sandbox lets them write",
		"sandbox":            "the kernel sandbox it starts commands in (holders, helpers, policies, the protected paths' guard)",
		"netproxy":           "the allowlist network's proxy, served on the holder's loopback",
		"protected":          "the protected paths, named in the note after a refusal",
		"internal/procgroup": "a command's process group, which dies with pid",
		"internal/xdg":       "pid's configuration and state folders, which the policy hides, and the terminals' folder",
		"search":             "through workspace",
		"internal/rootfile":  "through workspace",
		"internal/safefile":  "through workspace",
		"internal/textcut":   "through workspace",
		"internal/watch":     "through workspace",
	},
	"checkpoint": {
		"search":            "the workspace's walk (search.Scan) and its folders' roots (search.Fence)",
		"internal/rootfile": "through search",
		"internal/safefile": "a workspace file opened without following a link swapped in",
		"internal/udiff":    "the unified diff a rewind's preview shows",
		"internal/textcut":  "through search",
	},
	// problems is the shape of a problem the file tools, the language-server client and the
	// editor's diagnostics share (issue 33: tools imported lsp for it): a leaf.
	"problems": {},
	"loop": {
		"toolexec": "the pipeline loop runs each batch through, one layer down",
		"event":    "the events a run emits",
		"llm":      "the messages, requests and providers' interface a turn is made of",
	},
	"toolexec": {
		"event": "the events a batch emits, and the tool results' shape",
		"llm":   "the tool calls and result messages a batch reads and makes",
	},
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

// list runs go list -json on patterns (with overlay, the path of an -overlay file, when not
// ""), in the module's folder.
func list(t *testing.T, overlay string, patterns ...string) []pkg {
	t.Helper()
	args := []string{"list", "-e", "-json=ImportPath,Imports,Deps,Error"}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	cmd := exec.Command("go", append(args, patterns...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list's output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// own returns the path of one of pid's packages relative to the module ("session"), and
// whether it is pid's.
func own(path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// layering returns every import that breaks the layers, as "importer -> imported (why)".
func layering(t *testing.T, overlay string) []string {
	var bad []string
	for _, p := range list(t, overlay, "./rpc/...", "./acp/...") {
		for _, imp := range p.Imports {
			rel, ok := own(imp)
			if !ok || strings.HasPrefix(imp, p.ImportPath+"/") {
				continue // not pid's, or the face's own subpackage
			}
			if why := faceAllowed[rel]; why == "" {
				bad = append(bad, fmt.Sprintf("%s -> %s (a face imports session, event, llm and the internal wire helpers only)", p.ImportPath, rel))
			}
		}
	}
	for _, low := range slices.Sorted(maps.Keys(lowerAllowed)) {
		for _, p := range list(t, overlay, "./"+low) {
			for _, dep := range p.Deps {
				rel, ok := own(dep)
				if !ok {
					continue
				}
				if _, allowed := lowerAllowed[low][rel]; !allowed {
					bad = append(bad, fmt.Sprintf("%s -> %s (%s depends on %s only)", low, rel, low, keys(lowerAllowed[low])))
				}
			}
		}
	}
	return bad
}

func keys(m map[string]string) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// The faces import the session layer and the wire helpers only, and loop, toolexec, search,
// workspace, the launcher and checkpoint nothing of pid's but what is below them.
func TestLayering(t *testing.T) {
	for _, b := range layering(t, "") {
		t.Error(b)
	}
}

// The check finds a forbidden import when one is planted: a file added (through go list's
// overlay, so the tree is not touched) to rpc importing store, to acp importing mcp, to loop
// importing redact, to checkpoint importing tools, and to the launcher importing toolexec
// (the tool contract, which it knows nothing of: it starts commands).
func TestLayeringCatchesAPlantedImport(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	replace := map[string]string{}
	for _, plant := range []struct{ pkg, name, imp string }{
		{"rpc", "rpc", "store"},
		{"acp", "acp", "mcp"},
		{"loop", "loop", "redact"},
		{"checkpoint", "checkpoint", "tools"},
		{"workspace/launch", "launch", "toolexec"},
	} {
		src := filepath.Join(dir, strings.ReplaceAll(plant.pkg, "/", "_")+".go")
		text := fmt.Sprintf("package %s\n\nimport _ %q\n", plant.name, module+"/"+plant.imp)
		if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(wd, plant.pkg, "zz_planted_layering.go")] = src
	}
	b, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlay, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(layering(t, overlay), "\n")
	for _, want := range []string{module + "/rpc -> store", module + "/acp -> mcp", "loop -> redact", "checkpoint -> tools", "workspace/launch -> toolexec"} {
		if !strings.Contains(got, want) {
			t.Errorf("the planted import %s was not reported; the check said:\n%s", want, got)
		}
	}
}
