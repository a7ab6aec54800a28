// This file holds the marker code: 12 hex digits, random, kept in pid's state folder
// (markers.key), that the lines around an instruction file carry (instructions.go). A file
// in a workspace cannot know it, so it cannot print the line that ends its own text; and
// since it is the same for every session of the user, a loaded session, or another session
// of the same folder, sends its system prompt as the same bytes (the provider's cache holds).

package prompt

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/internal/xdg"
)

// markerKeyFile is the marker code's file in pid's state folder.
const markerKeyFile = "markers.key"

// markerCodeLen is the marker code's length: 12 hex digits.
const markerCodeLen = 12

// MarkerCode returns the marker code from pid's state folder (markers.key), writing a new
// one first when there is none (or what is there is no code). Two daemons starting at once
// read the same code: it is linked into place whole, and a daemon that finds one there reads
// it. An error when the state folder cannot be used: the caller then makes a code of its own
// (NewMarkerCode).
func MarkerCode() (string, error) {
	dir, err := xdg.StateDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, markerKeyFile)
	if code, err := readMarkerCode(path); err == nil {
		return code, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		// Unreadable or not a code: replaced whole.
		if err := safefile.WriteAtomic(path, []byte(NewMarkerCode()+"\n"), 0o600); err != nil {
			return "", err
		}
		return readMarkerCode(path)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, markerKeyFile+".new-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(NewMarkerCode() + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	return readMarkerCode(path)
}

// readMarkerCode reads the code at path; an error when it is missing or is no code.
func readMarkerCode(path string) (string, error) {
	data, err := safefile.Read(path, 64)
	if err != nil {
		return "", err
	}
	code := strings.TrimSpace(string(data))
	if _, err := hex.DecodeString(code); err != nil || len(code) != markerCodeLen {
		return "", errors.New(path + " holds no marker code")
	}
	return code, nil
}

// NewMarkerCode returns a random code.
func NewMarkerCode() string {
	b := make([]byte, markerCodeLen/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
