// This file prepares what searchbench measures on: ripgrep and fd installed from apt when
// missing, and the corpora built under the cache folder (Go's source tree, a kernel-sized
// tree, a million small files, and the big text files for read and edit). Each corpus is
// built once and marked done; a later run reuses it.

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// doneMark is the file a finished corpus holds; a corpus without it is built again.
const doneMark = ".searchbench-done"

// corpus is one tree to search.
type corpus struct {
	name string // for the table: "Go tree", "kernel"
	dir  string
	// kind is "go" for trees of Go code and "c" for the Linux sources; it picks the
	// patterns.
	kind  string
	about string // where it comes from, for the output
	files int    // regular files in it, .git left out
}

// ensureTools installs ripgrep and fd with apt-get when rg or fdfind is missing, as root or
// through sudo. It fails saying what to install when it cannot.
func ensureTools() error {
	var missing []string
	if _, err := exec.LookPath("rg"); err != nil {
		missing = append(missing, "ripgrep")
	}
	if _, err := exec.LookPath("fdfind"); err != nil {
		if _, err := exec.LookPath("fd"); err != nil {
			missing = append(missing, "fd-find")
		}
	}
	if len(missing) == 0 {
		return nil
	}
	fmt.Printf("installing %s with apt-get\n", strings.Join(missing, " "))
	if err := aptGet(append([]string{"install", "-y", "--no-install-recommends"}, missing...)...); err != nil {
		return fmt.Errorf("installing %s failed (%v); install them by hand (apt-get install %s) and run again", strings.Join(missing, " "), err, strings.Join(missing, " "))
	}
	return nil
}

// aptGet runs apt-get with args, through sudo when not root; it runs apt-get update first
// once, when the install fails without it.
func aptGet(args ...string) error {
	run := func(a ...string) error {
		var cmd *exec.Cmd
		if os.Geteuid() == 0 {
			cmd = exec.Command("apt-get", a...)
		} else {
			cmd = exec.Command("sudo", append([]string{"-n", "apt-get"}, a...)...)
		}
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd.Run()
	}
	if err := run(args...); err == nil {
		return nil
	}
	if err := run("update"); err != nil {
		return err
	}
	return run(args...)
}

// fdBinary returns the name of fd's binary: fdfind on Debian, fd elsewhere.
func fdBinary() string {
	if _, err := exec.LookPath("fdfind"); err == nil {
		return "fdfind"
	}
	return "fd"
}

// goTree returns Go's source tree (GOROOT/src) copied into cache, made a git repository so
// that rg and fd apply .gitignore files there as pid does.
func goTree(cache string) (corpus, error) {
	dir := filepath.Join(cache, "go-src")
	c := corpus{name: "Go tree", dir: dir, kind: "go", about: "GOROOT/src of " + runtime.Version()}
	if !done(dir) {
		fmt.Println("copying GOROOT/src to", dir)
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return c, fmt.Errorf("go env GOROOT: %v (is go on the PATH?)", err)
		}
		src := filepath.Join(strings.TrimSpace(string(out)), "src")
		if err := os.RemoveAll(dir); err != nil {
			return c, err
		}
		if err := run("", "cp", "-a", src, dir); err != nil {
			return c, err
		}
		if err := finish(dir); err != nil {
			return c, err
		}
	}
	var err error
	c.files, err = countFiles(dir)
	return c, err
}

// kernelTree returns a kernel-sized tree: the Linux sources of Debian's linux-source
// package when apt can fetch it, else a tree generated from copies of GOROOT/src.
func kernelTree(cache string, goSrc corpus) (corpus, error) {
	dir := filepath.Join(cache, "kernel")
	if done(dir) {
		return describeKernel(dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return corpus{}, err
	}
	if err := linuxSource(cache, dir); err != nil {
		fmt.Printf("linux-source could not be used (%v); generating a kernel-sized tree instead\n", err)
		if err := os.RemoveAll(dir); err != nil {
			return corpus{}, err
		}
		if err := generateKernelSized(goSrc.dir, dir, kernelFiles); err != nil {
			return corpus{}, err
		}
	}
	if err := finish(dir); err != nil {
		return corpus{}, err
	}
	return describeKernel(dir)
}

// describeKernel tells a kernel corpus built by kernelTree apart: sources or generated.
func describeKernel(dir string) (corpus, error) {
	c := corpus{name: "kernel", dir: dir}
	about, err := os.ReadFile(filepath.Join(dir, ".searchbench-about"))
	if err != nil {
		return c, err
	}
	c.about = strings.TrimSpace(string(about))
	c.kind = "go"
	if strings.HasPrefix(c.about, "Linux") {
		c.kind = "c"
	}
	c.files, err = countFiles(dir)
	return c, err
}

var tarballName = regexp.MustCompile(`linux-source-[0-9.]+\.tar\.(xz|bz2|gz)$`)

// linuxSource fetches Debian's linux-source package with apt-get download (no
// installation, no root needed) and unpacks its source tarball into dir.
func linuxSource(cache, dir string) error {
	out, err := exec.Command("apt-cache", "depends", "linux-source").Output()
	if err != nil {
		return fmt.Errorf("apt-cache depends linux-source: %v", err)
	}
	pkg := ""
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Depends: "); ok && strings.HasPrefix(v, "linux-source-") {
			pkg = v
			break
		}
	}
	if pkg == "" {
		return errors.New("apt knows no linux-source-N package (is there a Debian package list?)")
	}
	dl := filepath.Join(cache, "download")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return err
	}
	debs, _ := filepath.Glob(filepath.Join(dl, pkg+"_*.deb"))
	if len(debs) == 0 {
		fmt.Println("downloading", pkg, "with apt-get download")
		if err := run(dl, "apt-get", "download", pkg); err != nil {
			return err
		}
		debs, _ = filepath.Glob(filepath.Join(dl, pkg+"_*.deb"))
		if len(debs) == 0 {
			return fmt.Errorf("apt-get download %s left no .deb", pkg)
		}
	}
	unpacked := filepath.Join(dl, "unpacked")
	if err := os.RemoveAll(unpacked); err != nil {
		return err
	}
	if err := os.MkdirAll(unpacked, 0o755); err != nil {
		return err
	}
	if err := run(unpacked, "dpkg-deb", "-x", debs[0], "."); err != nil {
		return err
	}
	var tarball string
	filepath.WalkDir(unpacked, func(p string, e fs.DirEntry, err error) error {
		if err == nil && tarballName.MatchString(e.Name()) {
			tarball = p
		}
		return nil
	})
	if tarball == "" {
		return fmt.Errorf("%s holds no linux-source tarball", debs[0])
	}
	fmt.Println("unpacking", filepath.Base(tarball), "into", dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := run(dir, "tar", "-xf", tarball, "--strip-components=1"); err != nil {
		return err
	}
	os.RemoveAll(unpacked)
	if err := dropDebianIgnore(filepath.Join(dir, ".gitignore")); err != nil {
		return err
	}
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(debs[0]), pkg+"_"), "_all.deb")
	return os.WriteFile(filepath.Join(dir, ".searchbench-about"), fmt.Appendf(nil, "Linux sources from Debian's %s %s\n", pkg, version), 0o644)
}

