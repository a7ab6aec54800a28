// This file turns HTML into Markdown (github.com/JohannesKaufmann/html-to-markdown v2, with
// its tables) or into plain text.

package webfetch

import (
	"context"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToMarkdown converts an HTML document to Markdown, links and images made absolute
// against base (the page's URL). Scripts, styles, the head and forms' inputs are dropped.
func htmlToMarkdown(ctx context.Context, doc, baseURL string) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
	md, err := conv.ConvertString(doc, converter.WithDomain(baseURL), converter.WithContext(ctx))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(md) + "\n", nil
}

// htmlToText returns an HTML document's text: the text of the body, a line break after
// each block, scripts, styles and the head left out, runs of blank lines collapsed.
func htmlToText(doc string) (string, error) {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Head, atom.Noscript, atom.Template, atom.Iframe, atom.Svg:
				return
			case atom.Br:
				b.WriteString("\n")
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		switch {
		case n.Type != html.ElementNode:
		case block(n.DataAtom):
			b.WriteString("\n")
		case n.DataAtom == atom.Td || n.DataAtom == atom.Th:
			b.WriteString(" ")
		}
	}
	walk(root)
	// Collapse spaces within lines and runs of empty lines.
	var out strings.Builder
	blank := 0
	for _, line := range strings.Split(b.String(), "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			blank++
			continue
		}
		if out.Len() > 0 {
			out.WriteString("\n")
			if blank > 0 {
				out.WriteString("\n")
			}
		}
		blank = 0
		out.WriteString(line)
	}
	return out.String() + "\n", nil
}

// block reports whether an element ends a line of text.
func block(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Li, atom.Ul, atom.Ol, atom.Tr, atom.Table, atom.Pre, atom.Blockquote,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Section, atom.Article, atom.Header,
		atom.Footer, atom.Nav, atom.Main, atom.Aside, atom.Dd, atom.Dt, atom.Dl, atom.Figure, atom.Hr,
		atom.Form, atom.Title, atom.Details, atom.Summary, atom.Caption:
		return true
	}
	return false
}
