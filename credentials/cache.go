// This file holds the process's view of the default file: read again only when the file
// (or its folder's mode) changed, so that a key pid login saves while pid runs is used,
// and redacted, from the next lookup on, at the cost of two stats per call.

package credentials

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/internal/secret"
)

// cache is the default file as last read.
type cache struct {
	mu      sync.Mutex
	stamp   stamp
	file    *File
	err     error
	secrets map[string]*secret.Secret
}

// stamp is what tells a changed file: its path, its Lstat (nil when missing) and its
// folder's mode.
type stamp struct {
	path    string
	fi      fs.FileInfo
	dirMode fs.FileMode
}

func (a stamp) same(b stamp) bool {
	if a.path != b.path || a.dirMode != b.dirMode || (a.fi == nil) != (b.fi == nil) {
		return false
	}
	if a.fi == nil {
		return true
	}
	return os.SameFile(a.fi, b.fi) && a.fi.Size() == b.fi.Size() && a.fi.ModTime().Equal(b.fi.ModTime()) && a.fi.Mode() == b.fi.Mode()
}

var def = &cache{}

// current returns the default file as it is now (see Load), reading it again when it
// changed. Safe for concurrent use.
func (c *cache) current() (*File, map[string]*secret.Secret, error) {
	path, err := DefaultPath()
	if err != nil {
		return nil, nil, nil // no config folder: no file
	}
	st := stamp{path: path}
	if fi, err := os.Lstat(path); err == nil {
		st.fi = fi
	}
	if di, err := os.Stat(filepath.Dir(path)); err == nil {
		st.dirMode = di.Mode()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stamp.path != "" && c.stamp.same(st) {
		return c.file, c.secrets, c.err
	}
	c.stamp, c.file, c.secrets = st, nil, nil
	c.file, c.err = Load(path)
	keys := c.file
	if errors.Is(c.err, ErrUnsafe) && st.fi != nil && st.fi.Mode().IsRegular() {
		// Not used, since others may read or change it; its keys are still redacted, since
		// a tool may print them.
		if data, err := safefile.Read(path, maxSize); err == nil {
			keys = &File{}
			if json.Unmarshal(data, keys) != nil {
				keys = nil
			}
		}
	}
	if keys != nil {
		c.secrets = map[string]*secret.Secret{}
		for name, e := range keys.Credentials {
			if s := secret.New(strings.TrimSpace(e.APIKey)); s.Active() {
				c.secrets[name] = s
			}
		}
	}
	return c.file, c.secrets, c.err
}

// Lookup returns the saved key for provider ("anthropic", "openai") at baseURL's origin,
// and the name of its entry; "" when none is saved. err is why the file cannot be used
// (see Load): the caller then has no key from it and should say why. It reads the file
// again only when it changed. Safe for concurrent use.
func Lookup(provider, baseURL string) (key, name string, err error) {
	f, _, err := def.current()
	if err != nil {
		return "", "", err
	}
	name, e, ok := f.Find(provider, baseURL)
	if !ok {
		return "", "", nil
	}
	return e.APIKey, name, nil
}

// Secrets returns the saved keys, made ready to be found in text, by entry name; nil when
// there is no file. A file refused because others may read it (not a link) still gives its
// keys here: they are not used, but a tool may print them. The values stay the same until
// the file changes.
// Safe for concurrent use; it does not block beyond two stats (and a read when the file
// changed).
func Secrets() map[string]*secret.Secret {
	_, s, _ := def.current()
	return s
}

// Current returns the default file as it is now, for pid doctor and pid login --check.
func Current() (*File, error) {
	f, _, err := def.current()
	if f == nil && err == nil {
		f = &File{Credentials: map[string]Entry{}}
	}
	return f, err
}
