// Rewind (docs/protocol.md, checkpoints/list, checkpoints/diff, session/rewind): which
// checkpoint each of the person's messages in the chat goes back to, the diff shown before a
// rewind, the choices, and the report after it. No `vscode` import: tests run this under node.

import { typedText } from './chatText';
import { relativeLabel } from './context';
import type { Checkpoint, CheckpointFileDiff, RewindRestore, RewindResult } from './protocol';

/** How pid names a rewind's own checkpoint (the state it replaced): it belongs to no message. */
export const SAFETY_PREFIX = 'Before rewinding to: ';

/** pid keeps a checkpoint's prompt to its first 200 characters (code points). */
export const PROMPT_CHARS = 200;

function cut(text: string): string {
	const cps = [...text];
	return cps.length > PROMPT_CHARS ? cps.slice(0, PROMPT_CHARS).join('') : text;
}

/**
 * promptMatches reports whether a checkpoint's prompt is that of a message whose text the
 * chat shows: the same text (cut as pid cuts it), or the text followed by the context pid
 * got with it (a selection, a file: after a newline).
 */
export function promptMatches(prompt: string, text: string): boolean {
	if (typeof prompt !== 'string' || typeof text !== 'string') {
		return false;
	}
	const p = prompt.replace(/\r\n/g, '\n');
	const t = text.replace(/\r\n/g, '\n');
	if (p === cut(t)) {
		return true;
	}
	return t !== '' && p.startsWith(`${t}\n`);
}

/** timeOf reads a timestamp (RFC 3339 text, or milliseconds) as milliseconds; undefined when it is neither. */
export function timeOf(v: unknown): number | undefined {
	if (typeof v === 'number' && Number.isFinite(v)) {
		return v;
	}
	if (typeof v !== 'string' || v === '') {
		return undefined;
	}
	// Date.parse takes milliseconds: a finer fraction is cut (never rounded up past the message).
	const ms = Date.parse(v.replace(/(\.\d{3})\d+/, '$1'));
	return Number.isNaN(ms) ? undefined : ms;
}

/** A message of the person's as the chat has it: its text and, when pid said, when it was added. */
export interface PromptMessage {
	text: string;
	/** Milliseconds (the user message's timestamp). */
	at?: number;
}

/** How far from its message's time a prompt's checkpoint may be taken (pid takes it as the prompt starts). */
export const NEAR_MS = 60_000;

/**
 * mapCheckpoints finds each message's checkpoint: the one pid took as its prompt started.
 * Checkpoints are one per session/prompt, oldest first, and stay listed after a rewind of the
 * conversation took their messages out (a rewind's own are listed too, and belong to no
 * message); messages sent while pid worked (steer, follow-up) have none. So the messages are
 * matched from the newest back, each to a checkpoint older than the ones matched after it,
 * whose prompt is the message's text: when the message's time is known, the one taken
 * nearest to it (within NEAR_MS), else the newest. undefined: no checkpoint.
 */
export function mapCheckpoints(messages: readonly PromptMessage[], checkpoints: readonly Checkpoint[]): (Checkpoint | undefined)[] {
	const cps = checkpoints.filter((c) => c && typeof c.id === 'string' && typeof c.prompt === 'string' && !c.prompt.startsWith(SAFETY_PREFIX));
	const out: (Checkpoint | undefined)[] = messages.map(() => undefined);
	let limit = cps.length;
	for (let i = messages.length - 1; i >= 0 && limit > 0; i--) {
		const m = messages[i];
		let best = -1;
		let bestDistance = Infinity;
		for (let j = limit - 1; j >= 0; j--) {
			const c = cps[j];
			if (!promptMatches(c.prompt, m.text)) {
				continue;
			}
			const t = timeOf(c.timestamp);
			if (m.at === undefined || t === undefined) {
				if (best < 0) {
					best = j; // the newest
				}
				if (m.at === undefined) {
					break;
				}
				continue;
			}
			const d = Math.abs(t - m.at);
			if (d <= NEAR_MS && d < bestDistance) {
				best = j;
				bestDistance = d;
			}
		}
		if (best >= 0) {
			out[i] = cps[best];
			limit = best;
		}
	}
	return out;
}

const CHANGE: Record<string, string> = { added: 'added', modified: 'modified', deleted: 'deleted' };

/** short is a prompt in one line for titles: its first line (a command of this window's as typed), at most 60 characters. */
export function short(prompt: string): string {
	const first = typedText(String(prompt ?? '')).split('\n')[0].replace(/\s+/g, ' ').trim();
	return first.length > 60 ? `${first.slice(0, 59)}…` : first || '(no text)';
}

