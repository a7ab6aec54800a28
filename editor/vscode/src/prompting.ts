// Running prompts for one conversation: pid started and the session made (or the stopped one
// loaded) when needed, session/prompt into a Run (the log) and the chat, messages typed while
// a run goes queued for it (steer, follow-up), the files a run's writes and edits change
// snapshotted for Undo, and cancel. The state is state.ts's. No `vscode` import.

import * as rpc from 'vscode-jsonrpc/node';
import { FILE_TOOLS, targetPath } from './changes';
import type { QueueMode } from './chat';
import { errorText, type PidClient } from './client';
import { blocksAsText, type ContextChip } from './context';
import { friendlyError } from './errors';
import { refreshCheckpoints, runFiles } from './checkpoints';
import { load, showInstructions } from './history';
import { modelParam, noticeAction, refreshCommands, showModel, showModes } from './picks';
import type { PromptBlock, SessionNewParams } from './protocol';
import { Run } from './run';
import { listFor, localCommand } from './skills';
import { BusyError, ChatError, type ControllerState, type Current } from './state';

/** The notifications about the session as a whole (in a run or not): the chat takes them from one listener (controller.ts). */
export const SESSION_WIDE = new Set(['planUpdate', 'usageUpdate', 'changesUpdate', 'commandOutput']);

/**
 * ask runs one prompt: starts pid and a session if needed (after a crash, or when the
 * controller continues another's session, it loads that session first: never a new one in
 * its place), then session/prompt with the text and, when given, context (content blocks,
 * shown as chips). It resolves to the finished Run (state done, aborted or failed), or
 * undefined when it was cancelled before the prompt was sent. It throws BusyError while
 * another prompt runs, and a ChatError (already shown in the chat, in VS Code's words) when
 * pid cannot be started, the session cannot be created or loaded.
 */
export async function ask(s: ControllerState, text: string, context: readonly ContextChip[] = []): Promise<Run | undefined> {
	const local = localCommand(text);
	if (local && context.length === 0) {
		await runLocal(s, local);
		return undefined;
	}
	const sent: { itemId?: string; run?: number } = {};
	const run = await runPrompt(s, text, context, sent);
	// The prompt's message now has its checkpoint: "Rewind to here" can go back to it, and the
	// run's changed files are the checkpoint's (a command's too).
	if (run && s.client && s.sessionId === run.sessionId) {
		const cps = await refreshCheckpoints(s, s.client, run.sessionId);
		if (cps && sent.itemId !== undefined && sent.run !== undefined && sent.run === s.changes.run) {
			runFiles(s, cps, sent.itemId, sent.run);
		}
	}
	return run;
}

/**
 * runLocal runs one of the extension's own commands (`/skills`, `/agents`): it asks pid for
 * the session's list (making the session first, as a prompt would) and shows it as a
 * command's output; nothing goes to the model.
 */
async function runLocal(s: ControllerState, kind: 'skills' | 'agents'): Promise<void> {
	s.assertIdle();
	let client: PidClient;
	try {
		client = await s.daemon.ensureClient();
		await ensureSession(s, client, `/${kind}`);
	} catch (err) {
		if (err instanceof ChatError) {
			throw err;
		}
		const f = friendlyError(err, 'start');
		s.chat.notice('error', f.message, f.actions.map(noticeAction));
		throw new ChatError(f.message, f.actions);
	}
	const sessionId = s.sessionId as string;
	const out = await listFor(client, sessionId, kind);
	s.chat.handle('commandOutput', { sessionId, name: kind, text: out.text, isError: out.isError });
	s.log(`pid: /${kind}${out.isError ? ' failed' : ''}: ${out.text}`);
}

/**
 * ensureSession makes the conversation's session exist in client: the stopped one loaded
 * again, else a new one (session/new with what was picked for it); text titles it.
 */
async function ensureSession(s: ControllerState, client: PidClient, text: string): Promise<void> {
	if (s.stoppedSession !== undefined) {
		await load(s, client, s.stoppedSession, undefined, true);
	}
	if (s.sessionId !== undefined) {
		return;
	}
	// One session/new at a time: the mode picker's (prepareSession) and a prompt's share it.
	if (!s.creating) {
		s.creating = newSession(s, client, text).finally(() => {
			s.creating = undefined;
		});
	}
	await s.creating;
}

