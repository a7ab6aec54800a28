// This file turns what a person sends (text, and content blocks in the Agent Client
// Protocol's shape: text, images, links to files and embedded resources such as a selection
// or an unsaved buffer) into the one user message the model receives, in their order.

package prompt

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pid-agent/pid/llm"
)

// Block is one content block of a prompt, in the Agent Client Protocol's shape:
// {type: "text", text}, {type: "image", data, mimeType}, {type: "resource_link", uri, name},
// {type: "resource", resource: {uri, text, mimeType?}}.
type Block struct {
	Type     string         `json:"type"`
	Text     *string        `json:"text"`
	Data     string         `json:"data"`
	MimeType string         `json:"mimeType"`
	URI      string         `json:"uri"`
	Name     string         `json:"name"`
	Resource *BlockResource `json:"resource"`
}

// BlockResource is an embedded resource: a file's text as the editor has it (a selection, an
// unsaved buffer). A line range is in the URI's fragment: #L10-L20 or #L10.
type BlockResource struct {
	URI      string  `json:"uri"`
	Text     *string `json:"text"`
	MimeType string  `json:"mimeType"`
}

// imageTypes are the image types the providers take.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// Attach is what turning a person's blocks into a message needs of the session: its working
// folder (paths inside it are shown relative to it), whether its model takes images, and
// the model's name ("provider/id", said when an image is left out).
type Attach struct {
	Cwd    string
	Images bool
	Model  string
}

// UserMessage returns the user message of a prompt, a steer or a follow-up: text (when
// given) first, then the blocks in order. Text blocks stay text; an embedded resource
// becomes text naming its path (relative to a.Cwd when inside it) and line range, with its
// content fenced; a resource link becomes text naming the path, which the model can read with
// its tools; an image stays an image when a.Images is set, else becomes a note saying that an
// image was left out. field names the blocks in error messages ("content" gives content[2]:
// ...).
//
// Contract: pure. It fails, naming the block's index, for a block that is not an object,
// lacks what its type needs, or has an unknown type, and for a message with neither text nor
// blocks.
func UserMessage(field string, text *string, blocks []json.RawMessage, a Attach) (llm.Message, error) {
	if text == nil && len(blocks) == 0 {
		return llm.Message{}, fmt.Errorf("text or %s is required: the prompt is empty", field)
	}
	content := make([]llm.Content, 0, len(blocks)+1)
	if text != nil {
		content = append(content, llm.Text(*text))
	}
	for i, raw := range blocks {
		c, err := a.convert(raw)
		if err != nil {
			return llm.Message{}, fmt.Errorf("%s[%d]: %s", field, i, err)
		}
		content = append(content, c)
	}
	return llm.Message{Role: llm.RoleUser, Content: content, Timestamp: llm.Now()}, nil
}

// convert converts one block, or says what is wrong with it.
func (a Attach) convert(raw json.RawMessage) (llm.Content, error) {
	var b Block
	if err := json.Unmarshal(raw, &b); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
			return llm.Content{}, fmt.Errorf("%s must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return llm.Content{}, fmt.Errorf("a block is an object such as {\"type\": \"text\", \"text\": \"...\"}")
	}
	switch b.Type {
	case "text":
		if b.Text == nil {
			return llm.Content{}, fmt.Errorf("a text block needs text")
		}
		return llm.Text(*b.Text), nil
	case "image":
		if b.Data == "" || b.MimeType == "" {
			return llm.Content{}, fmt.Errorf("an image needs data (base64) and mimeType")
		}
		if !isImageType(b.MimeType) {
			return llm.Content{}, fmt.Errorf("mimeType %q is not an image type pid can send a model (%s)", b.MimeType, strings.Join(imageTypes, ", "))
		}
		n, err := base64.StdEncoding.DecodeString(b.Data)
		if err != nil {
			return llm.Content{}, fmt.Errorf("an image's data must be base64 (standard encoding, padded): %v", err)
		}
		if !a.Images {
			model := "this session's model"
			if a.Model != "" {
				model = "the model " + a.Model
			}
			return llm.Text(fmt.Sprintf("[An image (%s, %s) was attached here, but %s cannot see images, so it was left out.]",
				b.MimeType, byteSize(len(n)), model)), nil
		}
		return llm.Content{Type: llm.ContentImage, Data: b.Data, MimeType: b.MimeType}, nil
	case "resource_link":
		if b.URI == "" {
			return llm.Content{}, fmt.Errorf("a resource_link needs uri")
		}
		where, lines := a.place(b.URI)
		named := ""
		if b.Name != "" && b.Name != filepath.Base(where) {
			named = fmt.Sprintf(" (%q)", b.Name)
		}
		return llm.Text(fmt.Sprintf("[Attached: %s%s%s. Read it with the read tool if you need its content.]", where, lines, named)), nil
	case "resource":
		r := b.Resource
		if r == nil || r.URI == "" || r.Text == nil {
			return llm.Content{}, fmt.Errorf("a resource needs resource.uri and resource.text")
		}
		where, lines := a.place(r.URI)
		fence := fenceFor(*r.Text)
		body := *r.Text
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		return llm.Text(fmt.Sprintf("%s%s, as the editor has it:\n%s\n%s%s", where, lines, fence, body, fence)), nil
	case "":
		return llm.Content{}, fmt.Errorf("a block needs a type: text, image, resource_link or resource")
	}
	return llm.Content{}, fmt.Errorf("unknown block type %q: pid takes text, image, resource_link and resource", b.Type)
}

// isImageType reports whether mime is one of imageTypes.
func isImageType(mime string) bool {
	for _, t := range imageTypes {
		if strings.EqualFold(mime, t) {
			return true
		}
	}
	return false
}

// lineRange matches a URI fragment naming lines: L10, L10-L20 (or L10-20).
var lineRange = regexp.MustCompile(`^L(\d+)(?:-L?(\d+))?$`)

// place names what a URI points at for the model: a file: URI as a path (relative to the
// working folder when inside it), another URI as it is; and its line range (" (lines
// 10-20)", " (line 10)"), "" when its fragment names none.
func (a Attach) place(uri string) (where, lines string) {
	where = uri
	u, err := url.Parse(uri)
	if err != nil {
		return where, ""
	}
	if m := lineRange.FindStringSubmatch(u.Fragment); m != nil {
		switch {
		case m[2] == "" || m[2] == m[1]:
			lines = fmt.Sprintf(" (line %s)", m[1])
		default:
			lines = fmt.Sprintf(" (lines %s-%s)", m[1], m[2])
		}
	}
	if u.Scheme != "file" || !filepath.IsAbs(u.Path) {
		if lines != "" {
			u.Fragment = ""
			where = u.String()
		}
		return where, lines
	}
	p := filepath.Clean(u.Path)
	if rel, err := filepath.Rel(a.Cwd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		p = rel
	}
	return p, lines
}

// fenceFor returns a Markdown code fence longer than any run of backticks in text.
func fenceFor(text string) string {
	longest, run := 0, 0
	for _, c := range text {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// byteSize says a size for a person.
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// jsonKind names a Go kind as the JSON value it decodes from.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "a list"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "a number"
}

// TextOf returns the text of a prompt's messages, their text blocks one a line, cut past
// 1 KiB (a checkpoint's and a hook's view of the prompt). Pure.
func TextOf(prompts []llm.Message) string {
	var b strings.Builder
	for _, m := range prompts {
		for _, c := range m.Content {
			if c.Type == llm.ContentText {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(c.Text)
			}
			if b.Len() > 1024 {
				return b.String()
			}
		}
	}
	return b.String()
}
