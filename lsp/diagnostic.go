// Package lsp is pid's own language-server client: it starts the language servers the
// settings name ("lsp"), one per workspace folder and server, keeps them told of the files
// pid's tools change (didOpen, didChange, didSave), and collects the problems they report
// (textDocument/publishDiagnostics, or textDocument/diagnostic where a server offers it).
// The problems it collects have the shape of package problems, which the file tools and
// the editor's diagnostics share.
//
// The entry point is NewManager; Manager.Diagnostics syncs files and waits for their
// problems, Manager.Servers lists the servers, Manager.Close stops them.
//
// This file turns a server's diagnostics into problems.Diagnostic, and paths into file:
// URIs and back.
package lsp

import (
	"net/url"
	"path/filepath"

	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/problems"
)

// fromProtocol turns a server's diagnostics for path into Diagnostics (a severity left out
// counts as an error, as most clients show it).
func fromProtocol(path string, ds []protocol.Diagnostic) []problems.Diagnostic {
	out := make([]problems.Diagnostic, 0, len(ds))
	for _, d := range ds {
		sev := int(d.Severity)
		if sev < 1 || sev > 4 {
			sev = 1
		}
		out = append(out, problems.Diagnostic{Path: path, Range: d.Range, Severity: sev, Message: d.Message, Source: d.Source, Code: d.Code})
	}
	return out
}

// FileURI returns the file: URI of an absolute path.
func FileURI(path string) protocol.DocumentURI {
	return protocol.DocumentURI((&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String())
}

// PathOf returns the path of a file: URI ("" for another scheme).
func PathOf(u protocol.DocumentURI) string {
	parsed, err := url.Parse(string(u))
	if err != nil || parsed.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(parsed.Path)
}
