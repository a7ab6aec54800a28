// Checkpoints and rewind for one conversation: each of the person's messages in the chat given
// its checkpoint (checkpoints/list, rewind.ts's mapping), "Rewind to here"'s plan (the
// message's checkpoint and checkpoints/diff), session/rewind and the chat after it (redrawn
// from session/load after a rewind of the conversation, with the report). The state is
// state.ts's. No `vscode` import.

import { errorCode, errorText, type PidClient } from './client';
import { friendlyError } from './errors';
import { showInstructions } from './history';
import { noticeAction, showModes } from './picks';
import type { Checkpoint, CheckpointFileDiff, RewindRestore, RewindResult } from './protocol';
import { mapCheckpoints, rewindReport } from './rewind';
import { BusyError, ChatError, type ControllerState } from './state';

/** What "Rewind to here" goes back to (rewindPlan): the message, its checkpoint, the diff since. */
export interface RewindPlan {
	sessionId: string;
	/** The chat item of the message. */
	itemId: string;
	/** The message's text as the chat showed it. */
	text: string;
	checkpoint: Checkpoint;
	files: CheckpointFileDiff[];
}

/**
 * refreshCheckpoints asks pid for the session's checkpoints (checkpoints/list) and gives
 * each of the person's messages in the chat its own (mapCheckpoints), so that the view
 * offers "Rewind to here" on them. It never throws: without checkpoints there is no button.
 */
export async function refreshCheckpoints(s: ControllerState, client: PidClient | undefined = s.client, sessionId: string | undefined = s.sessionId): Promise<Checkpoint[] | undefined> {
	if (!client || sessionId === undefined || s.checkpointsOff.has(sessionId) || !client.alive) {
		return undefined;
	}
	let cps: Checkpoint[];
	try {
		cps = await client.listCheckpoints(sessionId);
	} catch (err) {
		// pid refused (checkpoints off, or a pid without them): no more asking for this session.
		if (client.alive && errorCode(err) !== undefined) {
			s.checkpointsOff.add(sessionId);
			s.log(`pid: no rewind in this session: ${errorText(err)}`);
		}
		return undefined;
	}
	if (s.sessionId !== sessionId) {
		return undefined;
	}
	applyCheckpoints(s, cps);
	return cps;
}

/**
 * runFiles lists on the run's changed-files card what its checkpoint (that of its message,
 * itemId) says it changed and the card lacks: the files a command (bash) created, changed or
 * deleted, which only pid's checkpoint knows.
 */
export function runFiles(s: ControllerState, cps: readonly Checkpoint[], itemId: string, run: number): void {
	const item = s.chat.get(itemId);
	const cp = item?.kind === 'user' && item.checkpointId ? cps.find((c) => c.id === item.checkpointId) : undefined;
	if (!cp) {
		return;
	}
	s.runCheckpoint = { sessionId: s.sessionId as string, id: cp.id, run };
	s.chat.checkpointFiles(run, cp.files ?? []);
}

/**
 * runFileDiff is Open diff of a file the last run's checkpoint lists (a command changed it):
 * pid's diff from before that run's prompt to now (checkpoints/diff); undefined when pid has
 * no such file (it is as it was) or no checkpoint for the run.
 */
export async function runFileDiff(s: ControllerState, absPath: string): Promise<string | undefined> {
	const cp = s.runCheckpoint;
	const client = s.client;
	if (!cp || !client?.alive || cp.sessionId !== s.sessionId) {
		return undefined;
	}
	const files = await client.checkpointDiff(cp.sessionId, cp.id);
	return files.find((f) => f.path === absPath)?.diff;
}

function applyCheckpoints(s: ControllerState, cps: readonly Checkpoint[]): void {
	const users = s.chat.userItems();
	// A command's checkpoint names the prompt pid made of it (sent), not the /NAME typed.
	const found = mapCheckpoints(users.map((u) => ({ text: u.sent ?? u.text, ...(u.at !== undefined ? { at: u.at } : {}) })), cps);
	const byItem = new Map<string, string>();
	users.forEach((u, i) => {
		const c = found[i];
		if (c) {
			byItem.set(u.id, c.id);
		}
	});
	s.chat.setCheckpoints(byItem);
}

/**
 * rewindPlan is the first step of "Rewind to here" on the chat's message itemId: the
 * message's checkpoint as pid lists it now (checkpoints/list) and what a rewind of the
 * files would take back (checkpoints/diff). It throws BusyError while a prompt runs or a
 * session loads, and a ChatError in words when the message has no checkpoint or pid fails.
 */