/** newSession makes the conversation's session (session/new with what was picked for it); text titles it. */
async function newSession(s: ControllerState, client: PidClient, text: string): Promise<void> {
	const chat = s.chat;
	const params: SessionNewParams = { cwd: s.opts.cwd, ...s.opts.session };
	if (s.nextModel) {
		params.model = modelParam(s.nextModel);
	}
	if (s.nextModeId !== undefined) {
		params.mode = s.nextModeId;
	}
	const r = await client.newSession(params);
	s.sessionId = r.sessionId;
	s.nextModeId = undefined;
	chat.setState({ sessionId: r.sessionId, title: text === '' ? undefined : text.slice(0, 80) });
	showModes(s, r.modes);
	showModel(s, client, r.sessionId);
	refreshCommands(s, client, r.sessionId);
	if (s.note) {
		chat.notice('info', s.note);
		s.note = undefined;
	}
	s.log(`pid: new session ${r.sessionId} (${r.tools.length} tools: ${r.tools.map((t) => t.name).join(', ')})`);
	showInstructions(s, r.instructions);
}

/**
 * prepareSession makes the conversation's session before its first message, so that what
 * pid offers it is known (the mode picker lists pid's own modes: bypassPermissions when the
 * user settings allow it). Nothing happens while a prompt runs, a session loads or after pid
 * stopped (Resume comes first); it throws a ChatError (shown in the chat) when pid cannot
 * start the session.
 */
export async function prepareSession(s: ControllerState): Promise<void> {
	if (s.disposed || s.busy || s.stoppedSession !== undefined || s.sessionId !== undefined) {
		return;
	}
	try {
		await ensureSession(s, await s.daemon.ensureClient(), '');
	} catch (err) {
		const f = friendlyError(err, 'start');
		s.chat.notice('error', f.message, f.actions.map(noticeAction));
		s.log(`! ${f.detail}`);
		throw new ChatError(f.message, f.actions);
	}
}

/** runPrompt is ask without the checkpoints' refresh after it. */
async function runPrompt(s: ControllerState, text: string, context: readonly ContextChip[], sent: { itemId?: string; run?: number }): Promise<Run | undefined> {
	s.assertIdle();
	const source = new rpc.CancellationTokenSource();
	let settle: () => void = () => {};
	const started = new Promise<void>((resolve) => (settle = resolve));
	const cur: Current = { source, started, settle };
	s.current = cur;
	const chat = s.chat;
	dropOffer(s);
	chat.setState({ status: 'starting', running: true });
	try {
		let client: PidClient;
		try {
			client = await s.daemon.ensureClient();
			await ensureSession(s, client, text);
			if (!chat.state.title) {
				// A session made before its first message (for the mode picker) is titled by it.
				chat.setState({ title: text.slice(0, 80) });
			}
		} catch (err) {
			if (err instanceof ChatError) {
				chat.setState({ status: s.stoppedSession ? 'stopped' : 'idle', running: false });
				throw err;
			}
			const f = friendlyError(err, 'start');
			chat.notice('error', f.message, f.actions.map(noticeAction));
			chat.setState({ status: s.stoppedSession ? 'stopped' : 'idle', running: false });
			s.log(`! ${f.detail}`);
			throw new ChatError(f.message, f.actions);
		}
		if (source.token.isCancellationRequested) {
			s.log('pid: cancelled before the prompt was sent');
			chat.setState({ status: 'idle', running: false });
			return undefined;
		}
		const sessionId = s.sessionId as string;
		const blocks: PromptBlock[] = context.map((c) => c.block);
		sent.itemId = chat.userPrompt(text, context).id;
		chat.runStarted();
		sent.run = s.changes.begin();
		const logged = blocks.length > 0 ? `${text}${text ? ' ' : ''}[+ ${context.map((c) => c.label).join(', ')}]` : text;
		const run = new Run(sessionId, logged, (e) => s.log(e.line));
		cur.run = run;
		cur.settle();
		const sub = client.onNotification((method, params) => {
			run.handle(method, params);
			const sid = (params as { sessionId?: string } | undefined)?.sessionId;
			if (sid === sessionId) {
				trackChanges(s, method, params);
				if (!SESSION_WIDE.has(method)) {
					chat.handle(method, params);
				}
			} else if (chat.isChild(sid)) {
				// A subagent's own notifications: its steps, on its task call's card.
				trackChanges(s, method, params);
				chat.handleChild(sid as string, method, params);
			}
		});
		try {
			run.finish(await client.prompt(sessionId, text, source.token, blocks));
			chat.runEnded(run.state === 'aborted' ? 'aborted' : run.state === 'failed' ? 'failed' : 'done');
		} catch (err) {
			if (client.alive) {
				const f = friendlyError(err, 'send the prompt');
				run.fail(`the prompt failed: ${errorText(err)}`);
				chat.runEnded('failed', { message: f.message, actions: f.actions.map(noticeAction) });
			} else {
				run.fail(`pid stopped during the prompt: ${errorText(err)}`);
				chat.runEnded('failed');
			}
		} finally {
			sub.dispose();
		}
		// A command file added, or a folder trusted, since: the completion offers it.
		refreshCommands(s, client, sessionId);
		return run;
	} finally {
		source.dispose();
		s.current = undefined;
		cur.settle();
	}
}

