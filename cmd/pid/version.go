// This file is `pid --version`: "pid VERSION (COMMIT, GO VERSION, OS/ARCH)". make dist puts
// the version and the commit in with -ldflags (builds run with -buildvcs=false, so Go
// records no commit itself); `go install ...@VERSION` gets both from the build information
// Go keeps in the binary.

package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time with
// -ldflags "-X main.version=1.2.3 -X main.commit=0123456789ab" (see docs/releases.md).
var (
	version = "0.1.0-dev"
	commit  = ""
)

// versionLine is what `pid --version` prints, without the newline.
func versionLine() string {
	v, c := buildVersion()
	return fmt.Sprintf("pid %s (%s, %s, %s/%s)", v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// buildVersion returns pid's version and commit: the ones -ldflags set, else what Go
// recorded (a module version from go install, without its "v"; the VCS revision of a
// build with -buildvcs), else the default version and "unknown".
func buildVersion() (v, c string) {
	v, c = version, commit
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v, orUnknown(c)
	}
	if v == "0.1.0-dev" {
		if mv := info.Main.Version; mv != "" && mv != "(devel)" {
			v = trimV(mv)
		}
	}
	if c == "" {
		var rev string
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" && dirty {
			rev += "-dirty"
		}
		c = rev
	}
	return v, orUnknown(c)
}

func trimV(s string) string {
	if len(s) > 1 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9' {
		return s[1:]
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
