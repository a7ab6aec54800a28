// Package mdfile reads the Markdown files with YAML front matter that coding agents share:
// skills' SKILL.md and agent definitions (packages skills and agents). It says where such a
// file may be read from (a workspace's must stay inside its workspace folder), how large it
// may be, and what its front matter holds. Everything it reads may be a repository's, so it
// never follows a link out of a workspace folder, never blocks on a FIFO, never reads more
// than MaxBytes of a file nor more than MaxEntries entries of a folder.
//
// The entry points are Entries (a folder's names), Contain (where a path really leads),
// Read (a file) and Parse (its front matter and body).
package mdfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/pid-agent/pid/internal/safefile"
)

// MaxBytes caps a file: a longer one is left out.
const MaxBytes = 64 << 10

// MaxEntries caps how many entries of one folder are looked at.
const MaxEntries = 200

// Source says whose a file is.
type Source string

// The sources.
const (
	SourceWorkspace Source = "workspace"
	SourceUser      Source = "user"
)

// Folder is a workspace folder and whether the person trusts it.
type Folder struct {
	// Path is the folder's absolute path.
	Path string
	// Trusted is set when the person trusts it: only then are its files used.
	Trusted bool
}

// ErrOutside is wrapped by Contain's error for a path whose links lead outside the folder
// it must stay in.
var ErrOutside = errors.New("leads outside the workspace folder")

// ErrTooLarge is wrapped by Read's error for a file over MaxBytes.
var ErrTooLarge = fmt.Errorf("it is larger than %d KiB", MaxBytes>>10)

// ErrNotRegular is wrapped by Read's error for something that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Entries returns the names of dir's entries, sorted, at most MaxEntries of them (more is
// set when there were others, which are left out: which ones is the file system's order).
// A missing folder has no entries and no error.
func Entries(dir string) (names []string, more bool, err error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	names, err = f.Readdirnames(MaxEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	if len(names) > MaxEntries {
		names, more = names[:MaxEntries], true
	}
	sort.Strings(names)
	return names, more, nil
}

// Contain returns path with its links resolved, which must be root or inside it when root
// is set (root is a real path: a workspace folder's); a path that leads outside is an error
// wrapping ErrOutside that names where it leads. A path that does not exist is an error
// wrapping fs.ErrNotExist.
func Contain(path, root string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	if root != "" && !Within(real, root) {
		return "", fmt.Errorf("%w %s (a symbolic link to %s)", ErrOutside, root, real)
	}
	return real, nil
}

// Within reports whether the clean absolute path p is folder or inside it.
func Within(p, folder string) bool {
	return p == folder || strings.HasPrefix(p, strings.TrimSuffix(folder, string(filepath.Separator))+string(filepath.Separator))
}

// RealRoot returns a workspace folder's real path (links resolved), or the folder cleaned
// when it cannot be resolved.
func RealRoot(folder string) string {
	if r, err := filepath.EvalSymlinks(folder); err == nil {
		return r
	}
	return filepath.Clean(folder)
}

// Read returns the content of the regular file at real, a path with its links resolved (by
// Contain): it is opened without following a link, without blocking (a FIFO), and read up
// to MaxBytes. Errors wrap ErrTooLarge, ErrNotRegular or the open's error.
func Read(real string) ([]byte, error) {
	f, err := safefile.OpenNoFollow(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%w (a symbolic link)", ErrNotRegular)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if fi.Size() > MaxBytes {
		return nil, ErrTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBytes {
		return nil, ErrTooLarge
	}
	return b, nil
}

// Doc is a file's front matter and body.
type Doc struct {
	// Keys are the front matter's keys in the file's order.
	Keys []string
	// Body is what follows the front matter.
	Body   string
	values map[string]*yaml.Node
}

// ErrNoFrontMatter is Parse's error for a text that does not start with a front matter.
var ErrNoFrontMatter = errors.New(`it has no front matter (a first line "---", YAML, then a line "---")`)

// Parse reads a text with a YAML front matter: a first line "---" (a UTF-8 byte order mark
// before it is dropped; CRLF line ends are accepted), a YAML mapping, a line "---", then
// the body. Errors say what is wrong in words a person reads.
func Parse(data []byte) (doc *Doc, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return nil, ErrNoFrontMatter
	}
	var front, body string
	found := false
	for off := 0; off <= len(rest); {
		line, _, more := strings.Cut(rest[off:], "\n")
		if strings.TrimRight(line, " \t") == "---" {
			front, body, found = rest[:off], rest[min(len(rest), off+len(line)+1):], true
			break
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	if !found {
		return nil, errors.New(`its front matter has no closing line "---"`)
	}
	doc = &Doc{Body: body, values: map[string]*yaml.Node{}}
	if strings.TrimSpace(front) == "" {
		return doc, nil
	}
	defer func() {
		if r := recover(); r != nil { // a YAML parser's panic must not end the daemon
			doc, err = nil, fmt.Errorf("its front matter is not valid YAML (%v)", r)
		}
	}()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(front), &root); err != nil {
		return nil, fmt.Errorf("its front matter is not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 {
		return doc, nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, errors.New("its front matter is not a YAML mapping of keys to values")
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("its front matter has a key that is not text (line %d)", k.Line)
		}
		if _, dup := doc.values[k.Value]; dup {
			return nil, fmt.Errorf("its front matter sets %q twice", k.Value)
		}
		doc.Keys = append(doc.Keys, k.Value)
		doc.values[k.Value] = v
	}
	return doc, nil
}

// Has reports whether the front matter sets key.
func (d *Doc) Has(key string) bool { _, ok := d.values[key]; return ok }

// String returns key's value as text ("" when it is not set or null); a value that is not
// text (a list, a mapping) is an error.
func (d *Doc) String(key string) (string, error) {
	v := d.values[key]
	if v == nil || v.Tag == "!!null" {
		return "", nil
	}
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%q in its front matter is not text", key)
	}
	return v.Value, nil
}

// List returns key's value as a list of texts: a YAML list of texts, or one text of items
// separated by commas (Claude Code's "Read, Grep"); set is false when the key is not set or
// null. Anything else is an error.
func (d *Doc) List(key string) (items []string, set bool, err error) {
	v := d.values[key]
	if v == nil || v.Tag == "!!null" {
		return nil, false, nil
	}
	switch v.Kind {
	case yaml.ScalarNode:
		items = []string{}
		for _, s := range strings.Split(v.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		return items, true, nil
	case yaml.SequenceNode:
		items = []string{}
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode {
				return nil, true, fmt.Errorf("%q in its front matter is a list holding something other than names", key)
			}
			if s := strings.TrimSpace(e.Value); s != "" {
				items = append(items, s)
			}
		}
		return items, true, nil
	}
	return nil, true, fmt.Errorf("%q in its front matter is neither a list nor text", key)
}

// Flags returns key's value as a mapping of names to true or false (opencode's tools:
// {write: false}); ok is false when the value is not such a mapping.
func (d *Doc) Flags(key string) (flags map[string]bool, order []string, ok bool) {
	v := d.values[key]
	if v == nil || v.Kind != yaml.MappingNode {
		return nil, nil, false
	}
	flags = map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		var b bool
		if k.Kind != yaml.ScalarNode || val.Kind != yaml.ScalarNode || val.Decode(&b) != nil {
			return nil, nil, false
		}
		flags[k.Value] = b
		order = append(order, k.Value)
	}
	return flags, order, true
}

// OneLine returns s with its white space runs (line ends included) made single spaces, cut
// to at most n characters (an ellipsis marking the cut).
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