/** dropOffer takes offerLastSession's notice out of the chat (a prompt started, a session was loaded). */
export function dropOffer(s: ControllerState): void {
	if (s.offer) {
		s.chat.dismiss(s.offer.notice);
		s.offer = undefined;
	}
}

/**
 * send is the chat's prompt box: while no prompt runs it asks (with the context waiting in
 * the chat); while one runs it queues the text for it: mode steer (taken after the current
 * turn) or followUp (taken when the run would stop), the context written into the text
 * (those requests take text only); while pid still starts for a prompt, the message waits
 * until that prompt is sent. It resolves once pid has the message (for a prompt: once the
 * run ended); failures are shown in the chat and thrown as ChatError.
 */
export async function send(s: ControllerState, text: string, mode: QueueMode = 'steer'): Promise<void> {
	// While pid starts (or loads the session) for the prompt, the message waits for it.
	if (s.current && !s.current.run) {
		await s.current.started;
	}
	const run = s.current?.run;
	if (!s.current) {
		await ask(s, text, s.chat.takeContext());
		return;
	}
	const client = s.client;
	if (!run || !client) {
		throw new BusyError('pid is still starting: send this once the prompt runs.');
	}
	const chips = s.chat.takeContext();
	const sent = chips.length > 0 ? `${text}\n\n${blocksAsText(chips.map((c) => c.block))}` : text;
	const item = s.chat.queued(text, mode, sent, chips);
	s.log(`pid: ${mode === 'steer' ? 'steering' : 'follow-up queued'}: ${sent}`);
	try {
		if (mode === 'steer') {
			await client.steer(run.sessionId, sent);
		} else {
			await client.followUp(run.sessionId, sent);
		}
	} catch (err) {
		s.chat.unqueue(item);
		const f = friendlyError(err, mode === 'steer' ? 'steer the run' : 'queue the follow-up');
		s.chat.notice('error', f.message, f.actions.map(noticeAction));
		throw new ChatError(f.message, f.actions);
	}
}

/**
 * trackChanges snapshots a file before a write or edit pid announced (toolStart, sent
 * before the call runs) and records it changed when the call succeeded (toolEnd).
 */
function trackChanges(s: ControllerState, method: string, params: unknown): void {
	const p = params as { sessionId?: string; toolName?: string; args?: unknown; toolCallId?: string; isError?: boolean };
	// By session and call: a subagent's call ids may repeat its parent's.
	const key = `${String(p.sessionId)}/${String(p.toolCallId)}`;
	if (method !== 'toolStart' && method !== 'toolEnd') {
		return;
	}
	if (!FILE_TOOLS.has(String(p.toolName))) {
		return;
	}
	if (method === 'toolStart') {
		const target = targetPath(String(p.toolName), p.args, s.opts.cwd);
		if (target && s.daemon.inWorkspace(target)) {
			s.callTargets.set(key, target);
			s.changes.willChange(target);
			s.opts.onWillChange?.(target);
		}
		return;
	}
	const target = s.callTargets.get(key);
	s.callTargets.delete(key);
	if (target && p.isError !== true) {
		s.changes.changed(target);
	}
}

/** cancel cancels the running prompt ($/cancelRequest); false when none runs. */
export function cancel(s: ControllerState): boolean {
	if (!s.current) {
		return false;
	}
	if (!s.current.source.token.isCancellationRequested) {
		s.log('pid: cancelling…');
		s.current.source.cancel();
	}
	return true;
}
