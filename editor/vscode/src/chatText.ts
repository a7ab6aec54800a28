// How the chat names things, without VS Code: a tool call in one line, what an MCP server
// claims about its tool, a plan's title, the problems after an edit, the context meter, a
// file's size, the instruction files, pid's built-in commands; and an item as the view
// receives it (its markdown rendered). chat.ts (ChatModel) uses these and re-exports them.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { relativeLabel } from './context';
import { renderMarkdown } from './markdown';
import { LOCAL_COMMANDS } from './skills';
import type { CommandInfo, Diagnostic, InstructionFile, ToolAnnotations } from './protocol';
import type { ChatItem, CommandView, InstructionFileView, ItemView, ProblemView } from './webviewProtocol';

/** The built-in commands of pid (docs/protocol.md), offered by the `/` completion before a session lists its own. */
export const BUILTIN_COMMANDS: CommandView[] = [
	{ name: 'compact', description: 'Compact the conversation now', hint: 'focus' },
	{ name: 'init', description: 'Write AGENTS.md for this repository' },
	{ name: 'review', description: 'Review the uncommitted changes (or those since base)', hint: 'base' },
	{ name: 'plan', description: 'Show the plan' },
	{ name: 'mode', description: 'Switch the mode, or list the modes', hint: 'NAME' },
	{ name: 'model', description: 'Switch the model, or list the models', hint: 'PROVIDER/ID' },
	{ name: 'mcp', description: "The MCP servers' status" },
	{ name: 'rewind', description: 'Files and conversation back to before the previous prompt' },
	{ name: 'help', description: 'List the commands' },
	...LOCAL_COMMANDS,
];

/** commandViews turns commands/list's entries into the completion's. */
export function commandViews(list: readonly CommandInfo[]): CommandView[] {
	return list
		.filter((c) => c && typeof c.name === 'string' && c.name !== '')
		.map((c) => ({ name: c.name, description: typeof c.description === 'string' ? c.description : '', ...(c.input && typeof c.input.hint === 'string' ? { hint: c.input.hint } : {}) }));
}

/** problemViews turns a tool result's details.diagnostics into the card's problems (errors first, then by position). */
export function problemViews(diags: unknown, folder?: string): ProblemView[] | undefined {
	if (!Array.isArray(diags)) {
		return undefined;
	}
	const sev = ['error', 'error', 'warning', 'info', 'hint'] as const;
	const out: ProblemView[] = [];
	for (const d of diags as Diagnostic[]) {
		const start = d?.range?.start;
		if (!d || typeof d.message !== 'string' || typeof start?.line !== 'number') {
			continue;
		}
		out.push({
			label: typeof d.path === 'string' ? relativeLabel(d.path, folder) : '',
			line: start.line + 1,
			column: (typeof start.character === 'number' ? start.character : 0) + 1,
			severity: sev[d.severity] ?? 'error',
			message: d.message.replace(/\s*\n\s*/g, ' '),
			...(typeof d.source === 'string' && d.source !== '' ? { source: d.source } : {}),
		});
	}
	const rank = { error: 0, warning: 1, info: 2, hint: 3 };
	return out.sort((a, b) => rank[a.severity] - rank[b.severity] || a.line - b.line || a.column - b.column);
}

/** usageText is the context meter in words: `48.2k / 200k tokens (24%) · $0.19`. */
export function usageText(u: { used: number; size: number; cost?: { amount: number; currency: string } }): string {
	const k = (n: number) => (n >= 1_000_000 ? `${+(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${+(n / 1000).toFixed(1)}k` : String(Math.round(n)));
	const pct = u.size > 0 ? Math.round((100 * u.used) / u.size) : 0;
	const cost = u.cost && typeof u.cost.amount === 'number' ? ` · ${u.cost.currency === 'USD' ? '$' : `${u.cost.currency} `}${u.cost.amount < 0.01 && u.cost.amount > 0 ? u.cost.amount.toFixed(4) : u.cost.amount.toFixed(2)}` : '';
	return `${k(u.used)} / ${k(u.size)} tokens (${pct}%)${cost}`;
}