// dropDebianIgnore removes from the top .gitignore of Debian's Linux sources the block
// Debian's packaging adds ("/*" then "!/debian/": its own repository holds only debian/),
// which would hide the whole tree from rg, fd and pid; what is left is upstream's file.
func dropDebianIgnore(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	if i := strings.Index(s, "\n#\n# Debian packaging"); i >= 0 {
		s = s[:i+1]
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

// kernelFiles is about how many files Linux's sources hold; a generated tree gets at least
// as many.
const kernelFiles = 78000

// generateKernelSized builds, in dir, copies of the Go tree goDir under varied names
// (copy-00/src-a, copy-01/src-b, ...) until it holds at least want files, every third copy
// with a .gitignore of its own that leaves out its testdata folders and golden files: the
// same tree every time.
func generateKernelSized(goDir, dir string, want int) error {
	n, err := countFiles(goDir)
	if err != nil || n == 0 {
		return fmt.Errorf("counting %s: %v", goDir, err)
	}
	copies := (want + n - 1) / n
	fmt.Printf("generating a kernel-sized tree: %d copies of %s (%d files each) in %s\n", copies, goDir, n, dir)
	for i := range copies {
		dst := filepath.Join(dir, fmt.Sprintf("copy-%02d", i), "src-"+string(rune('a'+i%26)))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := run("", "cp", "-a", goDir, dst); err != nil {
			return err
		}
		os.Remove(filepath.Join(dst, doneMark))
		os.RemoveAll(filepath.Join(dst, ".git"))
		if i%3 == 0 {
			if err := os.WriteFile(filepath.Join(dst, ".gitignore"), []byte("testdata/\n*.golden\n"), 0o644); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, ".searchbench-about"), fmt.Appendf(nil, "generated: %d copies of GOROOT/src (%s) under varied names, a .gitignore in every third\n", copies, runtime.Version()), 0o644)
}

// millionTree returns a tree of 1,000,001 small files (1,000 folders of 1,000 files, and
// one at the top), each a few lines of text.
func millionTree(cache string) (corpus, error) {
	dir := filepath.Join(cache, "million")
	c := corpus{name: "1,000,001 files", dir: dir, kind: "go", about: "generated: 1,000 folders of 1,000 small files, and one more", files: 1000001}
	if done(dir) {
		return c, nil
	}
	fmt.Println("generating 1,000,001 small files in", dir, "(a few minutes)")
	if err := os.RemoveAll(dir); err != nil {
		return c, err
	}
	for d := range 1000 {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return c, err
		}
		for f := range 1000 {
			body := fmt.Sprintf("package d%03d\n\n// file %d of folder %d\nfunc F%d() int { return %d }\n", d, f, d, f, d*1000+f)
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%04d.go", f)), []byte(body), 0o644); err != nil {
				return c, err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "top.txt"), []byte("the one file at the top\n"), 0o644); err != nil {
		return c, err
	}
	return c, finish(dir)
}

// bigLine is line i of the big text files: about 60 bytes.
func bigLine(i int) string {
	return fmt.Sprintf("%09d the quick brown fox jumps over the lazy dog %08x\n", i, uint32(i)*2654435761)
}

// writeBigFile writes to path lines of bigLine until it holds at least size bytes.
func writeBigFile(path string, size int64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for i := 1; n < size; i++ {
		k, _ := w.WriteString(bigLine(i))
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// done reports whether dir holds a finished corpus.
func done(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, doneMark))
	return err == nil
}

// finish makes dir a git repository (so rg and fd apply its .gitignore files, as pid does
// everywhere) and marks it done.
func finish(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		if err := run(dir, "git", "init", "-q"); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, doneMark), nil, 0o644)
}

// countFiles returns the regular files under dir, .git left out.
func countFiles(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == ".git" {
			return filepath.SkipDir
		}
		if e.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n, err
}

// run runs name with args in dir ("" for the current folder), its output to stderr.
func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}
