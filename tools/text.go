// This file holds the text helpers the tools share: telling images and binary files from
// text, reading lines of any length, and cutting text down to a limit.

package tools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// sniffLen is how much of a file's start decides whether it is text.
const sniffLen = 8 << 10

// imageType returns the MIME type of an image format the models take (PNG, JPEG, GIF, WebP)
// when head starts with its magic bytes, and "" otherwise.
func imageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// binary reports whether head, the start of a file, looks binary: it holds a NUL byte or is
// not valid UTF-8. complete says head is the whole file; otherwise a rune cut at its end is
// not held against it.
func binary(head []byte, complete bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if !complete {
		for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
			if utf8.RuneStart(head[i]) {
				if !utf8.FullRune(head[i:]) {
					head = head[:i]
				}
				break
			}
		}
	}
	return !utf8.Valid(head)
}

// eachLine calls fn with every line of r, without its line ending ("\n" or "\r\n"), keeping
// at most keep bytes of each line; n is the line's full length in bytes. The last line
// needs no line ending. fn returns false to stop early. The slice is reused between calls.
func eachLine(r *bufio.Reader, keep int, fn func(line []byte, n int) bool) error {
	var cur []byte
	n := 0
	for {
		frag, isPrefix, err := r.ReadLine()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if room := keep - len(cur); room > 0 {
			cur = append(cur, frag[:min(room, len(frag))]...)
		}
		n += len(frag)
		if isPrefix {
			continue
		}
		if !fn(cur, n) {
			return nil
		}
		cur, n = cur[:0], 0
	}
}

// countLines returns how many lines the rest of r holds (a last line without a line
// ending counts), reading it in blocks and looking at ctx between them.
func countLines(ctx context.Context, r *bufio.Reader) (int, error) {
	n := 0
	var lastByte byte = '\n'
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		block, err := r.Peek(r.Size())
		if len(block) > 0 {
			n += bytes.Count(block, []byte{'\n'})
			lastByte = block[len(block)-1]
			r.Discard(len(block))
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return 0, err
		}
	}
	if lastByte != '\n' {
		n++
	}
	return n, nil
}

// plural returns "1 line", "2 lines", "2 matches".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "ch") || strings.HasSuffix(word, "s") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
