// The review of a prompt's changes hunk by hunk (docs/protocol.md, "Reviewing a prompt's
// changes"): changes/list, changes/undo and changes/keep for the controller, the file before
// the prompt (checkpoints/diff applied backwards to the file now) for the multi-file diff
// editor, the hunk under a line and the next one for the editor's Keep/Undo and keys, and the
// chat's "N files changed · Review" line from changesUpdate. No `vscode` import: extension.ts
// shows it (the multi-diff editor, the CodeLenses, the keys); tests drive it under node.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { friendlyError } from './errors';
import type { ChangeCount, ChangeHunk, ChangesListResult, ChangesUndoResult, ReviewFile } from './protocol';
import { ChatError, type ControllerState } from './state';

/** firstLine is the line (1-based) a hunk starts at in the file now: a deletion sits after its newStart. */
export function firstLine(h: ChangeHunk): number {
	return Math.max(h.newLines === 0 ? h.newStart + 1 : h.newStart, 1);
}

/** hunkAt is the hunk of file whose lines now hold line (1-based), or the deletion at it. */
export function hunkAt(file: ReviewFile | undefined, line: number): ChangeHunk | undefined {
	return file?.hunks.find((h) => {
		const from = firstLine(h);
		return line >= from && line <= from + Math.max(h.newLines - 1, 0);
	});
}

/** nextHunkLine is the line of the next (dir 1) or previous (dir -1) hunk from line, or undefined. */
export function nextHunkLine(file: ReviewFile | undefined, line: number, dir: 1 | -1): number | undefined {
	let best: number | undefined;
	for (const h of file?.hunks ?? []) {
		const l = firstLine(h);
		if (dir > 0 ? l > line && (best === undefined || l < best) : l < line && (best === undefined || l > best)) {
			best = l;
		}
	}
	return best;
}

/**
 * beforeText is a file's text before the prompt, from its text now and the unified diff from
 * before to now (checkpoints/diff), applied backwards; undefined when the diff is no text diff
 * (a binary file, content not kept).
 */
export function beforeText(now: string, diff: string): string | undefined {
	const cur = now === '' ? [] : now.split('\n');
	const trailing = now.endsWith('\n');
	if (trailing) {
		cur.pop();
	}
	const out: string[] = [];
	let at = 0; // index into cur
	let seen = false;
	let endsWithNewline = trailing;
	const lines = diff.split('\n');
	for (let i = 0; i < lines.length; ) {
		const m = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(lines[i]);
		if (!m) {
			i++;
			continue;
		}
		seen = true;
		const c = Number(m[1]);
		const upto = m[2] === '0' ? c : c - 1;
		while (at < upto) {
			out.push(cur[at++]);
		}
		i++;
		let last = '';
		for (; i < lines.length && !lines[i].startsWith('@@ '); i++) {
			const l = lines[i];
			if (l.startsWith(' ')) {
				out.push(l.slice(1));
				at++;
				last = ' ';
			} else if (l.startsWith('-')) {
				out.push(l.slice(1));
				last = '-';
			} else if (l.startsWith('+')) {
				at++;
				last = '+';
			} else if (l.startsWith('\\') && last !== '+') {
				endsWithNewline = false; // the before side's last line had no newline
			}
		}
	}
	if (!seen) {
		return undefined;
	}
	while (at < cur.length) {
		out.push(cur[at++]);
	}
	return out.length === 0 ? '' : out.join('\n') + (endsWithNewline ? '\n' : '');
}

/** summary is the chat's line of a changesUpdate: "2 files changed · Review", and each file's counts. */
export function summary(files: readonly ChangeCount[], folder?: string): { title: string; files: string[]; pending: number } {
	const pending = files.reduce((n, f) => n + (f.pending || 0), 0);
	const rel = (p: string) => (folder && p.startsWith(folder + path.sep) ? p.slice(folder.length + 1) : p);
	return {
		title: `${files.length} file${files.length === 1 ? '' : 's'} changed · Review`,
		files: files.map((f) => `${rel(f.path)} +${f.added} -${f.removed}${f.pending > 0 ? ` (${f.pending} pending)` : ''}`),
		pending,
	};
}

/** session returns the client and session to review, or throws a ChatError in words. */
function session(s: ControllerState) {
	const client = s.client;
	const sessionId = s.sessionId;
	if (sessionId === undefined || !client?.alive) {
		throw new ChatError('No session to review: ask pid something first.');
	}
	return { client, sessionId };
}

/** list is changes/list of the latest prompt (or checkpointId's); it keeps the answer as s.review. */
export async function list(s: ControllerState, checkpointId?: string): Promise<ChangesListResult> {
	const { client, sessionId } = session(s);
	try {
		const r = await client.listChanges(sessionId, checkpointId);
		s.review = { sessionId, ...r };
		return r;
	} catch (err) {
		const f = friendlyError(err, 'list the changes');
		throw new ChatError(f.message, f.actions);
	}
}

/** reviewed is the file of the review shown at absPath, if any. */
export function reviewed(s: ControllerState, absPath: string): ReviewFile | undefined {
	return s.review?.files.find((f) => f.path === absPath);
}

/** undo is changes/undo of hunks of a file (all of them when hunkIds is undefined), then the list again. */
export async function undo(s: ControllerState, absPath: string, hunkIds?: string[], force = false): Promise<ChangesUndoResult> {
	const { client, sessionId } = session(s);
	const cp = s.review?.checkpointId ?? (await list(s)).checkpointId;
	let r: ChangesUndoResult;
	try {
		r = await client.undoChanges(sessionId, cp, absPath, hunkIds, force);
	} catch (err) {
		const f = friendlyError(err, 'undo the change');
		throw new ChatError(f.message, f.actions);
	}
	await list(s, cp);
	return r;
}

/** keep is changes/keep of hunks of a file (all of them when hunkIds is undefined; every file's when absPath is), then the list again. */
export async function keep(s: ControllerState, absPath?: string, hunkIds?: string[]): Promise<string[]> {
	const { client, sessionId } = session(s);
	const cp = s.review?.checkpointId ?? (await list(s)).checkpointId;
	let kept: string[];
	try {
		kept = await client.keepChanges(sessionId, cp, absPath, hunkIds);
	} catch (err) {
		const f = friendlyError(err, 'keep the change');
		throw new ChatError(f.message, f.actions);
	}
	await list(s, cp);
	return kept;
}

/** before is the text of absPath before the review's prompt ("" for a file it added), or undefined when pid has no text diff of it. */
export async function before(s: ControllerState, absPath: string): Promise<string | undefined> {
	const { client, sessionId } = session(s);
	const cp = s.review?.checkpointId;
	if (!cp) {
		return undefined;
	}
	const files = await client.checkpointDiff(sessionId, cp);
	const f = files.find((d) => d.path === absPath);
	if (!f) {
		return undefined;
	}
	if (f.change === 'added') {
		return '';
	}
	let now = '';
	try {
		now = fs.readFileSync(absPath, 'utf8');
	} catch {
		now = '';
	}
	return beforeText(now, f.diff);
}