/**
 * diffDocument is the text shown before a rewind: what it would take back (every file
 * changed since before the message, with its unified diff), as a diff document.
 */
export function diffDocument(cp: Checkpoint, files: readonly CheckpointFileDiff[], folder?: string): string {
	const lines = [`# Rewind to before "${short(cp.prompt)}"`, `# checkpoint ${cp.id}, ${cp.timestamp}`];
	if (cp.incomplete) {
		lines.push(`# Some changes since cannot be taken back: ${cp.reason ?? 'pid did not say why'}`);
	}
	if (files.length === 0) {
		lines.push('#', '# No file has changed since this message: rewinding the files would change nothing.');
		return `${lines.join('\n')}\n`;
	}
	lines.push(`# ${files.length} file${files.length === 1 ? '' : 's'} changed since (restoring the files puts ${files.length === 1 ? 'it' : 'them'} back as ${files.length === 1 ? 'it was' : 'they were'}):`);
	for (const f of files) {
		lines.push(`#   ${CHANGE[f.change] ?? f.change} ${relativeLabel(f.path, folder)}${f.skip ? `: LEFT AS IT IS (${skipReason(f.skip)}; "Restore them anyway" in the chat's report puts it back too)` : ''}`);
	}
	lines.push('');
	for (const f of files) {
		const d = String(f.diff ?? '');
		lines.push(d === '' ? `# ${relativeLabel(f.path, folder)}: ${CHANGE[f.change] ?? f.change} (no text diff: a binary file, or only its mode changed)` : d.replace(/\n$/, ''));
	}
	return `${lines.join('\n')}\n`;
}

/** The choices a rewind offers, in the picker's order. */
export const RESTORE_CHOICES: readonly { restore: RewindRestore; label: string; detail: string }[] = [
	{ restore: 'both', label: 'Files and conversation', detail: 'Put the files back as they were before this message, and go on from just before it (the messages from it on leave the chat).' },
	{ restore: 'files', label: 'Files only', detail: 'Put the files back as they were before this message; the conversation stays as it is.' },
	{ restore: 'conversation', label: 'Conversation only', detail: 'Go on from just before this message; the files stay as they are now.' },
];

/**
 * skipped says, before the choice, which files a rewind of the files would leave as they are
 * and why (checkpoints/diff's skip): one line, or undefined when it restores them all.
 */
export function skipped(files: readonly CheckpointFileDiff[], folder?: string): string | undefined {
	const left = files.filter((f) => f.skip);
	if (left.length === 0) {
		return undefined;
	}
	return `${left.length === 1 ? 'Left as it is' : `${left.length} left as they are`}: ${left.map((f) => `${relativeLabel(f.path, folder)} (${skipReason(f.skip ?? '')})`).join('; ')}`;
}

/** skipReason is why pid left a file as it was, in the chat's words (force is the "Restore them anyway" button here). */
export function skipReason(reason: string): string {
	return String(reason ?? '').replace(/\s*\(pass force to restore it anyway\)/, '').trim() || 'pid did not say why';
}

/** rewindReport says what a rewind did, in one paragraph for the chat (skipped files with why). */
export function rewindReport(prompt: string, restore: RewindRestore, r: RewindResult, folder?: string): { text: string; level: 'info' | 'warning' } {
	const names = (ps: readonly string[]) => ps.map((p) => relativeLabel(p, folder)).join(', ');
	const parts: string[] = [];
	if (restore !== 'conversation') {
		if (r.restored.length > 0) {
			parts.push(`restored ${names(r.restored)}`);
		}
		if (r.removed.length > 0) {
			parts.push(`removed ${names(r.removed)}`);
		}
		if (r.restored.length === 0 && r.removed.length === 0 && r.skipped.length === 0) {
			parts.push('no file needed restoring');
		}
	}
	if (restore !== 'files') {
		parts.push('the conversation goes on from just before it');
	}
	let text = `Rewound to before "${short(prompt)}": ${parts.join('; ')}.`;
	if (r.skipped.length > 0) {
		text += ` Left as ${r.skipped.length === 1 ? 'it is' : 'they are'}: ${r.skipped.map((s) => `${relativeLabel(s.path, folder)} (${skipReason(s.reason)})`).join('; ')}.`;
	}
	return { text, level: r.skipped.length > 0 ? 'warning' : 'info' };
}
