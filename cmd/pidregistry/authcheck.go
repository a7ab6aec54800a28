// This file is check's auth check, the registry's client.py done here: this machine's
// binary extracted from its archive, started with its args, asked initialize as the
// registry's validator asks it, and its authMethods read.

package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// authTimeout bounds the wait for the binary's answer to initialize (the registry's is 60 s).
const authTimeout = 60 * time.Second

// authCheck runs this machine's platform's binary, from its archive in dist, as the
// registry's client.py does (its args, HOME an empty folder, TERM=dumb, initialize declaring
// terminal auth in _meta), and checks that authMethods holds a method of type agent or
// terminal (no type counts as agent; _meta terminal-auth or agent-auth says which).
func authCheck(targets map[string]map[string]any, dist string) []string {
	here := ""
	for _, p := range platforms {
		if p.goos == runtime.GOOS && p.goarch == runtime.GOARCH {
			here = p.name
		}
	}
	t, ok := targets[here]
	if !ok {
		return []string{fmt.Sprintf("auth check: the entry has no binary for this machine (%s)", here)}
	}
	archive, _ := t["archive"].(string)
	cmd, _ := t["cmd"].(string)
	tmp, err := os.MkdirTemp("", "pidregistry-")
	if err != nil {
		return []string{"auth check: " + err.Error()}
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "extracted")
	if err := extract(filepath.Join(dist, path.Base(archive)), root); err != nil {
		return []string{fmt.Sprintf("auth check: extracting %s: %v", path.Base(archive), err)}
	}
	bin := filepath.Join(root, filepath.FromSlash(cmd))
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return []string{fmt.Sprintf("auth check: cmd %q is not a file of the archive", cmd)}
	}
	var args []string
	if a, ok := t["args"].([]any); ok {
		for _, s := range a {
			args = append(args, s.(string))
		}
	}
	methods, err := initialize(bin, args, root, filepath.Join(tmp, "home"))
	if err != nil {
		return []string{"auth check: " + err.Error()}
	}
	var types []string
	for _, m := range methods {
		typ, _ := m["type"].(string)
		if typ == "" {
			meta, _ := m["_meta"].(map[string]any)
			_, term := meta["terminal-auth"]
			_, agent := meta["agent-auth"]
			switch {
			case term:
				typ = "terminal"
			case agent:
				typ = "agent"
			default:
				typ = "agent"
			}
		}
		if typ == "agent" || typ == "terminal" {
			return nil
		}
		types = append(types, typ)
	}
	if len(methods) == 0 {
		return []string{"auth check: initialize answered no authMethods; the registry needs one of type agent or terminal"}
	}
	return []string{fmt.Sprintf("auth check: no auth method of type agent or terminal (types %q)", types)}
}

// initialize starts bin with args in dir, sends initialize as the registry's validator does,
// and returns the answer's authMethods. The process is killed afterwards.
func initialize(bin string, args []string, dir, home string) ([]map[string]any, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), authTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "TERM=dumb")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"ACP Registry Validator","version":"1.0.0"},` +
		`"clientCapabilities":{"terminal":true,"fs":{"readTextFile":true,"writeTextFile":true},"_meta":{"terminal_output":true,"terminal-auth":true}}}}` + "\n"
	if _, err := io.WriteString(stdin, req); err != nil {
		return nil, fmt.Errorf("writing initialize: %v", err)
	}
	type answer struct {
		res []map[string]any
		err error
	}
	done := make(chan answer, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Result *struct {
					AuthMethods []map[string]any `json:"authMethods"`
				} `json:"result"`
				Error json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &msg) != nil || string(msg.ID) != "1" {
				continue // a notification, or a line that is not JSON-RPC
			}
			if msg.Error != nil || msg.Result == nil {
				done <- answer{err: fmt.Errorf("initialize failed: %s", sc.Bytes())}
				return
			}
			done <- answer{res: msg.Result.AuthMethods}
			return
		}
		done <- answer{err: fmt.Errorf("the binary ended without answering initialize (stderr: %q)", tail(stderr.String()))}
	}()
	select {
	case a := <-done:
		return a.res, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer to initialize within %v", authTimeout)
	}
}

func tail(s string) string {
	if len(s) > 400 {
		return "..." + s[len(s)-400:]
	}
	return s
}

// extract unpacks a .tar.gz or .zip archive into dir; members may not leave it.
func extract(archive, dir string) error {
	target := func(name string) (string, error) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			return "", fmt.Errorf("member %q leaves the archive", name)
		}
		return p, os.MkdirAll(filepath.Dir(p), 0o755)
	}
	if strings.HasSuffix(archive, ".zip") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			return err
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			p, err := target(f.Name)
			if err != nil {
				return err
			}
			r, err := f.Open()
			if err != nil {
				return err
			}
			err = writeMember(p, r, f.Mode())
			r.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p, err := target(h.Name)
		if err != nil {
			return err
		}
		if err := writeMember(p, tr, h.FileInfo().Mode()); err != nil {
			return err
		}
	}
}

func writeMember(p string, r io.Reader, mode os.FileMode) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm()|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
