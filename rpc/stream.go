// This file is the native face's framing, its rpcconn.Codec: internal/lspframe's Stream (LSP
// framing, shared with the language servers' connections in package lsp), which reads
// `Content-Length` frames, answers every frame that holds no message (-32700, -32600) and
// reads on.

package rpc

import "github.com/pid-agent/pid/internal/lspframe"

// newFrameStream returns the native face's codec reading r.
var newFrameStream = lspframe.NewStream

// truncate shortens s to n bytes and "...", for quoting a value in a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
