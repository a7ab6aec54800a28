// What a write or an edit call would make of a file, computed from the call's arguments and
// the file's current text the way pid's tools do it, so that "Review" can open VS Code's diff
// editor (current ↔ proposed) before the person answers. No `vscode` import: tests run this
// under plain node.

import { editReplacements, type Replacement } from './approval';

export type Proposal =
	| { ok: true; path: string; content: string; created: boolean }
	| { ok: false; path?: string; error: string };

/** occurrences returns where sub occurs in s, overlapping occurrences included. */
function occurrences(s: string, sub: string): number[] {
	const out: number[] = [];
	for (let at = 0; ; ) {
		const i = s.indexOf(sub, at);
		if (i < 0) {
			return out;
		}
		out.push(i);
		at = i + 1;
	}
}

/**
 * applyEdits applies edit's replacements to content as pid's edit tool does: each oldText must
 * occur exactly once in the content as it is (not as earlier edits left it); in a file with
 * CRLF line endings an oldText written with LF endings matches too and its newText gets CRLF;
 * edits must not overlap; and they must change something. It returns the new text, or why
 * the tool would refuse.
 */
export function applyEdits(content: string, edits: readonly Replacement[]): { ok: true; content: string } | { ok: false; error: string } {
	const crlf = content.includes('\r\n');
	const spans: { start: number; end: number; newText: string; idx: number }[] = [];
	const problems: string[] = [];
	edits.forEach((e, i) => {
		let { oldText, newText } = e;
		if (oldText === '') {
			problems.push(`edit ${i + 1}: the text to replace is empty`);
			return;
		}
		let starts = occurrences(content, oldText);
		if (starts.length === 0 && crlf && oldText.includes('\n') && !oldText.includes('\r\n')) {
			const alt = oldText.replace(/\n/g, '\r\n');
			if (occurrences(content, alt).length > 0) {
				oldText = alt;
				newText = newText.replace(/\n/g, '\r\n');
				starts = occurrences(content, oldText);
			}
		}
		if (starts.length === 0) {
			problems.push(`edit ${i + 1}: the text to replace is not in the file`);
		} else if (starts.length > 1) {
			problems.push(`edit ${i + 1}: the text to replace occurs ${starts.length} times`);
		} else {
			spans.push({ start: starts[0], end: starts[0] + oldText.length, newText, idx: i });
		}
	});
	spans.sort((a, b) => a.start - b.start);
	for (let j = 1; j < spans.length; j++) {
		if (spans[j].start < spans[j - 1].end) {
			problems.push(`edits ${Math.min(spans[j - 1].idx, spans[j].idx) + 1} and ${Math.max(spans[j - 1].idx, spans[j].idx) + 1} overlap`);
		}
	}
	if (problems.length > 0) {
		return { ok: false, error: `pid's edit would fail: ${problems.join('; ')}.` };
	}
	let out = '';
	let at = 0;
	for (const s of spans) {
		out += content.slice(at, s.start) + s.newText;
		at = s.end;
	}
	out += content.slice(at);
	if (out === content) {
		return { ok: false, error: "pid's edit would change nothing." };
	}
	return { ok: true, content: out };
}

/** Reports whether a call of toolName with args can be reviewed as a diff (a write or an edit with its arguments). */
export function reviewable(toolName: string, args: unknown): boolean {
	const a = args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
	if (!a || typeof a.path !== 'string' || a.path === '') {
		return false;
	}
	if (toolName === 'write') {
		return typeof a.content === 'string';
	}
	if (toolName === 'edit') {
		return editReplacements(a) !== undefined;
	}
	return false;
}

/**
 * proposedContent computes what a write or edit call would leave in its file. current is the
 * file's text as the editor has it now (unsaved changes included), undefined when the file
 * does not exist. A write proposes its content; an edit its replacements applied to current.
 * It fails, saying why, for other tools, missing arguments, and edits pid would refuse.
 */
export function proposedContent(toolName: string, args: unknown, current: string | undefined): Proposal {
	const a = args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
	const path = a && typeof a.path === 'string' ? a.path : undefined;
	if (!a || path === undefined || path === '') {
		return { ok: false, error: 'the call names no file' };
	}
	if (toolName === 'write') {
		if (typeof a.content !== 'string') {
			return { ok: false, path, error: 'the write has no content' };
		}
		return { ok: true, path, content: a.content, created: current === undefined };
	}
	if (toolName === 'edit') {
		const edits = editReplacements(a);
		if (!edits) {
			return { ok: false, path, error: 'the edit has no replacements' };
		}
		if (current === undefined) {
			return { ok: false, path, error: `pid's edit would fail: ${path} does not exist` };
		}
		const r = applyEdits(current, edits);
		return r.ok ? { ok: true, path, content: r.content, created: false } : { ok: false, path, error: r.error };
	}
	return { ok: false, path, error: `${toolName} calls have no diff to review` };
}
