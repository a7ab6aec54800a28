// Markdown from the model as HTML the chat view can show safely: markdown-it with raw HTML
// turned off (a tag the model writes is shown as text), links only to http(s) and mailto,
// images shown as their text (the view loads nothing remote), and code blocks marked so that
// the view can add a Copy button. No `vscode` import: tests run this under plain node.

import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });

/** Reports whether a link target may be a link in the chat: web pages and mail only. */
export function safeLink(url: string): boolean {
	const u = url.trim().toLowerCase();
	return u.startsWith('https://') || u.startsWith('http://') || u.startsWith('mailto:');
}

md.validateLink = safeLink;

const escapeHtml = md.utils.escapeHtml;

// An image would be loaded from wherever the model says (the view's policy blocks it anyway):
// show its description and address as text instead.
md.renderer.rules.image = (tokens, idx) => {
	const t = tokens[idx];
	const alt = t.children ? t.children.map((c) => c.content).join('') : t.content;
	const src = t.attrGet('src') ?? '';
	return `<span class="md-image">[image: ${escapeHtml(alt || 'no description')}${src ? ` — ${escapeHtml(src)}` : ''}]</span>`;
};

// Links open outside the view (the extension asks VS Code to open them): the address is kept in
// data-href, and the title shows it.
md.renderer.rules.link_open = (tokens, idx) => {
	const href = tokens[idx].attrGet('href') ?? '';
	return `<a href="#" data-href="${escapeHtml(href)}" title="${escapeHtml(href)}">`;
};

md.renderer.rules.fence = (tokens, idx) => {
	const t = tokens[idx];
	const lang = (t.info ?? '').trim().split(/\s+/)[0] ?? '';
	const cls = lang && /^[A-Za-z0-9_+#.-]{1,40}$/.test(lang) ? ` class="language-${lang}"` : '';
	const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : '';
	return `<div class="code-block">${label}<pre><code${cls}>${escapeHtml(t.content)}</code></pre></div>\n`;
};

md.renderer.rules.code_block = (tokens, idx) => `<div class="code-block"><pre><code>${escapeHtml(tokens[idx].content)}</code></pre></div>\n`;

/**
 * renderMarkdown renders the model's markdown as HTML without any HTML of the model's own:
 * every tag it writes comes out as text, links to anything but http(s) and mailto stay text,
 * images become text. While an answer streams, an unclosed code fence renders as a code block
 * up to the end, as it will once closed.
 */
export function renderMarkdown(text: string): string {
	return md.render(String(text ?? ''));
}

/** escapeText escapes text for HTML (for plain text such as the person's own messages). */
export function escapeText(text: string): string {
	return escapeHtml(String(text ?? ''));
}
