// Package credentials keeps the API keys `pid login` saves, in
// $XDG_CONFIG_HOME/pid/credentials.json (~/.config/pid/credentials.json), and gives them to
// the providers when the environment holds none. The entry points are Lookup (the key for a
// provider and base URL), Secrets (every saved key, for redaction), and Load, Save and
// Remove (the file as a whole, for pid login and logout).
//
// The file is kept like an ssh key: 0600 in a 0700 folder, written atomically. A file that
// is a symbolic link, that others may read or write, that belongs to someone else, or whose
// folder others may write is refused with why (ErrUnsafe), never read. A key goes only to
// the origin (scheme, host, port) it was saved for: a settings file that points the model
// at another server gets no key from this file.
//
// This file holds the file's shape, reading and writing it.
package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/internal/xdg"
)

// FileName is the file's name in pid's config folder.
const FileName = "credentials.json"

// maxSize caps the file: a few keys take a few hundred bytes.
const maxSize = 64 << 10

// ErrUnsafe is wrapped by the error of a file that is not private enough to be believed or
// to hold a key: see the package comment.
var ErrUnsafe = errors.New("not private")

// Entry is one saved key.
type Entry struct {
	// Provider is the provider the key is for: "anthropic" or "openai" (also for an
	// OpenAI-compatible server).
	Provider string `json:"provider"`
	// BaseURL is the API root the key was saved for; the key goes to that origin only.
	BaseURL string `json:"baseUrl"`
	// APIKey is the key itself.
	APIKey string `json:"apiKey"`
	// Saved is when pid login saved it.
	Saved time.Time `json:"saved,omitzero"`
}

// File is the file's content: the entries by name ("anthropic", "openai", or the host of
// an OpenAI-compatible server, e.g. "openrouter.ai").
type File struct {
	Credentials map[string]Entry `json:"credentials"`
}

// Names returns the entries' names, sorted.
func (f *File) Names() []string {
	if f == nil {
		return nil
	}
	out := make([]string, 0, len(f.Credentials))
	for n := range f.Credentials {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// DefaultPath returns $XDG_CONFIG_HOME/pid/credentials.json (see package xdg).
func DefaultPath() (string, error) {
	dir, err := xdg.ConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, FileName), nil
}

// Load reads the file at path. A missing file is an empty File and no error. A file that
// is not private enough is an error wrapping ErrUnsafe that says why and how to fix it; one
// that does not parse, or holds an entry without a provider, a base URL or a key, is an
// error naming the file.
func Load(path string) (*File, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Credentials: map[string]Entry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	if why := unsafeFile(path, fi); why != "" {
		return nil, fmt.Errorf("%s %s: %w", path, why, ErrUnsafe)
	}
	f, err := safefile.OpenNoFollow(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if opened, err := f.Stat(); err != nil || !os.SameFile(fi, opened) {
		return nil, fmt.Errorf("%s changed while pid read it; try again", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSize {
		return nil, fmt.Errorf("%s is larger than %d KiB: it is not pid's", path, maxSize>>10)
	}
	var out File
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s is not a credentials file pid can read (%v): remove it and run pid login again", path, err)
	}
	if out.Credentials == nil {
		out.Credentials = map[string]Entry{}
	}
	for _, name := range out.Names() {
		e := out.Credentials[name]
		if e.Provider == "" || e.BaseURL == "" || strings.TrimSpace(e.APIKey) == "" {
			return nil, fmt.Errorf(`%s: entry %q needs "provider", "baseUrl" and "apiKey": run pid login again`, path, name)
		}
	}
	return &out, nil
}

// Save writes f to path atomically, 0600, creating its folder 0700 or making an existing
// one private (0700) when others may read it; madePrivate reports that. It refuses (an
// error wrapping ErrUnsafe) a file that is a symbolic link or is not the user's, and a
// folder that belongs to someone else.
func Save(path string, f *File) (madePrivate bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	if madePrivate, err = privateFolder(dir); err != nil {
		return madePrivate, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 || !fi.Mode().IsRegular() {
			return madePrivate, fmt.Errorf("%s is %s, not a file of its own: remove it, then run pid login again: %w", path, kindOf(fi), ErrUnsafe)
		}
		if why := notOwned(fi); why != "" {
			return madePrivate, fmt.Errorf("%s %s: %w", path, why, ErrUnsafe)
		}
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return madePrivate, err
	}
	return madePrivate, safefile.WriteAtomic(path, append(data, '\n'), 0o600)
}

// Remove deletes the file at path (no error when it is missing).
func Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// unsafeFile returns why the file fi (from Lstat) describes must not be read: a link, not a
// regular file, readable or writable by others, someone else's, or in a folder others may
// write. "" when it is private.
func unsafeFile(path string, fi fs.FileInfo) string {
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.Mode().IsRegular() {
		return "is " + kindOf(fi) + ", not a file of its own (remove it, then run pid login again)"
	}
	if why := notPrivate(path, fi); why != "" {
		return why
	}
	return notOwned(fi)
}

// kindOf names what fi describes, for messages.
func kindOf(fi fs.FileInfo) string {
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m.IsRegular():
		return "a file"
	}
	return "a special file (" + m.Type().String() + ")"
}

// Origin returns the origin of an http(s) URL, "scheme://host:port" with the scheme and
// host in lower case and the port always given; "" for anything else.
func Origin(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port
}

// Find returns the name and entry of f for provider whose base URL has the origin of
// baseURL, the first by name; ok is false when there is none.
func (f *File) Find(provider, baseURL string) (name string, e Entry, ok bool) {
	want := Origin(baseURL)
	if f == nil || want == "" {
		return "", Entry{}, false
	}
	for _, n := range f.Names() {
		e := f.Credentials[n]
		if e.Provider == provider && Origin(e.BaseURL) == want {
			return n, e, true
		}
	}
	return "", Entry{}, false
}
