// Command pidregistry writes pid's entry for the ACP Registry (agentclientprotocol/registry),
// from which Zed, JetBrains IDEs and JetBrains Air install agents, and checks an entry the
// way the registry's CI does. `make registry VERSION=x.y.z` and scripts/registry-check run it
// (docs/releases.md):
//
//	go run ./cmd/pidregistry write -version 1.2.3 [-dist dist] [-release-url URL] [-out dist/registry]
//	go run ./cmd/pidregistry check [-dist dist] [-version 1.2.3] dist/registry/pid
//
// write reads the archives' checksums from DIST/SHA256SUMS (make dist writes them) and writes
// OUT/pid/agent.json and OUT/pid/icon.svg. check is in check.go.
//
// This file holds the command line and write.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// DefaultReleaseURL is where the archives of a release are downloaded from: {version} is the
// release's version, {file} the archive's name.
const DefaultReleaseURL = "https://github.com/pid-agent/pid/releases/download/v{version}/{file}"

// The entry's fixed members.
const (
	agentID     = "pid"
	agentName   = "pid"
	repository  = "https://github.com/pid-agent/pid"
	license     = "MIT"
	description = "A coding agent in one static binary: sandboxed bash, checkpoints and rewind, modes and permissions, any OpenAI-compatible or Anthropic model."
)

// platform is one of the registry's platform names with pid's release target for it.
type platform struct {
	name         string // the registry's: darwin-aarch64, linux-x86_64, ...
	goos, goarch string
	binary, ext  string // pid or pid.exe; .tar.gz or .zip
}

// platforms are the six the registry knows, all of which pid is released for.
var platforms = []platform{
	{"darwin-aarch64", "darwin", "arm64", "pid", ".tar.gz"},
	{"darwin-x86_64", "darwin", "amd64", "pid", ".tar.gz"},
	{"linux-aarch64", "linux", "arm64", "pid", ".tar.gz"},
	{"linux-x86_64", "linux", "amd64", "pid", ".tar.gz"},
	{"windows-aarch64", "windows", "arm64", "pid.exe", ".zip"},
	{"windows-x86_64", "windows", "amd64", "pid.exe", ".zip"},
}

// archive is the name make dist gives the platform's archive.
func (p platform) archive(version string) string {
	return "pid-" + version + "-" + p.goos + "-" + p.goarch + p.ext
}

// Agent is an entry of the registry (agent.json), as pid writes it.
type Agent struct {
	ID           string                       `json:"id"`
	Name         string                       `json:"name"`
	Version      string                       `json:"version"`
	Description  string                       `json:"description"`
	Repository   string                       `json:"repository"`
	License      string                       `json:"license"`
	Distribution map[string]map[string]Target `json:"distribution"`
}

// Target is one platform's binary: the archive's URL and checksum, the command inside it and
// its arguments.
type Target struct {
	Archive string   `json:"archive"`
	SHA256  string   `json:"sha256"`
	Cmd     string   `json:"cmd"`
	Args    []string `json:"args"`
}

// icon is pid's 16x16 icon, drawn in currentColor so that clients can theme it: a prompt
// chevron and a cursor.
const icon = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" fill="none">
  <path d="M2.5 4.5 6.5 8l-4 3.5" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round"/>
  <path d="M8.5 11.5h5" stroke="currentColor" stroke-width="1.6" stroke-linecap="round"/>
</svg>
`

var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "write":
		err = writeCmd(os.Args[2:], os.Stdout)
	case "check":
		var ok bool
		ok, err = checkCmd(os.Args[2:], os.Stdout)
		if err == nil && !ok {
			os.Exit(1)
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pidregistry:", err)
		os.Exit(2)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: pidregistry write -version X.Y.Z [-dist dist] [-release-url URL] [-out dist/registry]\n       pidregistry check [-dist dist] [-version X.Y.Z] ENTRY_FOLDER")
	os.Exit(2)
}

func writeCmd(args []string, log io.Writer) error {
	fs := flag.NewFlagSet("write", flag.ContinueOnError)
	version := fs.String("version", "", "the release's version, x.y.z (required)")
	dist := fs.String("dist", "dist", "the folder of make dist's archives and SHA256SUMS")
	releaseURL := fs.String("release-url", DefaultReleaseURL, "the archives' URL, with {version} and {file}")
	out := fs.String("out", filepath.Join("dist", "registry"), "the folder the entry's folder (pid/) goes in")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := write(*version, *dist, *releaseURL, *out)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s\n%s\n", filepath.Join(dir, "agent.json"), filepath.Join(dir, "icon.svg"))
	return nil
}

// write writes out/pid/agent.json and icon.svg for version, from dist/SHA256SUMS, and
// returns the entry's folder. Every platform's archive must be listed there (make dist
// builds all six).
func write(version, dist, releaseURL, out string) (string, error) {
	switch {
	case version == "":
		return "", errors.New("no version: make registry VERSION=x.y.z (after make dist VERSION=x.y.z)")
	case !versionRE.MatchString(version):
		return "", fmt.Errorf("version %q is not x.y.z", version)
	case !strings.Contains(releaseURL, "{file}"):
		return "", fmt.Errorf("the release URL %q has no {file}", releaseURL)
	}
	sums, err := readSums(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		return "", fmt.Errorf("%v (run make dist VERSION=%s first)", err, version)
	}
	a := Agent{ID: agentID, Name: agentName, Version: version, Description: description, Repository: repository,
		License: license, Distribution: map[string]map[string]Target{"binary": {}}}
	for _, p := range platforms {
		file := p.archive(version)
		sum, ok := sums[file]
		if !ok {
			return "", fmt.Errorf("%s is not in %s: make dist VERSION=%s builds it", file, filepath.Join(dist, "SHA256SUMS"), version)
		}
		url := strings.NewReplacer("{version}", version, "{file}", file).Replace(releaseURL)
		a.Distribution["binary"][p.name] = Target{Archive: url, SHA256: sum, Cmd: "./" + p.binary, Args: []string{"--acp"}}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(a); err != nil {
		return "", err
	}
	dir := filepath.Join(out, agentID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.json"), b.Bytes(), 0o644); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "icon.svg"), []byte(icon), 0o644)
}

// readSums reads a SHA256SUMS file ("HASH  NAME" lines) into name -> hash.
func readSums(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		hash, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			continue
		}
		sums[strings.TrimPrefix(name, "*")] = strings.ToLower(hash)
	}
	return sums, sc.Err()
}
