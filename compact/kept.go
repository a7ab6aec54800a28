// This file exports what a session needs to keep word for word after a compaction: the
// files the compacted messages read and changed.

package compact

import (
	"strings"

	"github.com/pid-agent/pid/llm"
)

// FilesTouched returns the paths the read tool read and the write and edit tools changed in
// msgs, each list sorted, counting only calls a result answered without error; a changed
// file is not listed as read. It is what a summary request lists in <files-touched>.
func FilesTouched(msgs []llm.Message) (read, modified []string) { return filesTouched(msgs) }

// WriteFileList writes "label:" and one "- path" line per path (at most 100, then how many
// more), each path on one line with tags escaped: the summary request's file lists, and the
// ones kept word for word after a summary (session's plan.go).
func WriteFileList(b *strings.Builder, label string, paths []string) { writeFileList(b, label, paths) }
