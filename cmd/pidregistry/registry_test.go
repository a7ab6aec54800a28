// Tests of pidregistry: write makes an entry from a dist folder that check passes, with the
// real pid as the auth check's binary; each way an entry can break the registry's rules
// (a missing OS, a version that is not the entry's, a wrong sha256, a colored icon, a binary
// that offers no auth method) makes check fail, and scripts/registry-check says so too. The
// broken entries carry a stand-in binary (a shell script answering initialize), so that
// each fails for its one fault only.

package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

const testVersion = "1.2.3"

var (
	pidBin   string // the real pid, built once by TestMain
	buildErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pidregistry-test-")
	if err != nil {
		panic(err)
	}
	pidBin = filepath.Join(dir, "pid")
	if out, err := exec.Command("go", "build", "-o", pidBin, "github.com/pid-agent/pid/cmd/pid").CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("go build pid: %v\n%s", err, out)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// makeDist writes a dist folder as make dist does: an archive per platform (this machine's
// holding bin as its pid, the others a stand-in) and SHA256SUMS.
func makeDist(t *testing.T, bin []byte) string {
	t.Helper()
	return makeDistIn(t, t.TempDir(), bin)
}

var (
	realDistOnce sync.Once
	realDist     string
)

// pidDist is a dist folder whose archive for this machine holds the real pid, made once and
// shared (read-only) by the tests: each writes its entry elsewhere.
func pidDist(t *testing.T) string {
	t.Helper()
	pid := realPid(t)
	realDistOnce.Do(func() {
		realDist = makeDistIn(t, filepath.Join(filepath.Dir(pidBin), "dist"), pid)
	})
	return realDist
}

func makeDistIn(t *testing.T, dist string, bin []byte) string {
	t.Helper()
	if err := os.MkdirAll(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, p := range platforms {
		data := []byte("not this machine's binary")
		if p.goos == runtime.GOOS && p.goarch == runtime.GOARCH {
			data = bin
		}
		var archive []byte
		if p.ext == ".zip" {
			var b bytes.Buffer
			zw := zip.NewWriter(&b)
			w, _ := zw.Create(p.binary)
			w.Write(data)
			zw.Close()
			archive = b.Bytes()
		} else {
			var b bytes.Buffer
			gz, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
			tw := tar.NewWriter(gz)
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p.binary, Mode: 0o755, Size: int64(len(data))})
			tw.Write(data)
			tw.Close()
			gz.Close()
			archive = b.Bytes()
		}
		name := p.archive(testVersion)
		if err := os.WriteFile(filepath.Join(dist, name), archive, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(archive)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+name)
	}
	sort.Strings(lines)
	os.WriteFile(filepath.Join(dist, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	return dist
}

func realPid(t *testing.T) []byte {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	b, err := os.ReadFile(pidBin)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteThenCheck(t *testing.T) {
	dist := pidDist(t)
	dir, err := write(testVersion, dist, DefaultReleaseURL, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		ID, Name, Version, Description, Repository, License string
		Distribution                                        struct{ Binary map[string]Target }
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "agent.json"))
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	if a.ID != "pid" || a.Version != testVersion || a.License != "MIT" || a.Repository != "https://github.com/pid-agent/pid" || a.Description == "" {
		t.Errorf("agent.json: %s", raw)
	}
	sums, _ := readSums(filepath.Join(dist, "SHA256SUMS"))
	for _, p := range platforms {
		tg, ok := a.Distribution.Binary[p.name]
		file := "pid-1.2.3-" + p.goos + "-" + p.goarch + p.ext
		want := Target{Archive: "https://github.com/pid-agent/pid/releases/download/v1.2.3/" + file, SHA256: sums[file], Cmd: "./" + p.binary, Args: []string{"--acp"}}
		if !ok || tg.Archive != want.Archive || tg.SHA256 != want.SHA256 || tg.Cmd != want.Cmd || strings.Join(tg.Args, " ") != "--acp" {
			t.Errorf("%s: %+v, want %+v", p.name, tg, want)
		}
	}
	if problems := check(dir, dist, testVersion); len(problems) != 0 {
		t.Errorf("the written entry fails the check:\n%s", strings.Join(problems, "\n"))
	}
	// scripts/registry-check runs the same check.
	out, err := exec.Command("../../scripts/registry-check", "-dist", dist, "-version", testVersion, dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok ") {
		t.Errorf("scripts/registry-check on a good entry: %v\n%s", err, out)
	}
}

// standIn answers initialize as pid does for the registry's validator, in a few bytes: the
// broken entries below are each wrong in one way only, and cost no 16 MB archive.
const standIn = "#!/bin/sh\nread line\necho '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1,\"authMethods\":[{\"id\":\"pid-login\",\"name\":\"Log in\",\"type\":\"terminal\",\"args\":[\"login\"]}]}}'\n"

func TestCheckFailsBrokenEntries(t *testing.T) {
	// The stand-in passes: what fails below is what each case broke.
	good := makeDist(t, []byte(standIn))
	gdir, _ := write(testVersion, good, DefaultReleaseURL, t.TempDir())
	if problems := check(gdir, good, testVersion); len(problems) != 0 {
		t.Fatalf("the stand-in's entry fails:\n%s", strings.Join(problems, "\n"))
	}
	for _, tc := range []struct {
		name string
		bin  []byte                 // this machine's binary (nil: the real pid)
		edit func(a map[string]any) // applied to agent.json
		icon string                 // replaces icon.svg when set
		want string                 // in one of the problems
	}{
		{name: "no windows build", edit: func(a map[string]any) {
			b := a["distribution"].(map[string]any)["binary"].(map[string]any)
			delete(b, "windows-x86_64")
			delete(b, "windows-aarch64")
		}, want: "no build for windows"},
		{name: "an archive of another version", edit: func(a map[string]any) {
			tg := a["distribution"].(map[string]any)["binary"].(map[string]any)["linux-aarch64"].(map[string]any)
			tg["archive"] = strings.Replace(tg["archive"].(string), "/v1.2.3/", "/v1.2.2/", 1)
		}, want: "of version 1.2.2, not 1.2.3"},
		{name: "latest", edit: func(a map[string]any) {
			tg := a["distribution"].(map[string]any)["binary"].(map[string]any)["darwin-x86_64"].(map[string]any)
			tg["archive"] = "https://github.com/pid-agent/pid/releases/latest/download/x.tar.gz"
		}, want: "/latest/"},
		{name: "a wrong sha256", edit: func(a map[string]any) {
			tg := a["distribution"].(map[string]any)["binary"].(map[string]any)["darwin-aarch64"].(map[string]any)
			tg["sha256"] = strings.Repeat("0", 64)
		}, want: "is not that of"},
		{name: "an unknown platform", edit: func(a map[string]any) {
			a["distribution"].(map[string]any)["binary"].(map[string]any)["linux-riscv64"] = map[string]any{"archive": "https://x/y", "cmd": "./pid"}
		}, want: `unknown platform "linux-riscv64"`},
		{name: "no cmd", edit: func(a map[string]any) {
			delete(a["distribution"].(map[string]any)["binary"].(map[string]any)["linux-x86_64"].(map[string]any), "cmd")
		}, want: "cmd (a string) is required"},
		{name: "a member the schema does not have", edit: func(a map[string]any) {
			a["distribution"].(map[string]any)["binary"].(map[string]any)["linux-x86_64"].(map[string]any)["checksum"] = "x"
		}, want: `unknown member "checksum"`},
		{name: "an id that is not the folder's", edit: func(a map[string]any) { a["id"] = "pid-agent" }, want: "must be the name of its folder"},
		{name: "no description", edit: func(a map[string]any) { delete(a, "description") }, want: "description is required"},
		{name: "a version that is not the release's", edit: func(a map[string]any) { a["version"] = "1.2.4" }, want: `want exactly "1.2.3"`},
		{name: "a colored icon", icon: `<svg width="16" height="16"><path fill="#ff0000" d="M0 0h16v16z"/></svg>`, want: "fixed color"},
		{name: "a large icon", icon: `<svg width="32" height="32"><path fill="currentColor" d="M0 0h16v16z"/></svg>`, want: "must be 16x16"},
		{name: "a binary that offers no auth method", bin: []byte("#!/bin/sh\nread line\necho '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1,\"authMethods\":[]}}'\n"),
			want: "no authMethods"},
		{name: "a binary that offers another type", bin: []byte("#!/bin/sh\nread line\necho '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1,\"authMethods\":[{\"id\":\"k\",\"name\":\"Key\",\"type\":\"env_var\"}]}}'\n"),
			want: "no auth method of type agent or terminal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := tc.bin
			if bin == nil {
				bin = []byte(standIn)
			}
			dist := makeDist(t, bin)
			dir, err := write(testVersion, dist, DefaultReleaseURL, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				file := filepath.Join(dir, "agent.json")
				raw, _ := os.ReadFile(file)
				var a map[string]any
				json.Unmarshal(raw, &a)
				tc.edit(a)
				raw, _ = json.Marshal(a)
				os.WriteFile(file, raw, 0o644)
			}
			if tc.icon != "" {
				os.WriteFile(filepath.Join(dir, "icon.svg"), []byte(tc.icon), 0o644)
			}
			problems := check(dir, dist, testVersion)
			found := false
			for _, p := range problems {
				found = found || strings.Contains(p, tc.want)
			}
			if !found {
				t.Errorf("want a problem containing %q, got:\n%s", tc.want, strings.Join(problems, "\n"))
			}
		})
	}
	// scripts/registry-check exits 1 on a broken entry.
	dist := good
	dir, _ := write(testVersion, dist, DefaultReleaseURL, t.TempDir())
	os.WriteFile(filepath.Join(dir, "icon.svg"), []byte(`<svg width="16" height="16"><path fill="red"/></svg>`), 0o644)
	cmd := exec.Command("../../scripts/registry-check", "-dist", dist, dir)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "FAIL icon.svg") {
		t.Errorf("scripts/registry-check on a broken icon: %v\n%s", err, out)
	}
}
