// Saved sessions for one conversation: listing them (session/list, page by page), loading one
// (session/load: the transcript into the log and the chat, the session it replaces closed),
// Resume after pid stopped, the offer of the folder's last session in an empty chat, and the
// instruction files a session's model gets. The state is state.ts's. No `vscode` import.

import * as path from 'node:path';
import { instructionsLine } from './chat';
import { errorCode, errorText, type PidClient } from './client';
import { refreshCheckpoints } from './checkpoints';
import { refreshCommands, showModel, showModes } from './picks';
import { contentText, type InstructionFile, type SessionLoadResult, type SessionSummary } from './protocol';
import { transcriptEntries } from './run';
import { MAX_LISTED, ResumeError, loadErrorText, relativeTime } from './sessions';
import { folderPath, realPath, type ControllerState } from './state';

/**
 * listSessions lists the saved sessions (session/list), newest first, following nextCursor
 * until max sessions (default MAX_LISTED) or the last page; onPage gets each page as it
 * arrives (a picker can show the first while the rest load). It starts pid if needed.
 * `more` says that sessions beyond max were left out. It throws (with pid's words) when
 * pid cannot list them, e.g. when its state folder is unusable.
 */
export async function listSessions(s: ControllerState, opts: { max?: number; cwd?: string; onPage?: (page: SessionSummary[]) => void } = {}): Promise<{ sessions: SessionSummary[]; more: boolean }> {
	const max = opts.max ?? MAX_LISTED;
	const client = await s.daemon.ensureClient();
	if (!client.savesSessions) {
		throw new Error('this pid does not keep saved sessions (its initialize result does not declare them): update pid.');
	}
	const sessions: SessionSummary[] = [];
	let cursor: string | undefined;
	const seen = new Set<string>();
	for (;;) {
		const params: { cursor?: string; cwd?: string } = {};
		if (cursor !== undefined) {
			params.cursor = cursor;
		}
		if (opts.cwd) {
			params.cwd = opts.cwd;
		}
		const page = await client.listSessions(params);
		const fresh = page.sessions.slice(0, max - sessions.length);
		sessions.push(...fresh);
		if (fresh.length > 0) {
			opts.onPage?.(fresh);
		}
		if (fresh.length < page.sessions.length) {
			return { sessions, more: true };
		}
		// A cursor pid gave twice would loop forever: stop there.
		if (page.nextCursor === undefined || seen.has(page.nextCursor)) {
			return { sessions, more: false };
		}
		if (sessions.length >= max) {
			return { sessions, more: true };
		}
		seen.add(page.nextCursor);
		cursor = page.nextCursor;
	}
}

/**
 * resume loads a saved session (session/load) and makes it the current one: the next
 * prompt continues it. It writes the loaded transcript to the UI in the format of a live
 * run, between a header and a line saying the next prompt continues it, and closes the
 * session it replaces (session/close: its file stays) so that other pids may load that
 * one. summary, when given (the picked list entry), names the session in the header.
 * It throws BusyError while a prompt runs or another load is under way, and ResumeError
 * saying what happened and what to do when pid cannot load it (held by another pid: code
 * -32803; unknown: -32602); the current session is then unchanged.
 */
export async function resume(s: ControllerState, sessionId: string, summary?: SessionSummary): Promise<SessionLoadResult> {
	s.assertIdle();
	s.loading = true;
	s.chat.setState({ status: 'loading' });
	try {
		const client = await s.daemon.ensureClient();
		return await load(s, client, sessionId, summary, false);
	} finally {
		s.loading = false;
		if (s.chat.state.status === 'loading') {
			s.chat.setState({ status: s.stoppedSession ? 'stopped' : 'idle' });
		}
	}
}

/**
 * load makes sessionId the current session (session/load), shows its transcript in the log
 * and the chat, and closes the session it replaces. quiet: a load the person did not pick
 * (after a crash, a restart): the chat says why it happened. It throws ResumeError (shown in
 * the chat too, as a ChatError's message) when pid cannot load it.
 */
export async function load(s: ControllerState, client: PidClient, sessionId: string, summary: SessionSummary | undefined, quiet: boolean): Promise<SessionLoadResult> {
	if (!client.savesSessions) {
		throw new ResumeError('this pid does not keep saved sessions (its initialize result does not declare them): update pid.');
	}
	let loaded: SessionLoadResult;
	try {
		loaded = await client.loadSession(sessionId);
	} catch (err) {
		const message = loadErrorText(err, sessionId, summary?.cwd);
		s.log(`! ${message}`);
		s.chat.notice('error', `The session could not be loaded: ${message}`, s.stoppedSession === sessionId ? [{ label: 'Try again', action: 'resume' }, { label: 'New session', action: 'newSession' }] : []);
		throw new ResumeError(message, errorCode(err));
	}
	const previous = s.sessionId;
	s.sessionId = loaded.sessionId;
	s.offer = undefined;
	const wasStopped = s.stoppedSession === sessionId;
	clearStopped(s);
	if (previous !== undefined && previous !== loaded.sessionId) {
		client.closeSession(previous).catch((err) => {
			s.log(`! pid: could not close the previous session ${previous}: ${errorText(err)}`);
		});
	}
	showTranscript(s, loaded, summary);
	const firstUser = loaded.messages.find((m) => m && typeof m === 'object' && m.role === 'user');
	const title = summary?.title ?? (firstUser && firstUser.role === 'user' ? contentText(firstUser.content).slice(0, 80) : undefined);
	s.chat.showTranscript(loaded.messages);
	s.chat.setState({ sessionId: loaded.sessionId, title });
	s.nextModeId = undefined;
	showModes(s, loaded.modes);
	showModel(s, client, loaded.sessionId);
	refreshCommands(s, client, loaded.sessionId);
	void refreshCheckpoints(s, client, loaded.sessionId);
	showInstructions(s, loaded.instructions);
	const n = loaded.messages.filter((m) => m && typeof m === 'object' && m.role !== 'compaction').length;
	if (wasStopped || quiet) {
		s.chat.notice('info', `pid was started again and the saved session was loaded (${n} message${n === 1 ? '' : 's'}): ${quiet ? 'your message continues it' : 'the next message continues it'}.`);
	} else {
		s.chat.notice('info', `Resumed "${(title ?? '').replace(/\s+/g, ' ').trim() || loaded.sessionId}" (${n} message${n === 1 ? '' : 's'}): the next message continues it.`);
	}
	return loaded;
}

