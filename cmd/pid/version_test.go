package main

import (
	"os/exec"
	"regexp"
	"runtime"
	"testing"
)

// pid --version prints "pid VERSION (COMMIT, GO VERSION, OS/ARCH)": the Go and the platform
// of this build, the commit as far as the build knows it (make dist puts it in; a plain
// build without VCS stamping says unknown).
func TestVersionLine(t *testing.T) {
	out, err := exec.Command(pidBin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^pid ([0-9]+\.[0-9]+\.[0-9]+[-+.0-9A-Za-z]*) \(([0-9a-f]{7,40}(-dirty)?|unknown), (go[^,]+), ([a-z0-9]+/[a-z0-9]+)\)\n$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("pid --version = %q, want pid VERSION (COMMIT, GO VERSION, OS/ARCH)", out)
	}
	if m[4] != runtime.Version() || m[5] != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("pid --version = %q: want %s and %s/%s", out, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
}

// The version and commit set through -ldflags are printed as given; without them, a module
// version Go recorded loses its "v".
func TestBuildVersion(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "1.2.3", "0123456789ab"
	if v, c := buildVersion(); v != "1.2.3" || c != "0123456789ab" {
		t.Errorf("buildVersion = %q, %q", v, c)
	}
	want := "pid 1.2.3 (0123456789ab, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if got := versionLine(); got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
	for in, want := range map[string]string{"v1.2.3": "1.2.3", "v0.0.0-20261206-abc": "0.0.0-20261206-abc", "vx": "vx", "1.0.0": "1.0.0"} {
		if got := trimV(in); got != want {
			t.Errorf("trimV(%q) = %q, want %q", in, got, want)
		}
	}
}
