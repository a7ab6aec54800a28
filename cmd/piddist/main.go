// Command piddist builds pid's release archives; `make dist VERSION=x.y.z` runs it (see
// docs/releases.md):
//
//	go run ./cmd/piddist -version 1.2.3 [-commit C] [-out dist] [-targets "linux/amd64 ..."] [-go go]
//
// For each target it runs, from the repository's root,
//
//	CGO_ENABLED=0 GOOS=OS GOARCH=ARCH go build -trimpath -buildvcs=false \
//		-ldflags "-s -w -X main.version=VERSION -X main.commit=COMMIT" -o TMP/pid ./cmd/pid
//
// and writes OUT/pid-VERSION-OS-ARCH.tar.gz (.zip for windows) holding pid (pid.exe on
// Windows), LICENSE and README.md, then OUT/SHA256SUMS, one "HASH  NAME" line per archive
// (what `sha256sum -c` reads). It needs the Go toolchain only (no tar, zip or sha256sum),
// and Go's build cache makes a second run cost the links alone. The archives are
// reproducible: the same members in the same order, owned by 0:0, dated the commit's time
// (SOURCE_DATE_EPOCH when set). The commit is the checkout's (git rev-parse, "-dirty" when
// tracked files changed) unless -commit gives one; "unknown" without git.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultTargets are the release platforms, as GOOS/GOARCH.
const DefaultTargets = "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"

// versionRE is what VERSION may be: x.y.z with an optional pre-release and build part, no "v".
var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "the release's version, x.y.z (required)")
	flag.StringVar(&o.commit, "commit", "", "the commit put in the binaries (default: the checkout's)")
	flag.StringVar(&o.out, "out", "dist", "the folder the archives and SHA256SUMS go to")
	flag.StringVar(&o.targets, "targets", DefaultTargets, "the GOOS/GOARCH pairs to build, space-separated")
	flag.StringVar(&o.goCmd, "go", "go", "the go command")
	flag.Parse()
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "piddist:", err)
		os.Exit(1)
	}
}

type options struct {
	version, commit, out, targets, goCmd string
}

// target is one platform.
type target struct{ goos, goarch string }

func (t target) archive(version string) string {
	name := "pid-" + version + "-" + t.goos + "-" + t.goarch
	if t.goos == "windows" {
		return name + ".zip"
	}
	return name + ".tar.gz"
}

func (t target) binary() string {
	if t.goos == "windows" {
		return "pid.exe"
	}
	return "pid"
}

// member is one file of an archive.
type member struct {
	name string
	mode fs.FileMode
	data []byte
}

func run(o options, log io.Writer) error {
	if o.version == "" {
		return errors.New("no version: make dist VERSION=x.y.z")
	}
	if !versionRE.MatchString(o.version) {
		return fmt.Errorf("version %q is not x.y.z (digits, an optional -pre-release, no leading v)", o.version)
	}
	if _, err := os.Stat(filepath.Join("cmd", "pid", "main.go")); err != nil {
		return errors.New("run it from the repository's root (make dist does)")
	}
	targets, err := parseTargets(o.targets)
	if err != nil {
		return err
	}
	if o.commit == "" {
		o.commit = checkoutCommit()
	}
	mtime := sourceDate()
	var docs []member
	for _, name := range []string{"LICENSE", "README.md"} {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		docs = append(docs, member{name: name, mode: 0o644, data: data})
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "piddist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s", o.version, o.commit)
	sums := map[string]string{}
	start := time.Now()
	for _, t := range targets {
		bin := filepath.Join(tmp, t.goos+"-"+t.goarch, t.binary())
		args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/pid"}
		cmd := exec.Command(o.goCmd, args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("CGO_ENABLED=0 GOOS=%s GOARCH=%s %s %q: %v", t.goos, t.goarch, o.goCmd, args, err)
		}
		built := time.Since(t0)
		data, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		members := append([]member{{name: t.binary(), mode: 0o755, data: data}}, docs...)
		var archive []byte
		if t.goos == "windows" {
			archive, err = zipOf(members, mtime)
		} else {
			archive, err = tarGzOf(members, mtime)
		}
		if err != nil {
			return err
		}
		name := t.archive(o.version)
		if err := writeFile(filepath.Join(o.out, name), archive); err != nil {
			return err
		}
		sum := sha256.Sum256(archive)
		sums[name] = hex.EncodeToString(sum[:])
		fmt.Fprintf(log, "%-40s %6.1f MB  (binary %5.1f MB, built in %v)\n", filepath.Join(o.out, name),
			float64(len(archive))/1e6, float64(len(data))/1e6, built.Round(100*time.Millisecond))
	}
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	if err := writeFile(filepath.Join(o.out, "SHA256SUMS"), []byte(b.String())); err != nil {
		return err
	}
	fmt.Fprintf(log, "%-40s (pid %s, commit %s, %d archives in %v)\n", filepath.Join(o.out, "SHA256SUMS"),
		o.version, o.commit, len(names), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// parseTargets reads "os/arch os/arch ...".
func parseTargets(s string) ([]target, error) {
	var out []target
	for _, f := range strings.Fields(s) {
		goos, goarch, ok := strings.Cut(f, "/")
		if !ok || goos == "" || goarch == "" {
			return nil, fmt.Errorf("target %q is not GOOS/GOARCH", f)
		}
		out = append(out, target{goos, goarch})
	}
	if len(out) == 0 {
		return nil, errors.New("no targets")
	}
	return out, nil
}

// checkoutCommit returns the checkout's commit, 12 hex digits, with "-dirty" when tracked
// files differ from it; "unknown" when git cannot tell.
func checkoutCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "-dirty"
	}
	return c
}

// sourceDate is the time the archives' members carry: SOURCE_DATE_EPOCH when set, else the
// commit's time, else now.
func sourceDate() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	if out, err := exec.Command("git", "log", "-1", "--format=%ct").Output(); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Now().UTC().Truncate(time.Second)
}

// tarGzOf returns a gzipped tar of members, each owned by 0:0 and dated mtime.
func tarGzOf(members []member, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	gz.ModTime = mtime
	tw := tar.NewWriter(gz)
	for _, m := range members {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: m.name, Mode: int64(m.mode), Size: int64(len(m.data)),
			ModTime: mtime}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(m.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipOf returns a zip of members (deflated), dated mtime, with their Unix modes.
func zipOf(members []member, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		h := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(m.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(m.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeFile writes data to path through a temporary file renamed over it, so an
// interrupted run leaves no half archive under the final name.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