/** clearStopped forgets the session of a pid that stopped (it was loaded again, or a new session starts) and retires its Resume. */
export function clearStopped(s: ControllerState): void {
	s.stoppedSession = undefined;
	if (s.stoppedNotice) {
		s.chat.retire(s.stoppedNotice);
		s.stoppedNotice = undefined;
	}
}

/** showInstructions shows the instruction files the model gets (session/new's or session/load's) in the chat and the log. */
export function showInstructions(s: ControllerState, files: InstructionFile[] | undefined): void {
	const folders = (s.opts.workspaceFolders ?? []).map((f) => folderPath(f.uri)).filter((f): f is string => f !== undefined);
	const item = s.chat.instructions(files, folders);
	if (item) {
		s.log(`pid: ${instructionsLine(item.files)}`);
	}
}

/** showTranscript writes a loaded session to the UI: a header, its items, a footer. */
function showTranscript(s: ControllerState, loaded: SessionLoadResult, summary?: SessionSummary): void {
	const messages = loaded.messages.filter((m) => m && typeof m === 'object' && m.role !== 'compaction');
	const firstUser = messages.find((m) => m.role === 'user');
	const title = (summary?.title ?? (firstUser ? contentText(firstUser.content).slice(0, 80) : '')).replace(/\s+/g, ' ').trim();
	const where = summary?.cwd ? `, in ${summary.cwd}` : '';
	s.log('');
	s.log(`pid: resumed session ${loaded.sessionId}${title ? ` "${title}"` : ''} (${messages.length} message${messages.length === 1 ? '' : 's'}${where})`);
	for (const e of transcriptEntries(loaded.messages)) {
		s.log(e.line);
	}
	s.log('pid: — end of the saved transcript: "pid: Ask" continues this session —');
}

/**
 * offerLastSession is what an empty chat shows after a window reload or an editor restart:
 * while no session is current, none stopped and the chat is empty, it asks pid for the
 * newest saved session of the folder pid works in (session/list with that cwd; pid is
 * started for it and kept for the first prompt) and shows a notice naming it, with a
 * Resume button (action resumeSession, the session's id) that resumeOffered answers. It
 * resolves to the session offered, or undefined when there is none (or none with a
 * message), the folder is unknown, pid keeps no sessions, or the chat changed meanwhile
 * (a prompt, a load). It never throws: a failure is logged, since the offer only saves a
 * trip to Session History.
 */
export async function offerLastSession(s: ControllerState): Promise<SessionSummary | undefined> {
	const folder = s.chat.folder;
	const untouched = () => !s.disposed && !s.busy && s.sessionId === undefined && s.stoppedSession === undefined && s.offer === undefined && s.chat.empty;
	if (folder === undefined || !path.isAbsolute(folder) || !untouched()) {
		return undefined;
	}
	let last: SessionSummary | undefined;
	try {
		const client = await s.daemon.ensureClient();
		if (!client.savesSessions) {
			return undefined;
		}
		// Sessions are listed under the folder as pid got it: as given, or resolved.
		for (const cwd of [...new Set([path.resolve(folder), realPath(folder)])]) {
			const page = await client.listSessions({ cwd });
			last = page.sessions.find((x) => x && typeof x.sessionId === 'string' && x.messageCount > 0);
			if (last) {
				break;
			}
		}
	} catch (err) {
		s.log(`! pid: could not look for this folder's last session: ${errorText(err)}`);
		return undefined;
	}
	if (!last || !untouched()) {
		return undefined;
	}
	const title = String(last.title ?? '').replace(/\s+/g, ' ').trim() || '(no text)';
	const short = title.length > 40 ? `${title.slice(0, 39)}…` : title;
	const n = last.messageCount;
	const notice = s.chat.notice(
		'info',
		`Your last session in this folder: "${title}" (${relativeTime(last.updatedAt, new Date())}, ${n} message${n === 1 ? '' : 's'}). Resume continues it; a new message starts a new session.`,
		[{ label: `Resume "${short}"`, action: 'resumeSession', arg: last.sessionId }],
	);
	s.offer = { notice, summary: last };
	return last;
}

/**
 * resumeOffered is the Resume button of offerLastSession's notice: it loads the offered
 * session (as resume does, with the list's summary naming it). sessionId, when given, must
 * be the offered one (else that session is resumed without a summary). It throws as resume.
 */
export async function resumeOffered(s: ControllerState, sessionId?: string): Promise<SessionLoadResult | undefined> {
	const offer = s.offer;
	const id = sessionId ?? offer?.summary.sessionId;
	if (id === undefined) {
		return undefined;
	}
	return resume(s, id, offer?.summary.sessionId === id ? offer.summary : undefined);
}
