// This file tests UserMessage: what the model gets for each kind of content block, and the
// errors a client gets for blocks that cannot be sent.

package session_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/session"
)

// contentSession makes a session in a fresh folder with a scripted model whose "images"
// setting is images (nil: the default).
func contentSession(t *testing.T, images *bool) (*session.Session, string) {
	t.Helper()
	isolate(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := session.NewHost(session.HostOptions{})
	h.SetUp(nil)
	t.Cleanup(h.Close)
	s, err := h.New(session.Config{Cwd: root, Model: &session.ModelConfig{Provider: "script", Images: images}}, session.Options{Face: face{}})
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

func blocks(t *testing.T, js ...string) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(js))
	for i, j := range js {
		if !json.Valid([]byte(j)) {
			t.Fatalf("bad test block %s", j)
		}
		out[i] = json.RawMessage(j)
	}
	return out
}

// Each block becomes what the model can use, in order: paths inside the cwd relative to it,
// others absolute, non-file URIs as they are; line ranges named from the fragment; fences
// longer than the text's backtick runs.
func TestUserMessageBlocks(t *testing.T) {
	s, root := contentSession(t, nil)
	text := "lead"
	msg, err := s.UserMessage("content", &text, blocks(t,
		`{"type":"resource","resource":{"uri":"file://`+root+`/src/a.go#L10-L20","text":"a := 1"}}`,
		`{"type":"resource","resource":{"uri":"file:///outside/b.go#L7","text":"`+"````"+`"}}`,
		`{"type":"resource","resource":{"uri":"untitled:Untitled-1","text":"draft\n"}}`,
		`{"type":"resource_link","uri":"https://example.com/spec#L3-L4","name":"the spec"}`,
		`{"type":"image","data":"aGk=","mimeType":"image/jpeg"}`,
	))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"lead",
		"src/a.go (lines 10-20), as the editor has it:\n```\na := 1\n```",
		"/outside/b.go (line 7), as the editor has it:\n`````\n````\n`````",
		"untitled:Untitled-1, as the editor has it:\n```\ndraft\n```",
		`[Attached: https://example.com/spec (lines 3-4) ("the spec"). Read it with the read tool if you need its content.]`,
	}
	if len(msg.Content) != len(want)+1 {
		t.Fatalf("got %d content parts; want %d: %+v", len(msg.Content), len(want)+1, msg.Content)
	}
	for i, w := range want {
		if got := msg.Content[i].Text; got != w {
			t.Errorf("part %d = %q; want %q", i, got, w)
		}
	}
	if img := msg.Content[len(want)]; img.Type != "image" || img.Data != "aGk=" || img.MimeType != "image/jpeg" {
		t.Errorf("the image part = %+v; want the image as sent", img)
	}
}

// A model set not to take images gets a note with the image's type and size instead.
func TestUserMessageImageNote(t *testing.T) {
	no := false
	s, _ := contentSession(t, &no)
	msg, err := s.UserMessage("content", nil, blocks(t, `{"type":"image","data":"`+strings.Repeat("AAAA", 1024)+`","mimeType":"image/png"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Content[0].Text; msg.Content[0].Type != "text" || !strings.Contains(got, "image/png, 3 KB") || !strings.Contains(got, "cannot see images") {
		t.Errorf("the model got %+v; want a note naming the type and size", msg.Content[0])
	}
}

// Blocks that cannot be sent are errors naming their index, matching session.ErrInvalid.
func TestUserMessageErrors(t *testing.T) {
	s, _ := contentSession(t, nil)
	for _, tc := range []struct{ block, want string }{
		{`"text"`, "content[0]: a block is an object"},
		{`{"type":"text"}`, "content[0]: a text block needs text"},
		{`{"type":"text","text":5}`, "content[0]: text must be a string, not number"},
		{`{"type":"image","data":"aGk="}`, "content[0]: an image needs data (base64) and mimeType"},
		{`{"type":"image","data":"aGk=","mimeType":"application/pdf"}`, `content[0]: mimeType "application/pdf" is not an image type`},
		{`{"type":"resource_link","name":"x"}`, "content[0]: a resource_link needs uri"},
		{`{"type":"resource","resource":{"text":"x"}}`, "content[0]: a resource needs resource.uri and resource.text"},
		{`{"type":"audio"}`, `content[0]: unknown block type "audio"`},
	} {
		_, err := s.UserMessage("content", nil, blocks(t, tc.block))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: err = %v; want ErrInvalid containing %q", tc.block, err, tc.want)
		}
	}
	if _, err := s.UserMessage("content", nil, nil); err == nil || !strings.Contains(err.Error(), "the prompt is empty") {
		t.Errorf("an empty prompt: err = %v; want the prompt is empty", err)
	}
	empty := ""
	if msg, err := s.UserMessage("content", &empty, nil); err != nil || len(msg.Content) != 1 {
		t.Errorf("an empty text is a prompt (the client chose to send it): %+v, %v", msg, err)
	}
}
