// Saved sessions for people: a session/list entry as a pick (title, folder, when, how many
// messages) and a failed session/load in words. No `vscode` import: tests run this under
// plain node.

import * as path from 'node:path';
import { typedText } from './chatText';
import { INVALID_PARAMS, REQUEST_FAILED, errorCode, errorText } from './client';
import type { SessionSummary } from './protocol';

/** How many sessions "pid: Resume Session" lists at most (session/list pages of 50). */
export const MAX_LISTED = 500;

export interface SessionPick {
	/** The title: the session's first user text (one line). */
	label: string;
	/** The session's folder (the home folder as ~). */
	description: string;
	/** When it was last used, relative ("3 hours ago"), and how many messages it holds. */
	detail: string;
	sessionId: string;
	summary: SessionSummary;
}

const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/**
 * relativeTime says how long before now the ISO time `iso` was: "just now", "5 minutes ago",
 * "3 hours ago", "yesterday", "2 weeks ago", "last year". A time in the future (another
 * machine's clock) is "just now"; a time that cannot be read is returned as it is.
 */
export function relativeTime(iso: string, now: Date): string {
	const t = Date.parse(iso);
	if (Number.isNaN(t)) {
		return String(iso);
	}
	const s = Math.floor((now.getTime() - t) / 1000);
	if (s < 60) {
		return 'just now';
	}
	const min = Math.floor(s / 60);
	if (min < 60) {
		return rtf.format(-min, 'minute');
	}
	const h = Math.floor(min / 60);
	if (h < 24) {
		return rtf.format(-h, 'hour');
	}
	const d = Math.floor(h / 24);
	if (d < 7) {
		return rtf.format(-d, 'day');
	}
	if (d < 30) {
		return rtf.format(-Math.floor(d / 7), 'week');
	}
	if (d < 365) {
		return rtf.format(-Math.floor(d / 30), 'month');
	}
	return rtf.format(-Math.floor(d / 365), 'year');
}

/** shortFolder writes a folder under home as ~/... */
export function shortFolder(folder: string, home?: string): string {
	if (home && home !== '/' && (folder === home || folder.startsWith(home.endsWith('/') ? home : `${home}/`))) {
		return `~${folder.slice(home.replace(/\/$/, '').length)}`;
	}
	return folder;
}

/** insideAny reports whether folder is one of folders or inside one of them (paths compared as written). */
export function insideAny(folder: string, folders: readonly string[]): boolean {
	return folders.some((f) => {
		const rel = path.relative(f, folder);
		return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
	});
}

/**
 * sessionPick is one session of session/list as a QuickPick item. current is the session
 * the controller prompts now (marked so); folders, when given, are this window's folders: a
 * session of another folder is marked, since pid loads a session only in a window that has
 * its folder. Titles are the person's own text: shown on one line.
 */
export function sessionPick(s: SessionSummary, now: Date, opts: { home?: string; current?: string; folders?: readonly string[] } = {}): SessionPick {
	const title = typedText(String(s.title ?? '')).replace(/\s+/g, ' ').trim();
	const cwd = String(s.cwd ?? '');
	const n = typeof s.messageCount === 'number' ? s.messageCount : 0;
	const when = relativeTime(s.updatedAt, now);
	const current = opts.current !== undefined && opts.current === s.sessionId ? ' · the current session' : '';
	const elsewhere = opts.folders && opts.folders.length > 0 && !insideAny(cwd, opts.folders) ? ' · another folder: open it in this window to resume' : '';
	return {
		label: title === '' ? '(no text)' : title,
		description: shortFolder(cwd, opts.home),
		detail: `${when} · ${n} message${n === 1 ? '' : 's'}${current}${elsewhere}`,
		sessionId: s.sessionId,
		summary: s,
	};
}

/** ResumeError is a failed "pid: Resume Session", with what to do in its message. */
export class ResumeError extends Error {
	constructor(
		message: string,
		/** pid's JSON-RPC error code, when pid answered with an error. */
		readonly code?: number,
	) {
		super(message);
	}
}

/**
 * loadErrorText says in words why session/load failed, and what to do. folder, when known, is
 * the session's folder (from the list).
 */
export function loadErrorText(err: unknown, sessionId: string, folder?: string): string {
	const code = errorCode(err);
	const said = errorText(err);
	if (code === REQUEST_FAILED && /another pid|in use/i.test(said)) {
		return `the session ${sessionId} is open in another pid (another editor window, or a pid still running): close it there, or quit that editor, then resume it again. pid says: ${said}`;
	}
	if (code === INVALID_PARAMS && /outside the workspace folders/.test(said)) {
		return `the session ${sessionId} worked in ${folder ?? 'a folder'} that is not a folder of this window, and pid's tools reach only this window's folders: open that folder (or add it to the workspace), then resume it again. pid says: ${said}`;
	}
	if (code === INVALID_PARAMS && /unknown session|no saved session/.test(said)) {
		return `pid has no saved session ${sessionId} any more (deleted since the list was made?): pick another one. pid says: ${said}`;
	}
	return `pid could not load the session ${sessionId}: ${said}`;
}
