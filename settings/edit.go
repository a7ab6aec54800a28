// This file changes one top-level member of the user's settings file, for pid login (the
// default model), leaving every other byte of the file as the person wrote it.

package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pid-agent/pid/internal/safefile"
)

// SetUserMember sets the top-level member key of the user's settings file (UserPath) to
// value (JSON), creating the file (0600) when missing, and returns the file's path. The
// member's value is replaced where it stands, or the member is added first, indented like
// the object's first member; the rest of the file is kept byte for byte. A link is followed
// (a settings file kept with dotfiles stays a link) and its target written atomically, with
// its mode kept.
//
// It fails, changing nothing, when the file is not a JSON object (it then says so: the
// person edits it) or cannot be read or written.
func SetUserMember(key string, value json.RawMessage) (string, error) {
	path, err := UserPath()
	if err != nil {
		return "", err
	}
	target, perm := path, fs.FileMode(0o600)
	data, err := safefile.Read(path, safefile.SettingsMax)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return path, err
	default:
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return path, err
		}
		if fi, err := os.Stat(target); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	out, err := setMember(data, key, value)
	if err != nil {
		return path, fmt.Errorf("%s: %v; add %q: %s to it yourself", path, err, key, value)
	}
	return path, safefile.WriteAtomic(target, out, perm)
}

// setMember returns data, a JSON object (or nothing, for a new file), with its top-level
// member key set to value; see SetUserMember.
func setMember(data []byte, key string, value json.RawMessage) ([]byte, error) {
	member, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	member = append(append(member, ": "...), value...)
	if len(bytes.TrimSpace(data)) == 0 {
		return append(append([]byte("{\n  "), member...), "\n}\n"...), nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("it is not a JSON object")
	}
	open := int(dec.InputOffset()) // just after '{'
	first := -1                    // where the first member's name starts
	start, end := -1, -1           // the span of key's value (its last occurrence wins, as in Unmarshal)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("it is not valid JSON")
		}
		name, _ := tok.(string)
		nameEnd := int(dec.InputOffset())
		if first < 0 {
			first = bytes.IndexByte(data[open:nameEnd], '"') + open
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, errors.New("it is not valid JSON")
		}
		if name == key {
			start, end = nameEnd, int(dec.InputOffset())
			for start < end && (data[start] == ':' || isSpace(data[start])) {
				start++
			}
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("it is not valid JSON")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("it holds more than one JSON value")
	}
	var out []byte
	switch {
	case start >= 0:
		out = append(append(append(out, data[:start]...), value...), data[end:]...)
	case first >= 0:
		indent := data[open:first]
		out = append(append(append(append(append(out, data[:open]...), indent...), member...), ','), data[open:]...)
	default: // an empty object: {} or { }
		closing := bytes.LastIndexByte(data, '}')
		out = append(append(append(append(out, data[:open-1]...), "{\n  "...), member...), "\n"...)
		out = append(out, data[closing:]...)
	}
	if !json.Valid(out) {
		return nil, errors.New("it could not be changed without breaking it")
	}
	return out, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