export async function rewindPlan(s: ControllerState, itemId: string): Promise<RewindPlan> {
	s.assertIdle();
	const sessionId = s.sessionId;
	const client = s.client;
	const item = s.chat.get(itemId);
	if (s.stoppedSession !== undefined) {
		throw new BusyError('pid stopped: Resume the session first, then rewind.');
	}
	if (sessionId === undefined || !client?.alive || item?.kind !== 'user') {
		throw new ChatError('This message is not in the current session any more: nothing to rewind to.');
	}
	let cps: Checkpoint[];
	try {
		cps = await client.listCheckpoints(sessionId);
	} catch (err) {
		const f = friendlyError(err, 'list the checkpoints');
		throw new ChatError(f.message, f.actions);
	}
	// The map again, as pid lists them now (the message's own may have been matched since).
	if (s.sessionId === sessionId) {
		applyCheckpoints(s, cps);
	}
	const id = (s.chat.get(itemId) as typeof item).checkpointId;
	const checkpoint = cps.find((c) => c.id === id);
	if (!checkpoint) {
		throw new ChatError('pid has no checkpoint for this message (it was sent while pid worked, or checkpoints were off then): it cannot be rewound to.');
	}
	let files: CheckpointFileDiff[];
	try {
		files = await client.checkpointDiff(sessionId, checkpoint.id);
	} catch (err) {
		const f = friendlyError(err, 'show what changed since');
		throw new ChatError(f.message, f.actions);
	}
	return { sessionId, itemId, text: item.text, checkpoint, files };
}

/**
 * rewind goes back to a plan's checkpoint (session/rewind): the files, the conversation or
 * both (force: files changed since pid wrote them too). After a rewind of the conversation
 * the chat shows it as pid has it now (session/load; if that fails, the message and what
 * followed are dropped). The chat says what was restored, removed and left as it was (with
 * why). It throws BusyError while a prompt runs, ChatError in words when pid refuses.
 */
export async function rewind(s: ControllerState, plan: { sessionId: string; itemId: string; checkpoint: Checkpoint }, restore: RewindRestore, force = false): Promise<RewindResult> {
	s.assertIdle();
	const client = s.client;
	if (s.sessionId !== plan.sessionId || !client?.alive) {
		throw new ChatError('The session changed since: open the message again to rewind.');
	}
	s.loading = true;
	s.chat.setState({ status: 'loading' });
	let r: RewindResult;
	try {
		try {
			r = await client.rewind({ sessionId: plan.sessionId, checkpointId: plan.checkpoint.id, restore, ...(force ? { force: true } : {}) });
		} catch (err) {
			const f = friendlyError(err, 'rewind');
			s.chat.notice('error', f.message, f.actions.map(noticeAction));
			throw new ChatError(f.message, f.actions);
		}
		if (restore !== 'conversation') {
			s.chat.retireChanges();
		}
		s.log(`pid: rewound to checkpoint ${plan.checkpoint.id} (${restore}${force ? ', forced' : ''}): restored ${r.restored.length}, removed ${r.removed.length}, skipped ${r.skipped.length}${r.skipped.map((x) => `\n  skipped ${x.path}: ${x.reason}`).join('')}`);
		if (restore !== 'files') {
			await redrawConversation(s, client, plan);
		}
		const report = rewindReport(plan.checkpoint.prompt, restore, r, s.chat.folder);
		// Files left because they changed since pid wrote them: the report offers to restore them anyway.
		const changed = !force && r.skipped.some((x) => /changed since/i.test(x.reason));
		s.chat.notice(report.level, report.text, changed ? [{ label: 'Restore them anyway', action: 'restoreAnyway', arg: plan.checkpoint.id }] : []);
		s.lastRewind = { ...plan, restore };
		await refreshCheckpoints(s, client, plan.sessionId);
		return r;
	} finally {
		s.loading = false;
		if (s.chat.state.status === 'loading') {
			s.chat.setState({ status: s.stoppedSession ? 'stopped' : 'idle' });
		}
	}
}

/** redrawConversation shows the session's conversation after a rewind: pid's (session/load), else the chat's without the rewound messages. */
async function redrawConversation(s: ControllerState, client: PidClient, plan: { sessionId: string; itemId: string }): Promise<void> {
	try {
		const loaded = await client.loadSession(plan.sessionId);
		s.chat.showTranscript(loaded.messages);
		showInstructions(s, loaded.instructions);
		if (loaded.modes) {
			showModes(s, loaded.modes);
		}
	} catch (err) {
		s.log(`! pid: could not reload the conversation after the rewind (${errorText(err)}): the chat drops the rewound messages instead`);
		s.chat.dropFrom(plan.itemId);
	}
}

/**
 * restoreAnyway is the report's "Restore them anyway": the files of the last rewind to
 * checkpointId again, with force (those changed since pid wrote them too). It throws a
 * ChatError when that rewind is not the last one any more.
 */
export async function restoreAnyway(s: ControllerState, checkpointId: string): Promise<RewindResult> {
	const last = s.lastRewind;
	if (!last || last.checkpoint.id !== checkpointId || last.sessionId !== s.sessionId) {
		throw new ChatError('That rewind is not the last one of this session any more: use "Rewind to here" again.');
	}
	return rewind(s, last, 'files', true);
}
