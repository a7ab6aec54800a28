// Context a person adds to a prompt (a file, a selection, a file's problems) as chips the chat
// shows and as session/prompt content blocks pid gives the model; and the editor side of
// fs/read_text_file (a line range of a text). No `vscode` import: tests run this under plain
// node; extension.ts reads the editor and calls these.

import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PromptBlock } from './protocol';

export type ContextKind = 'file' | 'selection' | 'diagnostics';

/** One piece of context waiting to go with the next prompt. */
export interface ContextChip {
	id: string;
	kind: ContextKind;
	/** What the chip says: "a.ts", "a.ts:10-20", "Problems in a.ts (2)". */
	label: string;
	/** A longer description (the chip's tooltip). */
	title: string;
	block: PromptBlock;
}

/** The lines of a selection, 1-based and inclusive. */
export interface LineRange {
	start: number;
	end: number;
}

/** A problem VS Code reports in a file (a diagnostic). */
export interface Problem {
	/** 1-based. */
	line: number;
	/** 1-based. */
	column: number;
	severity: 'error' | 'warning' | 'info' | 'hint';
	message: string;
	source?: string;
	code?: string;
}

let nextId = 0;
function chipId(): string {
	nextId++;
	return `ctx${nextId}`;
}

/** relativeLabel names a file for people: relative to the workspace folder when inside it. */
export function relativeLabel(absPath: string, folder: string | undefined): string {
	if (folder) {
		const rel = path.relative(folder, absPath);
		if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) {
			return rel.split(path.sep).join('/');
		}
	}
	return absPath;
}

/**
 * fileChip is a whole file. A file without unsaved changes goes as a resource_link (pid's
 * tools read it when the model wants); one with unsaved changes (text given) as a resource
 * holding that text, since the disk has something else.
 */
export function fileChip(absPath: string, folder: string | undefined, unsavedText?: string, mimeType?: string): ContextChip {
	const uri = pathToFileURL(absPath).href;
	const label = relativeLabel(absPath, folder);
	if (unsavedText !== undefined) {
		return {
			id: chipId(),
			kind: 'file',
			label,
			title: `${label} as the editor has it (with unsaved changes)`,
			block: { type: 'resource', resource: mimeType ? { uri, text: unsavedText, mimeType } : { uri, text: unsavedText } },
		};
	}
	return { id: chipId(), kind: 'file', label, title: `${label} (pid reads it when it needs it)`, block: { type: 'resource_link', uri, name: label } };
}

/** selectionChip is a selection: a resource whose uri names the lines (#L10-L20) and whose text is the selected text. */
export function selectionChip(absPath: string, folder: string | undefined, range: LineRange, text: string, mimeType?: string): ContextChip {
	const lines = range.start === range.end ? `L${range.start}` : `L${range.start}-L${range.end}`;
	const uri = `${pathToFileURL(absPath).href}#${lines}`;
	const label = relativeLabel(absPath, folder);
	const where = range.start === range.end ? `${range.start}` : `${range.start}-${range.end}`;
	return {
		id: chipId(),
		kind: 'selection',
		label: `${label}:${where}`,
		title: `The selection in ${label}, line${range.start === range.end ? '' : 's'} ${where}`,
		block: { type: 'resource', resource: mimeType ? { uri, text, mimeType } : { uri, text } },
	};
}

/** problemsText writes a file's problems as pid's model reads them: one per line, with where and what. */
export function problemsText(label: string, problems: readonly Problem[]): string {
	const head = `VS Code reports ${problems.length} problem${problems.length === 1 ? '' : 's'} in ${label}:`;
	const lines = problems.map((p) => {
		const src = p.source ? ` (${p.source}${p.code ? ` ${p.code}` : ''})` : p.code ? ` (${p.code})` : '';
		return `- line ${p.line}, column ${p.column}: ${p.severity}: ${p.message.replace(/\s+/g, ' ').trim()}${src}`;
	});
	return [head, ...lines].join('\n');
}

/** diagnosticsChip is the problems VS Code reports in one file, as a text block. */
export function diagnosticsChip(absPath: string, folder: string | undefined, problems: readonly Problem[]): ContextChip {
	const label = relativeLabel(absPath, folder);
	return {
		id: chipId(),
		kind: 'diagnostics',
		label: `Problems in ${label} (${problems.length})`,
		title: problemsText(label, problems),
		block: { type: 'text', text: problemsText(label, problems) },
	};
}

/**
 * blocksAsText writes context blocks as plain text, for the messages that take text only
 * (session/steer and session/followUp): a resource as its uri and a fenced copy of its text,
 * a link as its uri, text as it is, an image as a note.
 */
export function blocksAsText(blocks: readonly PromptBlock[]): string {
	const parts: string[] = [];
	for (const b of blocks) {
		switch (b.type) {
			case 'text':
				parts.push(b.text);
				break;
			case 'resource_link':
				parts.push(`(file: ${b.uri})`);
				break;
			case 'resource': {
				const fence = b.resource.text.includes('```') ? '````' : '```';
				parts.push(`${b.resource.uri}:\n${fence}\n${b.resource.text.replace(/\n$/, '')}\n${fence}`);
				break;
			}
			case 'image':
				parts.push(`(an image, ${b.mimeType}, that cannot be sent with a queued message)`);
				break;
		}
	}
	return parts.join('\n\n');
}

/**
 * sliceLines answers fs/read_text_file's line and limit: from line (1-based; absent or < 1:
 * the first) at most limit lines (absent or < 1: all), line ends kept as they are.
 */
export function sliceLines(text: string, line?: number, limit?: number): string {
	const from = typeof line === 'number' && line > 1 ? Math.floor(line) : 1;
	const count = typeof limit === 'number' && limit > 0 ? Math.floor(limit) : undefined;
	if (from === 1 && count === undefined) {
		return text;
	}
	// Split keeping each line's end (\n or \r\n) with it.
	const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
	const slice = lines.slice(from - 1, count === undefined ? undefined : from - 1 + count);
	return slice.join('');
}