/** viewOf renders an item for the view: an answer's markdown, a plan's on its tool card, and a command's output, as safe HTML. */
export function viewOf(item: ChatItem): ItemView {
	if (item.kind === 'assistant') {
		return { ...item, html: renderMarkdown(item.text) };
	}
	if (item.kind === 'tool' && item.plan !== undefined) {
		return { ...item, html: renderMarkdown(item.plan) };
	}
	if (item.kind === 'command') {
		// A command's output is Markdown (/help's `code`, /plan's list).
		return { ...item, html: renderMarkdown(item.text) };
	}
	return item;
}

/** sizeText is a file's size for people: bytes below 1 KB, else KB or MB (of 1024) with one decimal, none when whole or from 10 on. */
export function sizeText(bytes: number): string {
	if (!Number.isFinite(bytes) || bytes < 1024) {
		const n = Number.isFinite(bytes) ? Math.max(0, Math.round(bytes)) : 0;
		return `${n} byte${n === 1 ? '' : 's'}`;
	}
	const [v, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KB'] : [bytes / (1024 * 1024), 'MB'];
	const s = v >= 10 ? String(Math.round(v)) : v.toFixed(1).replace(/\.0$/, '');
	return `${s} ${unit}`;
}

/**
 * instructionViews names session/new's or session/load's instruction files for the chat:
 * relative to the outermost of folders (the workspace folders, the session's folder) that
 * holds the file, their real paths included (pid gives real paths); else absolute. Entries
 * without a path are dropped.
 */
export function instructionViews(files: readonly InstructionFile[] | null | undefined, folders: readonly (string | undefined)[] = []): InstructionFileView[] {
	const roots = new Set<string>();
	for (const f of folders) {
		if (f && path.isAbsolute(f)) {
			roots.add(f);
			try {
				roots.add(fs.realpathSync(f));
			} catch {
				// A folder that is gone: its path as given.
			}
		}
	}
	const out: InstructionFileView[] = [];
	for (const f of Array.isArray(files) ? files : []) {
		if (!f || typeof f.path !== 'string' || f.path === '') {
			continue;
		}
		let label = f.path;
		for (const root of roots) {
			const l = relativeLabel(f.path, root);
			if (l !== f.path && (label === f.path || l.length > label.length)) {
				label = l;
			}
		}
		out.push({ path: f.path, label, size: sizeText(typeof f.bytes === 'number' ? f.bytes : 0), truncated: f.truncated === true });
	}
	return out;
}

/** instructionsLine is the instruction files in one line: "Instructions: AGENTS.md (1.2 KB), sub/CLAUDE.md (40 KB, cut to 32 KiB)". */
export function instructionsLine(files: readonly InstructionFileView[]): string {
	return `Instructions: ${files.map((f) => `${f.label} (${f.size}${f.truncated ? ', cut to 32 KiB' : ''})`).join(', ')}`;
}

/** planTitle is a plan's card title: its first line without heading marks, short. */
export function planTitle(plan: string): string {
	const first = plan.split('\n').map((l) => l.replace(/^\s*#+\s*/, '').trim()).find((l) => l !== '') ?? '';
	const line = first.length > 80 ? `${first.slice(0, 80)}…` : first;
	return line === '' ? 'the plan' : `the plan: ${line}`;
}

/** lastLine returns the last non-empty line of a text, cut to 300 characters. */
export function lastLine(text: string): string {
	const ls = text.split(/\r?\n/).filter((l) => l.trim() !== '');
	const l = ls.length > 0 ? ls[ls.length - 1] : '';
	return l.length > 300 ? `${l.slice(0, 300)}…` : l;
}

export function obj(v: unknown): Record<string, unknown> | undefined {
	return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** toolTitle is a call in one line: bash's command, a file tool's path, a search's pattern, else its short arguments. */
export function toolTitle(toolName: string, args: unknown, folder?: string): string {
	const a = obj(args) ?? {};
	const s = (k: string) => (typeof a[k] === 'string' ? (a[k] as string) : undefined);
	const one = (t: string) => {
		const first = t.split('\n')[0];
		return first.length > 200 ? `${first.slice(0, 200)}…` : first + (t.includes('\n') ? ' …' : '');
	};
	if (toolName === 'bash' && s('command') !== undefined) {
		return `$ ${one(s('command') as string)}`;
	}
	const p = s('path');
	if (p !== undefined && ['read', 'write', 'edit', 'ls'].includes(toolName)) {
		return folder && path.isAbsolute(p) ? relativeLabel(p, folder) : p;
	}
	if ((toolName === 'grep' || toolName === 'find') && s('pattern') !== undefined) {
		return `${one(s('pattern') as string)}${p ? ` in ${p}` : ''}`;
	}
	if (toolName === 'task' && s('description') !== undefined) {
		return `${one(s('description') as string)}${s('agent') ? ` (${s('agent')})` : ''}`;
	}
	if (toolName === 'todo_write' && Array.isArray(a.todos)) {
		const n = a.todos.length;
		return n === 0 ? 'clear the plan' : `the plan: ${n} step${n === 1 ? '' : 's'}`;
	}
	if (toolName === 'tool_search' && s('query') !== undefined) {
		return one(s('query') as string);
	}
	const parts: string[] = [];
	for (const [k, v] of Object.entries(a)) {
		if (typeof v === 'string') {
			parts.push(`${k}: ${one(v).slice(0, 60)}`);
		} else if (typeof v === 'number' || typeof v === 'boolean') {
			parts.push(`${k}: ${v}`);
		}
		if (parts.length === 3) {
			break;
		}
	}
	return parts.join(', ');
}

/** claimsText says what an MCP server claims about its tool (its annotations), or undefined when it claims nothing. */
export function claimsText(a: ToolAnnotations | undefined): string | undefined {
	const o = obj(a);
	if (!o) {
		return undefined;
	}
	const said: string[] = [];
	if (o.readOnlyHint === true) said.push('only reads');
	if (o.readOnlyHint === false) said.push('may change things');
	if (o.destructiveHint === true) said.push('may delete or overwrite');
	if (o.destructiveHint === false) said.push('does not delete or overwrite');
	if (o.idempotentHint === true) said.push('is safe to repeat');
	if (o.openWorldHint === true) said.push('reaches outside services');
	if (o.openWorldHint === false) said.push('stays within its own data');
	const title = typeof o.title === 'string' && o.title.trim() !== '' ? `"${o.title.trim()}"` : undefined;
	if (said.length === 0 && !title) {
		return undefined;
	}
	const what = said.length > 0 ? `it ${said.join(', ')}` : '';
	return `The tool's server claims${title ? ` it is ${title}` : ''}${title && what ? ' and' : ''}${what ? ` ${what}` : ''} (pid does not check this).`;
}

/**
 * typedCommands maps the prompt pid made of a `/NAME args` command (the template filled in)
 * to what the person typed, for the commands typed in this window: a redrawn or reloaded
 * conversation, the session's list and the rewind pickers show them as typed (pid's
 * transcript keeps the prompt it made). At most MAX_TYPED, the oldest dropped first.
 */
export const typedCommands = new (class extends Map<string, string> {
	override set(sent: string, typed: string): this {
		this.delete(sent);
		super.set(sent, typed);
		if (this.size > MAX_TYPED) {
			this.delete(this.keys().next().value as string);
		}
		return this;
	}
})();

const MAX_TYPED = 500;

/**
 * typedText is a prompt as the person typed it: a command of this window's as typed (`/NAME
 * args`), else as it is. sent may be cut (a checkpoint's prompt, a session's title): the
 * prompt it begins is looked for then.
 */
export function typedText(sent: string): string {
	const typed = typedCommands.get(sent);
	if (typed !== undefined || sent.length < 80) {
		return typed ?? sent;
	}
	for (const [full, t] of typedCommands) {
		if (full.startsWith(sent)) {
			return t;
		}
	}
	return sent;
}
