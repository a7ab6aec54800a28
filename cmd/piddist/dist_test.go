package main

// make dist, run as a person runs it (make, from the repository's root) into a folder of
// the test's: six archives named as the release names them, each holding the binary for
// its platform (checked from the executable's own header), LICENSE and README.md;
// SHA256SUMS lists each archive's hash; the binary for this machine prints its version
// line with the commit put in.

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const testVersion = "0.0.0-test.1"

func TestMakeDist(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "dist", "VERSION="+testVersion, "DIST="+out)
	cmd.Dir = root
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make dist: %v\n%s", err, log)
	}
	t.Logf("make dist:\n%s", log)

	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not HASH  NAME", line)
		}
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", name, got, sum)
		}
		names = append(names, name)
	}
	var want []string
	for _, tg := range strings.Fields(DefaultTargets) {
		goos, goarch, _ := strings.Cut(tg, "/")
		want = append(want, target{goos, goarch}.archive(testVersion))
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("SHA256SUMS lists %q, want %q", names, want)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != len(want)+1 {
		t.Errorf("%s holds %d files, want the %d archives and SHA256SUMS", out, len(entries), len(want))
	}

	license, _ := os.ReadFile(filepath.Join(root, "LICENSE"))
	readme, _ := os.ReadFile(filepath.Join(root, "README.md"))
	if !bytes.Contains(license, []byte("MIT License")) {
		t.Errorf("LICENSE is not MIT's: %.60q", license)
	}
	for _, tg := range strings.Fields(DefaultTargets) {
		goos, goarch, _ := strings.Cut(tg, "/")
		tgt := target{goos, goarch}
		members := readArchive(t, filepath.Join(out, tgt.archive(testVersion)))
		var got []string
		for _, m := range members {
			got = append(got, fmt.Sprintf("%s %v", m.name, m.mode))
		}
		wantMembers := []string{tgt.binary() + " -rwxr-xr-x", "LICENSE -rw-r--r--", "README.md -rw-r--r--"}
		if !slices.Equal(got, wantMembers) {
			t.Errorf("%s holds %q, want %q", tgt.archive(testVersion), got, wantMembers)
			continue
		}
		if !bytes.Equal(members[1].data, license) || !bytes.Equal(members[2].data, readme) {
			t.Errorf("%s: LICENSE or README.md differ from the repository's", tgt.archive(testVersion))
		}
		if got := executableFor(t, members[0].data); got != tg {
			t.Errorf("%s: the binary is for %s, want %s", tgt.archive(testVersion), got, tg)
		}
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			bin := filepath.Join(t.TempDir(), "pid")
			if err := os.WriteFile(bin, members[0].data, 0o755); err != nil {
				t.Fatal(err)
			}
			v, err := exec.Command(bin, "--version").Output()
			wantV := fmt.Sprintf("pid %s (%s, %s, %s)\n", testVersion, commitOf(t, root), runtime.Version(), tg)
			if err != nil || string(v) != wantV {
				t.Errorf("%s --version = %q, %v; want %q", tg, v, err, wantV)
			}
		}
	}
}

// member is a file read back from an archive.
type readMember struct {
	name string
	mode os.FileMode
	data []byte
}

// readArchive lists a .tar.gz's or a .zip's members in their order, with their content.
func readArchive(t *testing.T, path string) []readMember {
	t.Helper()
	var out []readMember
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, readMember{f.Name, f.Mode(), data})
		}
		return out
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Typeflag != tar.TypeReg {
			t.Errorf("%s: %s is type %c owned by %d:%d, want a file owned by 0:0", path, h.Name, h.Typeflag, h.Uid, h.Gid)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, readMember{h.Name, h.FileInfo().Mode(), data})
	}
}

// executableFor returns the GOOS/GOARCH an executable's header says it is for.
func executableFor(t *testing.T, data []byte) string {
	t.Helper()
	r := bytes.NewReader(data)
	if f, err := elf.NewFile(r); err == nil {
		switch f.Machine {
		case elf.EM_X86_64:
			return "linux/amd64"
		case elf.EM_AARCH64:
			return "linux/arm64"
		}
		return "linux/" + f.Machine.String()
	}
	if f, err := macho.NewFile(r); err == nil {
		switch f.Cpu {
		case macho.CpuAmd64:
			return "darwin/amd64"
		case macho.CpuArm64:
			return "darwin/arm64"
		}
		return "darwin/" + f.Cpu.String()
	}
	if f, err := pe.NewFile(r); err == nil {
		switch f.Machine {
		case pe.IMAGE_FILE_MACHINE_AMD64:
			return "windows/amd64"
		case pe.IMAGE_FILE_MACHINE_ARM64:
			return "windows/arm64"
		}
		return fmt.Sprintf("windows/%#x", f.Machine)
	}
	return "not an executable"
}

// commitOf is the commit make dist puts in: the checkout's, "-dirty" with changed tracked files.
func commitOf(t *testing.T, root string) string {
	t.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	c := git("rev-parse", "--short=12", "HEAD")
	if git("status", "--porcelain", "--untracked-files=no") != "" {
		c += "-dirty"
	}
	return c
}
