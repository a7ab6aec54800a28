// PidController is the extension without VS Code: it starts pid when first needed, keeps one
// session (a new one, or a saved one it resumed), runs prompts (one at a time) into a Run
// (the log) and the ChatModel (the chat view), queues messages typed while a run goes (steer,
// follow-up), puts approval, MCP and trust questions to the chat and the UI, answers pid's
// file requests through the editor, keeps what each file held before the run changed it (for
// Undo), cancels, and after a crash offers to resume the saved session instead of starting a
// new one. extension.ts only supplies VS Code (the chat view, the editor's files, pickers) and
// the commands. No `vscode` import: tests drive it under plain node with a scripted UI.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as rpc from 'vscode-jsonrpc/node';
import { answer, question, type ApprovalQuestion } from './approval';
import { reviewable } from './proposed';
import { ChangeTracker, FILE_TOOLS, targetPath, type FileAccess } from './changes';
import { BUILTIN_COMMANDS, ChatModel, commandViews, instructionsLine, type ApprovalChoice, type NoticeAction, type NoticeItem, type QueueMode } from './chat';
import { METHOD_NOT_FOUND, PidClient, describeExit, errorCode, errorText, type ClientOptions } from './client';
import { blocksAsText, sliceLines, type ContextChip } from './context';
import { friendlyError, type ErrorAction } from './errors';
import { DEFAULT_MODES, modeView, nextMode, readModes } from './modes';
import {
	contentText,
	type BeforeToolCallAnswer,
	type BeforeToolCallParams,
	type Checkpoint,
	type CheckpointFileDiff,
	type Diagnostic,
	type EditorDiagnosticsParams,
	type ElicitationParams,
	type ElicitationResult,
	type InstructionFile,
	type ModelEntry,
	type ModelsListResult,
	type PromptBlock,
	type RememberedPermission,
	type RequestTrustAnswer,
	type RequestTrustParams,
	type RewindRestore,
	type RewindResult,
	type SessionLoadResult,
	type SessionMode,
	type SessionNewParams,
	type SessionSummary,
	type TrustedFolder,
} from './protocol';
import { Run, transcriptEntries } from './run';
import { MAX_LISTED, ResumeError, insideAny, loadErrorText, relativeTime } from './sessions';
import { mapCheckpoints, rewindReport } from './rewind';

export interface Ui {
	/** Shows one more entry of the log (the output channel). */
	appendLine(line: string): void;
	/**
	 * Asks the user besides the chat (tests answer here; the extension answers in the chat
	 * only and leaves it unset); resolves to the chosen choice (or {choice, reason}), or
	 * undefined when dismissed. The token is cancelled when pid withdraws the question (the
	 * answer is then ignored). Whichever of the chat and this answers first wins.
	 */
	askApproval?(q: ApprovalQuestion, token: rpc.CancellationToken): Promise<string | ApprovalChoice | undefined>;
	/**
	 * Decides whether to trust a workspace folder whose settings pid ignored (resolves true to
	 * trust it). Optional: without it pid is not told the editor answers trust questions, and
	 * shows a warning instead. A rejection answers false. The token is cancelled when pid gives
	 * the question up (shutdown); the answer is then ignored.
	 */
	askTrust?(params: RequestTrustParams, token: rpc.CancellationToken): Promise<boolean>;
}

/** The editor's own view of files: open documents with their unsaved changes. */
export interface EditorFiles {
	/** The file's text as the editor has it (an open document's, else the disk's); throws when it cannot be read. */
	read(absPath: string): Promise<string> | string;
	/** Makes the file hold content: an open document gets it as an edit and is saved; another file is written. */
	write(absPath: string, content: string): Promise<void>;
}

/** The notifications about the session as a whole (in a run or not): the chat takes them from one listener. */
const SESSION_WIDE = new Set(['planUpdate', 'usageUpdate', 'commandOutput']);

export interface ControllerOptions extends Omit<ClientOptions, 'onBeforeToolCall' | 'onRequestTrust' | 'onStderr' | 'onReadTextFile' | 'onWriteTextFile' | 'onElicitation' | 'onDiagnostics'> {
	/**
	 * When set, pid asks the editor for the problems of the files a batch changed
	 * (editor/diagnostics; initialize declares capabilities.experimental.pid.diagnostics).
	 */
	editorDiagnostics?: (params: EditorDiagnosticsParams, token: rpc.CancellationToken) => Promise<Diagnostic[]>;
	/** Told of each file a write or edit is about to change (toolStart), so that its problems are awaited fresh. */
	onWillChange?: (absPath: string) => void;
	/** session/new's params (cwd, model, scripted tools for tests...). */
	session?: SessionNewParams;
	ui: Ui;
	/**
	 * pid is started only once this settles: the shutdown of the pid this controller replaces,
	 * which holds its sessions' files until it exits (a new pid could not load them before).
	 */
	startAfter?: Promise<unknown>;
	/** The chat this controller feeds (it outlives controllers: a restart keeps it). Default: a new one. */
	chat?: ChatModel;
	/**
	 * When set, pid reads and writes files through the editor (initialize declares
	 * capabilities.experimental.pid.fs): unsaved changes are seen, edits land in the buffers.
	 */
	editorFiles?: EditorFiles;
	/** How Undo reads and restores files (default: the disk). */
	fileAccess?: FileAccess;
	/**
	 * The session of a pid that stopped (crashed) before this controller replaced the one that
	 * ran it: Resume and the next prompt load it, never a new session in its place.
	 */
	stoppedSession?: string;
	/** Said in the chat when this controller's first session is created (e.g. why pid was restarted). */
	newSessionNote?: string;
}

/** A prompt in progress (see PidController.ask). */
interface Current {
	run?: Run;
	source: rpc.CancellationTokenSource;
	/** Settles once the prompt was sent (run is set) or ask gave up. */
	started: Promise<void>;
	settle: () => void;
}

/** The disk as FileAccess: what pid's tools see without the editor. */
export const diskAccess: FileAccess = {
	read(p) {
		try {
			return fs.readFileSync(p, 'utf8');
		} catch {
			return undefined;
		}
	},
	async write(p, text) {
		await fs.promises.writeFile(p, text);
	},
	async remove(p) {
		await fs.promises.rm(p, { force: true });
	},
};

/** ChatError is a failure already shown in the chat (with what to do); the caller need not show it again. */
export class ChatError extends Error {
	constructor(
		message: string,
		readonly actions: ErrorAction[] = [],
	) {
		super(message);
	}
}

/** BusyError is a request refused because a prompt runs or a session loads; its message says what to do. */
export class BusyError extends Error {
	constructor(message = 'pid is already answering a prompt: wait for it, or run "pid: Cancel".') {
		super(message);
	}
}

const LOADING = 'pid is loading a saved session: wait a moment, then try again.';

/**
 * PidController is one window's pid: see the file's comment. Used from the extension host's
 * one thread; its async methods may interleave (a Resume while a prompt runs is refused with
 * BusyError), and none of them leaves pid running after dispose().
 */
export class PidController {
	/** The chat view's model: what this controller's runs show. */
	readonly chat: ChatModel;
	/** The files the last run changed, with what they held before (Undo). */
	readonly changes: ChangeTracker;
	private client: PidClient | undefined;
	private starting: Promise<PidClient> | undefined;
	private sessionId: string | undefined;
	/** The prompt in progress: its run once sent; started settles once it is sent or gave up. */
	private current: Current | undefined;
	/** True while resume() loads a session: no prompt may start meanwhile. */
	private loading = false;
	private disposed = false;
	private stderrLine = '';
	/** The session of a pid that stopped (crashed): the next prompt or Resume loads it. */
	private stoppedSession: string | undefined;
	private stoppedNotice: NoticeItem | undefined;
	private readonly changesSub: { dispose(): void };
	/** Said in the chat with the next new session (newSessionNote), then forgotten. */
	private note: string | undefined;
	/** The model picked before a session exists: the next session/new gets it. */
	private nextModel: ModelEntry | undefined;
	/** The offer to resume the folder's last session (offerLastSession), while the chat shows it. */
	private offer: { notice: NoticeItem; summary: SessionSummary } | undefined;
	/** The modes the session may switch to (before a session exists: those every pid offers). */
	private modeList: SessionMode[] = [...DEFAULT_MODES];
	/** The mode picked before a session exists: the next session/new starts in it. */
	private nextModeId: string | undefined;

	constructor(private readonly opts: ControllerOptions) {
		this.chat = opts.chat ?? new ChatModel();
		// Paths are shown relative to the folder pid works in: the cwd, else the first workspace folder.
		this.chat.folder = opts.cwd ?? firstFolder(opts.workspaceFolders);
		this.changes = new ChangeTracker(opts.fileAccess ?? diskAccess);
		this.changesSub = this.changes.onChange(() => this.chat.setChanges(this.changes.run, this.changes.list()));
		this.stoppedSession = opts.stoppedSession;
		this.note = opts.newSessionNote;
		// A controller that replaces another (pid restarted because its settings changed) starts
		// its new session in the mode the chat shows, so that the mode button stays true.
		const shown = this.chat.state.mode?.id;
		if (shown !== undefined && shown !== 'default' && DEFAULT_MODES.some((m) => m.id === shown)) {
			this.nextModeId = shown;
		} else if (shown === undefined || shown === 'bypassPermissions') {
			this.chat.setState({ mode: modeView(this.modeList, 'default') });
		}
	}

	/** The session of a pid that stopped, which Resume (or the next prompt) loads; undefined when none. */
	get stopped(): string | undefined {
		return this.stoppedSession;
	}

	/** The run in progress, if any. */
	get run(): Run | undefined {
		return this.current?.run;
	}

	/** Reports whether a prompt runs or a saved session is being loaded. */
	get busy(): boolean {
		return this.current !== undefined || this.loading;
	}

	/** The session the next prompt goes to; undefined when it will start a new one. */
	get currentSession(): string | undefined {
		return this.sessionId;
	}

	/** The pid client, once started (tests use it to look at the daemon). */
	get pid(): PidClient | undefined {
		return this.client;
	}

	/**
	 * assertIdle throws unless a prompt or a load may start now: an Error once disposed,
	 * BusyError while a prompt runs or a session loads.
	 */
	private assertIdle(): void {
		if (this.disposed) {
			throw new Error('the pid controller was disposed');
		}
		if (this.current) {
			throw new BusyError();
		}
		if (this.loading) {
			throw new BusyError(LOADING);
		}
	}

	/**
	 * ask runs one prompt: starts pid and a session if needed (after a crash, or when the
	 * controller continues another's session, it loads that session first: never a new one in
	 * its place), then session/prompt with the text and, when given, context (content blocks,
	 * shown as chips). It resolves to the finished Run (state done, aborted or failed), or
	 * undefined when it was cancelled before the prompt was sent. It throws BusyError while
	 * another prompt runs, and a ChatError (already shown in the chat, in VS Code's words) when
	 * pid cannot be started, the session cannot be created or loaded.
	 */
	async ask(text: string, context: readonly ContextChip[] = []): Promise<Run | undefined> {
		const run = await this.runPrompt(text, context);
		// The prompt's message now has its checkpoint: "Rewind to here" can go back to it.
		if (run && this.client && this.sessionId === run.sessionId) {
			await this.refreshCheckpoints(this.client, run.sessionId);
		}
		return run;
	}

	/** runPrompt is ask without the checkpoints' refresh after it. */
	private async runPrompt(text: string, context: readonly ContextChip[]): Promise<Run | undefined> {
		this.assertIdle();
		const source = new rpc.CancellationTokenSource();
		let settle: () => void = () => {};
		const started = new Promise<void>((resolve) => (settle = resolve));
		const cur: Current = { source, started, settle };
		this.current = cur;
		const chat = this.chat;
		this.dropOffer();
		chat.setState({ status: 'starting', running: true });
		try {
			let client: PidClient;
			try {
				client = await this.ensureClient();
				if (this.stoppedSession !== undefined) {
					await this.load(client, this.stoppedSession, undefined, true);
				}
				if (this.sessionId === undefined) {
					const params: SessionNewParams = { cwd: this.opts.cwd, ...this.opts.session };
					if (this.nextModel) {
						params.model = modelParam(this.nextModel);
					}
					if (this.nextModeId !== undefined) {
						params.mode = this.nextModeId;
					}
					const s = await client.newSession(params);
					this.sessionId = s.sessionId;
					this.nextModeId = undefined;
					chat.setState({ sessionId: s.sessionId, title: text.slice(0, 80) });
					this.showModes(s.modes);
					this.showModel(client, s.sessionId);
					this.refreshCommands(client, s.sessionId);
					if (this.note) {
						chat.notice('info', this.note);
						this.note = undefined;
					}
					this.opts.ui.appendLine(`pid: new session ${s.sessionId} (${s.tools.length} tools: ${s.tools.map((t) => t.name).join(', ')})`);
					this.showInstructions(s.instructions);
				}
			} catch (err) {
				if (err instanceof ChatError) {
					chat.setState({ status: this.stoppedSession ? 'stopped' : 'idle', running: false });
					throw err;
				}
				const f = friendlyError(err, 'start');
				chat.notice('error', f.message, f.actions.map(noticeAction));
				chat.setState({ status: this.stoppedSession ? 'stopped' : 'idle', running: false });
				this.opts.ui.appendLine(`! ${f.detail}`);
				throw new ChatError(f.message, f.actions);
			}
			if (source.token.isCancellationRequested) {
				this.opts.ui.appendLine('pid: cancelled before the prompt was sent');
				chat.setState({ status: 'idle', running: false });
				return undefined;
			}
			const sessionId = this.sessionId;
			const blocks: PromptBlock[] = context.map((c) => c.block);
			chat.userPrompt(text, context);
			chat.runStarted();
			this.changes.begin();
			const logged = blocks.length > 0 ? `${text}${text ? ' ' : ''}[+ ${context.map((c) => c.label).join(', ')}]` : text;
			const run = new Run(sessionId, logged, (e) => this.opts.ui.appendLine(e.line));
			cur.run = run;
			cur.settle();
			const sub = client.onNotification((method, params) => {
				run.handle(method, params);
				const sid = (params as { sessionId?: string } | undefined)?.sessionId;
				if (sid === sessionId) {
					this.trackChanges(method, params);
					if (!SESSION_WIDE.has(method)) {
						chat.handle(method, params);
					}
				} else if (chat.isChild(sid)) {
					// A subagent's own notifications: its steps, on its task call's card.
					this.trackChanges(method, params);
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
			this.refreshCommands(client, sessionId);
			return run;
		} finally {
			source.dispose();
			this.current = undefined;
			cur.settle();
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
	async send(text: string, mode: QueueMode = 'steer'): Promise<void> {
		// While pid starts (or loads the session) for the prompt, the message waits for it.
		if (this.current && !this.current.run) {
			await this.current.started;
		}
		const run = this.current?.run;
		if (!this.current) {
			await this.ask(text, this.chat.takeContext());
			return;
		}
		if (!run || !this.client) {
			throw new BusyError('pid is still starting: send this once the prompt runs.');
		}
		const chips = this.chat.takeContext();
		const sent = chips.length > 0 ? `${text}\n\n${blocksAsText(chips.map((c) => c.block))}` : text;
		const item = this.chat.queued(text, mode, sent, chips);
		this.opts.ui.appendLine(`pid: ${mode === 'steer' ? 'steering' : 'follow-up queued'}: ${sent}`);
		try {
			if (mode === 'steer') {
				await this.client.steer(run.sessionId, sent);
			} else {
				await this.client.followUp(run.sessionId, sent);
			}
		} catch (err) {
			this.chat.unqueue(item);
			const f = friendlyError(err, mode === 'steer' ? 'steer the run' : 'queue the follow-up');
			this.chat.notice('error', f.message, f.actions.map(noticeAction));
			throw new ChatError(f.message, f.actions);
		}
	}

	/**
	 * trackChanges snapshots a file before a write or edit pid announced (toolStart, sent
	 * before the call runs) and records it changed when the call succeeded (toolEnd).
	 */
	private trackChanges(method: string, params: unknown): void {
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
			const target = targetPath(String(p.toolName), p.args, this.opts.cwd);
			if (target && this.inWorkspace(target)) {
				this.callTargets.set(key, target);
				this.changes.willChange(target);
				this.opts.onWillChange?.(target);
			}
			return;
		}
		const target = this.callTargets.get(key);
		this.callTargets.delete(key);
		if (target && p.isError !== true) {
			this.changes.changed(target);
		}
	}

	/** The approvals pending now, by toolCallId: what Review shows. */
	private readonly asking = new Map<string, BeforeToolCallParams>();

	/** The params of the approval pending for a call (for Review), or undefined. */
	approvalParams(toolCallId: string): BeforeToolCallParams | undefined {
		return this.asking.get(toolCallId);
	}

	/** The file each write or edit call of the running prompt (or its subagents) changes, by sessionId/toolCallId. */
	private readonly callTargets = new Map<string, string>();

	/** Reports whether absPath is inside one of the workspace folders (or the session's folder when there are none). */
	private inWorkspace(absPath: string): boolean {
		const folders = (this.opts.workspaceFolders ?? []).map((f) => {
			try {
				return new URL(f.uri).pathname;
			} catch {
				return '';
			}
		}).filter((f) => f !== '').map((f) => decodeURIComponent(f));
		if (folders.length === 0 && this.opts.cwd) {
			folders.push(this.opts.cwd);
		}
		return folders.length === 0 || insideAny(path.resolve(absPath), folders) || insideAny(realPath(absPath), folders.map(realPath));
	}

	/** cancel cancels the running prompt ($/cancelRequest); false when none runs. */
	cancel(): boolean {
		if (!this.current) {
			return false;
		}
		if (!this.current.source.token.isCancellationRequested) {
			this.opts.ui.appendLine('pid: cancelling…');
			this.current.source.cancel();
		}
		return true;
	}

	/**
	 * newSession forgets the session: the next prompt starts a new conversation. params, when
	 * given, replace the options' session params for it and the sessions after it.
	 */
	newSession(params?: SessionNewParams): void {
		if (params !== undefined) {
			this.opts.session = params;
		}
		this.sessionId = undefined;
		this.note = undefined;
		this.clearStopped();
		this.offer = undefined;
		this.nextModeId = undefined;
		this.modeList = [...DEFAULT_MODES];
		this.chat.setState({ mode: modeView(this.modeList, 'default') });
		this.chat.clear();
		this.chat.setState({ sessionId: undefined, title: undefined, usage: undefined, commands: BUILTIN_COMMANDS, model: this.nextModel ? modelLabel(this.nextModel) : undefined, status: this.busy ? this.chat.state.status : 'idle' });
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
	async offerLastSession(): Promise<SessionSummary | undefined> {
		const folder = this.chat.folder;
		const untouched = () => !this.disposed && !this.busy && this.sessionId === undefined && this.stoppedSession === undefined && this.offer === undefined && this.chat.empty;
		if (folder === undefined || !path.isAbsolute(folder) || !untouched()) {
			return undefined;
		}
		let last: SessionSummary | undefined;
		try {
			const client = await this.ensureClient();
			if (!client.savesSessions) {
				return undefined;
			}
			// Sessions are listed under the folder as pid got it: as given, or resolved.
			for (const cwd of [...new Set([path.resolve(folder), realPath(folder)])]) {
				const page = await client.listSessions({ cwd });
				last = page.sessions.find((s) => s && typeof s.sessionId === 'string' && s.messageCount > 0);
				if (last) {
					break;
				}
			}
		} catch (err) {
			this.opts.ui.appendLine(`! pid: could not look for this folder's last session: ${errorText(err)}`);
			return undefined;
		}
		if (!last || !untouched()) {
			return undefined;
		}
		const title = String(last.title ?? '').replace(/\s+/g, ' ').trim() || '(no text)';
		const short = title.length > 40 ? `${title.slice(0, 39)}…` : title;
		const n = last.messageCount;
		const notice = this.chat.notice(
			'info',
			`Your last session in this folder: "${title}" (${relativeTime(last.updatedAt, new Date())}, ${n} message${n === 1 ? '' : 's'}). Resume continues it; a new message starts a new session.`,
			[{ label: `Resume "${short}"`, action: 'resumeSession', arg: last.sessionId }],
		);
		this.offer = { notice, summary: last };
		return last;
	}

	/**
	 * resumeOffered is the Resume button of offerLastSession's notice: it loads the offered
	 * session (as resume does, with the list's summary naming it). sessionId, when given, must
	 * be the offered one (else that session is resumed without a summary). It throws as resume.
	 */
	async resumeOffered(sessionId?: string): Promise<SessionLoadResult | undefined> {
		const offer = this.offer;
		const id = sessionId ?? offer?.summary.sessionId;
		if (id === undefined) {
			return undefined;
		}
		return this.resume(id, offer?.summary.sessionId === id ? offer.summary : undefined);
	}

	/** dropOffer takes offerLastSession's notice out of the chat (a prompt started, a session was loaded). */
	private dropOffer(): void {
		if (this.offer) {
			this.chat.dismiss(this.offer.notice);
			this.offer = undefined;
		}
	}

	private clearStopped(): void {
		this.stoppedSession = undefined;
		if (this.stoppedNotice) {
			this.chat.retire(this.stoppedNotice);
			this.stoppedNotice = undefined;
		}
	}

	/**
	 * resumeStopped is the chat's Resume after pid stopped: it starts pid again and loads the
	 * session it had (session/load), showing its messages. It throws (a ResumeError saying why
	 * and what to do) when the session cannot be loaded; nothing happens when none stopped.
	 */
	async resumeStopped(): Promise<SessionLoadResult | undefined> {
		const id = this.stoppedSession;
		if (id === undefined) {
			return undefined;
		}
		return this.resume(id);
	}

	/**
	 * showModel puts the session's model in the chat's Model button (models/list's current),
	 * in the background: a failure leaves the label as it was (the picker still works).
	 */
	private showModel(client: PidClient, sessionId: string): void {
		const before = this.chat.state.model;
		client.listModels(sessionId).then(
			(r) => {
				// Not over a pick made meanwhile, nor for a session no longer shown.
				if (this.sessionId === sessionId && this.chat.state.model === before) {
					this.chat.setState({ model: r.current ? modelLabel(r.current) : undefined });
				}
			},
			() => undefined,
		);
	}

	/**
	 * refreshCommands puts the session's commands (commands/list) in the prompt box's `/`
	 * completion, in the background: a failure (a pid without commands) keeps the built-in list.
	 */
	private refreshCommands(client: PidClient, sessionId: string): void {
		client.listCommands(sessionId).then(
			(list) => {
				if (this.sessionId === sessionId && list.length > 0) {
					this.chat.setState({ commands: commandViews(list) });
				}
			},
			(err) => {
				// A pid without commands keeps the built-in list quietly.
				if (errorCode(err) !== METHOD_NOT_FOUND) {
					this.opts.ui.appendLine(`! pid: could not list the commands: ${errorText(err)}`);
				}
			},
		);
	}

	/**
	 * showModes puts pid's `modes` (session/new, session/load) in the chat's mode button and
	 * keeps the list the picker and Shift+Tab go through; a pid without modes hides the button.
	 */
	private showModes(modes: unknown): void {
		const m = readModes(modes);
		if (!m) {
			this.modeList = [];
			this.chat.setState({ mode: undefined });
			return;
		}
		this.modeList = m.availableModes.length > 0 ? m.availableModes : [...DEFAULT_MODES];
		this.chat.setState({ mode: modeView(this.modeList, m.currentModeId) });
	}

	/** The modes the picker offers and the current one's id (undefined: pid has no modes). */
	get modes(): { available: SessionMode[]; current: string | undefined } {
		return { available: [...this.modeList], current: this.chat.state.mode?.id };
	}

	/**
	 * setMode switches the session's mode (session/setMode; pid's modeUpdate shows it), or,
	 * before a session exists, the mode the next one starts in. It throws a ChatError in VS
	 * Code's words when pid refuses it, BusyError while a session loads or pid starts one.
	 */
	async setMode(modeId: string): Promise<void> {
		if (this.disposed) {
			throw new Error('the pid controller was disposed');
		}
		if (this.loading) {
			throw new BusyError(LOADING);
		}
		const mode = this.modeList.find((m) => m.id === modeId);
		if (!mode) {
			throw new ChatError(this.modeList.length === 0 ? 'This pid has no modes: update pid.' : `pid does not offer the mode "${modeId}" in this session.`);
		}
		if (this.sessionId === undefined) {
			if (this.stoppedSession !== undefined) {
				throw new BusyError('pid stopped: Resume the session (or send a message) first, then switch the mode.');
			}
			if (this.current) {
				throw new BusyError('pid is still starting the session: switch the mode once the prompt runs.');
			}
			this.nextModeId = modeId === 'default' ? undefined : modeId;
			this.chat.setState({ mode: modeView(this.modeList, modeId) });
			this.opts.ui.appendLine(`pid: the next session starts in ${mode.name} mode`);
			return;
		}
		const sessionId = this.sessionId;
		try {
			await (await this.ensureClient()).setMode(sessionId, modeId);
		} catch (err) {
			const f = friendlyError(err, 'change the mode');
			throw new ChatError(f.message, f.actions);
		}
		if (this.sessionId === sessionId) {
			this.chat.setState({ mode: modeView(this.modeList, modeId) });
		}
	}

	/** cycleMode is Shift+Tab in the prompt box: the next mode of the list (setMode). */
	async cycleMode(): Promise<void> {
		const next = nextMode(this.modeList, this.chat.state.mode?.id ?? 'default');
		if (next) {
			await this.setMode(next.id);
		}
	}

	/** models lists the models the settings offer (models/list) and the session's current one. */
	async models(): Promise<ModelsListResult> {
		try {
			return await (await this.ensureClient()).listModels(this.sessionId);
		} catch (err) {
			const f = friendlyError(err, 'list the models');
			throw new ChatError(f.message, f.actions);
		}
	}

	/**
	 * setModel makes model the session's (session/setModel: the next model call uses it), or,
	 * before a session exists, the next session's. It throws a ChatError in VS Code's words.
	 */
	async setModel(model: ModelEntry): Promise<void> {
		const label = modelLabel(model);
		if (this.sessionId === undefined) {
			this.nextModel = model;
			this.chat.setState({ model: label });
			return;
		}
		try {
			await (await this.ensureClient()).setModel(this.sessionId, modelParam(model));
		} catch (err) {
			const f = friendlyError(err, 'change the model');
			throw new ChatError(f.message, f.actions);
		}
		this.chat.setState({ model: label });
		this.opts.ui.appendLine(`pid: the session's model is now ${label}`);
	}

	/** permissions lists the remembered "always" answers (permissions/list). */
	async permissions(): Promise<RememberedPermission[]> {
		try {
			return await (await this.ensureClient()).permissionsList();
		} catch (err) {
			const f = friendlyError(err, 'list the remembered answers');
			throw new ChatError(f.message, f.actions);
		}
	}

	/** revokePermission forgets one remembered answer (permissions/revoke). */
	async revokePermission(id: string): Promise<void> {
		try {
			await (await this.ensureClient()).permissionsRevoke(id);
		} catch (err) {
			const f = friendlyError(err, 'forget that answer');
			throw new ChatError(f.message, f.actions);
		}
	}

	/**
	 * listSessions lists the saved sessions (session/list), newest first, following nextCursor
	 * until max sessions (default MAX_LISTED) or the last page; onPage gets each page as it
	 * arrives (a picker can show the first while the rest load). It starts pid if needed.
	 * `more` says that sessions beyond max were left out. It throws (with pid's words) when
	 * pid cannot list them, e.g. when its state folder is unusable.
	 */
	async listSessions(opts: { max?: number; cwd?: string; onPage?: (page: SessionSummary[]) => void } = {}): Promise<{ sessions: SessionSummary[]; more: boolean }> {
		const max = opts.max ?? MAX_LISTED;
		const client = await this.ensureClient();
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
	async resume(sessionId: string, summary?: SessionSummary): Promise<SessionLoadResult> {
		this.assertIdle();
		this.loading = true;
		this.chat.setState({ status: 'loading' });
		try {
			const client = await this.ensureClient();
			return await this.load(client, sessionId, summary, false);
		} finally {
			this.loading = false;
			if (this.chat.state.status === 'loading') {
				this.chat.setState({ status: this.stoppedSession ? 'stopped' : 'idle' });
			}
		}
	}

	/**
	 * load makes sessionId the current session (session/load), shows its transcript in the log
	 * and the chat, and closes the session it replaces. quiet: a load the person did not pick
	 * (after a crash, a restart): the chat says why it happened. It throws ResumeError (shown in
	 * the chat too, as a ChatError's message) when pid cannot load it.
	 */
	private async load(client: PidClient, sessionId: string, summary: SessionSummary | undefined, quiet: boolean): Promise<SessionLoadResult> {
		if (!client.savesSessions) {
			throw new ResumeError('this pid does not keep saved sessions (its initialize result does not declare them): update pid.');
		}
		let loaded: SessionLoadResult;
		try {
			loaded = await client.loadSession(sessionId);
		} catch (err) {
			const message = loadErrorText(err, sessionId, summary?.cwd);
			this.opts.ui.appendLine(`! ${message}`);
			this.chat.notice('error', `The session could not be loaded: ${message}`, this.stoppedSession === sessionId ? [{ label: 'Try again', action: 'resume' }, { label: 'New session', action: 'newSession' }] : []);
			throw new ResumeError(message, errorCode(err));
		}
		const previous = this.sessionId;
		this.sessionId = loaded.sessionId;
		this.offer = undefined;
		const wasStopped = this.stoppedSession === sessionId;
		this.clearStopped();
		if (previous !== undefined && previous !== loaded.sessionId) {
			client.closeSession(previous).catch((err) => {
				this.opts.ui.appendLine(`! pid: could not close the previous session ${previous}: ${errorText(err)}`);
			});
		}
		this.showTranscript(loaded, summary);
		const firstUser = loaded.messages.find((m) => m && typeof m === 'object' && m.role === 'user');
		const title = summary?.title ?? (firstUser && firstUser.role === 'user' ? contentText(firstUser.content).slice(0, 80) : undefined);
		this.chat.showTranscript(loaded.messages);
		this.chat.setState({ sessionId: loaded.sessionId, title });
		this.nextModeId = undefined;
		this.showModes(loaded.modes);
		this.showModel(client, loaded.sessionId);
		this.refreshCommands(client, loaded.sessionId);
		void this.refreshCheckpoints(client, loaded.sessionId);
		this.showInstructions(loaded.instructions);
		const n = loaded.messages.filter((m) => m && typeof m === 'object' && m.role !== 'compaction').length;
		if (wasStopped || quiet) {
			this.chat.notice('info', `pid was started again and the saved session was loaded (${n} message${n === 1 ? '' : 's'}): ${quiet ? 'your message continues it' : 'the next message continues it'}.`);
		} else {
			this.chat.notice('info', `Resumed "${(title ?? '').replace(/\s+/g, ' ').trim() || loaded.sessionId}" (${n} message${n === 1 ? '' : 's'}): the next message continues it.`);
		}
		return loaded;
	}

	/** showInstructions shows the instruction files the model gets (session/new's or session/load's) in the chat and the log. */
	private showInstructions(files: InstructionFile[] | undefined): void {
		const folders = (this.opts.workspaceFolders ?? []).map((f) => firstFolder([f])).filter((f): f is string => f !== undefined);
		const item = this.chat.instructions(files, folders);
		if (item) {
			this.opts.ui.appendLine(`pid: ${instructionsLine(item.files)}`);
		}
	}

	/** showTranscript writes a loaded session to the UI: a header, its items, a footer. */
	private showTranscript(loaded: SessionLoadResult, summary?: SessionSummary): void {
		const ui = this.opts.ui;
		const messages = loaded.messages.filter((m) => m && typeof m === 'object' && m.role !== 'compaction');
		const firstUser = messages.find((m) => m.role === 'user');
		const title = (summary?.title ?? (firstUser ? contentText(firstUser.content).slice(0, 80) : '')).replace(/\s+/g, ' ').trim();
		const where = summary?.cwd ? `, in ${summary.cwd}` : '';
		ui.appendLine('');
		ui.appendLine(`pid: resumed session ${loaded.sessionId}${title ? ` "${title}"` : ''} (${messages.length} message${messages.length === 1 ? '' : 's'}${where})`);
		for (const e of transcriptEntries(loaded.messages)) {
			ui.appendLine(e.line);
		}
		ui.appendLine('pid: — end of the saved transcript: "pid: Ask" continues this session —');
	}

	/** False once pid said it has no checkpoints for this session (settings, or an older pid): no more asking. */
	private checkpointsOff = new Set<string>();

	/**
	 * refreshCheckpoints asks pid for the session's checkpoints (checkpoints/list) and gives
	 * each of the person's messages in the chat its own (mapCheckpoints), so that the view
	 * offers "Rewind to here" on them. It never throws: without checkpoints there is no button.
	 */
	async refreshCheckpoints(client: PidClient | undefined = this.client, sessionId: string | undefined = this.sessionId): Promise<void> {
		if (!client || sessionId === undefined || this.checkpointsOff.has(sessionId) || !client.alive) {
			return;
		}
		let cps: Checkpoint[];
		try {
			cps = await client.listCheckpoints(sessionId);
		} catch (err) {
			// pid refused (checkpoints off, or a pid without them): no more asking for this session.
			if (client.alive && errorCode(err) !== undefined) {
				this.checkpointsOff.add(sessionId);
				this.opts.ui.appendLine(`pid: no rewind in this session: ${errorText(err)}`);
			}
			return;
		}
		if (this.sessionId !== sessionId) {
			return;
		}
		this.applyCheckpoints(cps);
	}

	private applyCheckpoints(cps: readonly Checkpoint[]): void {
		const users = this.chat.userItems();
		const found = mapCheckpoints(users.map((u) => ({ text: u.text, ...(u.at !== undefined ? { at: u.at } : {}) })), cps);
		const byItem = new Map<string, string>();
		users.forEach((u, i) => {
			const c = found[i];
			if (c) {
				byItem.set(u.id, c.id);
			}
		});
		this.chat.setCheckpoints(byItem);
	}

	/**
	 * rewindPlan is the first step of "Rewind to here" on the chat's message itemId: the
	 * message's checkpoint as pid lists it now (checkpoints/list) and what a rewind of the
	 * files would take back (checkpoints/diff). It throws BusyError while a prompt runs or a
	 * session loads, and a ChatError in words when the message has no checkpoint or pid fails.
	 */
	async rewindPlan(itemId: string): Promise<RewindPlan> {
		this.assertIdle();
		const sessionId = this.sessionId;
		const client = this.client;
		const item = this.chat.get(itemId);
		if (this.stoppedSession !== undefined) {
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
		if (this.sessionId === sessionId) {
			this.applyCheckpoints(cps);
		}
		const id = (this.chat.get(itemId) as typeof item).checkpointId;
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
	async rewind(plan: { sessionId: string; itemId: string; checkpoint: Checkpoint }, restore: RewindRestore, force = false): Promise<RewindResult> {
		this.assertIdle();
		const client = this.client;
		if (this.sessionId !== plan.sessionId || !client?.alive) {
			throw new ChatError('The session changed since: open the message again to rewind.');
		}
		this.loading = true;
		this.chat.setState({ status: 'loading' });
		let r: RewindResult;
		try {
			try {
				r = await client.rewind({ sessionId: plan.sessionId, checkpointId: plan.checkpoint.id, restore, ...(force ? { force: true } : {}) });
			} catch (err) {
				const f = friendlyError(err, 'rewind');
				this.chat.notice('error', f.message, f.actions.map(noticeAction));
				throw new ChatError(f.message, f.actions);
			}
			if (restore !== 'conversation') {
				this.chat.retireChanges();
			}
			this.opts.ui.appendLine(`pid: rewound to checkpoint ${plan.checkpoint.id} (${restore}${force ? ', forced' : ''}): restored ${r.restored.length}, removed ${r.removed.length}, skipped ${r.skipped.length}${r.skipped.map((s) => `\n  skipped ${s.path}: ${s.reason}`).join('')}`);
			if (restore !== 'files') {
				await this.redrawConversation(client, plan);
			}
			const report = rewindReport(plan.checkpoint.prompt, restore, r, this.chat.folder);
			this.chat.notice(report.level, report.text);
			await this.refreshCheckpoints(client, plan.sessionId);
			return r;
		} finally {
			this.loading = false;
			if (this.chat.state.status === 'loading') {
				this.chat.setState({ status: this.stoppedSession ? 'stopped' : 'idle' });
			}
		}
	}

	/** redrawConversation shows the session's conversation after a rewind: pid's (session/load), else the chat's without the rewound messages. */
	private async redrawConversation(client: PidClient, plan: { sessionId: string; itemId: string }): Promise<void> {
		try {
			const loaded = await client.loadSession(plan.sessionId);
			this.chat.showTranscript(loaded.messages);
			this.showInstructions(loaded.instructions);
			if (loaded.modes) {
				this.showModes(loaded.modes);
			}
		} catch (err) {
			this.opts.ui.appendLine(`! pid: could not reload the conversation after the rewind (${errorText(err)}): the chat drops the rewound messages instead`);
			this.chat.dropFrom(plan.itemId);
		}
	}

	/** trustedFolders lists the folders the user trusts (trust/list), starting pid if needed. */
	async trustedFolders(): Promise<TrustedFolder[]> {
		return (await this.ensureClient()).trustList();
	}

	/** grantTrust trusts a folder (trust/grant), starting pid if needed. */
	async grantTrust(folder: string): Promise<void> {
		await (await this.ensureClient()).trustGrant(folder);
		this.opts.ui.appendLine(`pid: ${folder} is trusted: its .pid/settings.json applies in full`);
	}

	/** revokeTrust stops trusting a folder (trust/revoke), starting pid if needed. */
	async revokeTrust(folder: string): Promise<void> {
		await (await this.ensureClient()).trustRevoke(folder);
		this.opts.ui.appendLine(`pid: ${folder} is no longer trusted: its .pid/settings.json may only narrow what pid does`);
	}

	/** dispose cancels what runs and shuts pid down (killing it if it does not exit in time). */
	async dispose(): Promise<void> {
		this.disposed = true;
		this.cancel();
		this.changesSub.dispose();
		const client = this.client ?? (await this.starting?.catch(() => undefined));
		this.client = undefined;
		if (client) {
			await client.shutdown();
		}
	}

	private ensureClient(): Promise<PidClient> {
		if (this.client?.alive) {
			return Promise.resolve(this.client);
		}
		if (!this.starting) {
			this.starting = this.startClient().finally(() => {
				this.starting = undefined;
			});
		}
		return this.starting;
	}

	private async startClient(): Promise<PidClient> {
		const { ui, session: _session, startAfter, ...clientOpts } = this.opts;
		void _session;
		await startAfter?.catch(() => undefined);
		if (this.disposed) {
			throw new Error('the pid controller was disposed');
		}
		const { chat: _chat, editorFiles, editorDiagnostics, onWillChange: _owc, fileAccess: _fa, stoppedSession: _ss, newSessionNote: _nn, ...rest } = clientOpts;
		void _chat;
		void _owc;
		void _fa;
		void _ss;
		void _nn;
		const client = await PidClient.start({
			...rest,
			onBeforeToolCall: (params, token) => this.approve(params, token),
			onRequestTrust: ui.askTrust ? (params, token) => this.trust(params, token) : undefined,
			onStderr: (text) => this.stderr(text),
			onElicitation: (params, token) => this.elicit(params, token),
			...(editorDiagnostics ? { onDiagnostics: (params: EditorDiagnosticsParams, token: rpc.CancellationToken) => this.diagnostics(editorDiagnostics, params, token) } : {}),
			...(editorFiles
				? {
						onReadTextFile: async (p: { path: string; line?: number; limit?: number }) => {
							const abs = this.checkPath(p?.path);
							return sliceLines(await editorFiles.read(abs), p.line, p.limit);
						},
						onWriteTextFile: async (p: { path: string; content: string }) => {
							const abs = this.checkPath(p?.path);
							if (typeof p.content !== 'string') {
								throw new Error('no content to write');
							}
							this.changes.willChange(abs);
							await editorFiles.write(abs, p.content);
							this.changes.changed(abs);
						},
					}
				: {}),
		});
		const info = client.initializeResult?.serverInfo;
		ui.appendLine(`pid: started ${this.opts.command}${info ? ` (${info.name} ${info.version ?? ''})` : ''}`);
		this.client = client;
		this.sessionId = undefined;
		this.chat.setState({ sessionId: undefined });
		client.onNotification((method, params) => {
			// Messages pid logs while no prompt runs (the run logs the others), and what it
			// wants shown (a broken settings file), still reach the user.
			const message = (params as { message?: string } | undefined)?.message ?? '';
			if ((method === 'window/logMessage' && !this.current?.run) || method === 'window/showMessage') {
				ui.appendLine(`! pid: ${message}`);
			}
			// The plan, the context meter and a command's output, in a run or not (the plan
			// follows session/load's and session/rewind's answers).
			if (SESSION_WIDE.has(method) && this.client === client && (params as { sessionId?: unknown } | undefined)?.sessionId === this.sessionId && this.sessionId !== undefined) {
				this.chat.handle(method, params);
				if (method === 'commandOutput') {
					const c = params as { name?: unknown; text?: unknown; isError?: unknown };
					ui.appendLine(`pid: /${String(c.name)}${c.isError === true ? ' failed' : ''}: ${String(c.text)}`);
				}
			}
			// The mode changes by session/setMode and by an approved plan, in a run or not.
			if (method === 'modeUpdate') {
				const p = params as { sessionId?: unknown; currentModeId?: unknown } | undefined;
				if (this.client === client && p?.sessionId === this.sessionId && typeof p?.currentModeId === 'string' && p.currentModeId !== '') {
					const view = modeView(this.modeList, p.currentModeId);
					if (this.chat.state.mode?.id !== view.id) {
						ui.appendLine(`pid: the session is now in ${view.name} mode`);
					}
					this.chat.setState({ mode: view });
				}
			}
		});
		void client.exited.then((e) => {
			if (this.client === client) {
				this.client = undefined;
				const lost = this.sessionId;
				this.sessionId = undefined;
				if (this.disposed) {
					return;
				}
				if (lost !== undefined && client.savesSessions) {
					// Never a new session in its place: the next prompt (or Resume) loads this one.
					this.stoppedSession = lost;
					ui.appendLine(`pid: the daemon ${describeExit(e)}; the session ${lost} was saved: the next prompt (or Resume) starts pid again and loads it`);
					this.stoppedNotice = this.chat.notice('error', `pid stopped (${describeExit(e).replace(/^was /, '')}); the session was saved. Resume starts pid again and continues it.`, [{ label: 'Resume', action: 'resume' }]);
					this.chat.setState({ status: 'stopped' });
				} else {
					ui.appendLine(`pid: the daemon ${describeExit(e)}; the next prompt starts it again (in a new session)`);
					this.chat.notice('error', `pid stopped (${describeExit(e)}); the next message starts it again.`);
				}
			}
		});
		return client;
	}

	private stderr(text: string): void {
		const all = this.stderrLine + text;
		const ls = all.split('\n');
		this.stderrLine = ls.pop() ?? '';
		for (const l of ls) {
			if (l.trim() !== '') {
				this.opts.ui.appendLine(`pid stderr: ${l}`);
			}
		}
	}

	/** diagnostics answers editor/diagnostics through the editor and logs how long its language servers took. */
	private async diagnostics(source: NonNullable<ControllerOptions['editorDiagnostics']>, params: EditorDiagnosticsParams, token: rpc.CancellationToken): Promise<Diagnostic[]> {
		const t0 = Date.now();
		const n = Array.isArray(params?.paths) ? params.paths.length : 0;
		const r = await source(params, token);
		const errors = r.filter((d) => d?.severity === 1).length;
		this.opts.ui.appendLine(`pid: the editor's problems of ${n === 0 ? 'every file' : `${n} file${n === 1 ? '' : 's'}`} after ${Date.now() - t0} ms: ${r.length} problem${r.length === 1 ? '' : 's'}, ${errors} error${errors === 1 ? '' : 's'}${token.isCancellationRequested ? ' (pid stopped waiting)' : ''}`);
		return r;
	}

	/** trust puts a workspace/requestTrust question to the UI and logs it and its answer. */
	private async trust(params: RequestTrustParams, token: rpc.CancellationToken): Promise<RequestTrustAnswer> {
		const folder = String(params?.folder);
		const ignored = Array.isArray(params?.ignored) ? params.ignored.map(String) : [];
		this.opts.ui.appendLine(`pid: the workspace folder ${folder} is not trusted; pid ignored from its .pid/settings.json: ${ignored.join('; ') || '(nothing named)'}`);
		let trusted = false;
		try {
			trusted = (await this.opts.ui.askTrust?.({ folder, ignored }, token)) === true;
		} catch (err) {
			this.opts.ui.appendLine(`! pid: could not ask whether to trust ${folder}: ${errorText(err)}`);
		}
		if (!token.isCancellationRequested) {
			this.opts.ui.appendLine(trusted ? `pid: trusting ${folder}` : `pid: ${folder} stays restricted: its settings may only narrow what pid does`);
		}
		return { trusted };
	}

	/**
	 * checkPath takes a path of pid's file requests: absolute and inside the workspace
	 * folders, or it throws (pid never asks for others; the editor does not serve them).
	 */
	private checkPath(p: unknown): string {
		if (typeof p !== 'string' || !path.isAbsolute(p)) {
			throw new Error(`the path must be absolute, not ${JSON.stringify(p)}`);
		}
		if (!this.inWorkspace(p)) {
			throw new Error(`${p} is outside the workspace folders`);
		}
		return path.resolve(p);
	}

	/** elicit shows an MCP server's question in the chat and answers with the person's form. */
	private elicit(params: ElicitationParams, token: rpc.CancellationToken): Promise<ElicitationResult> {
		this.opts.ui.appendLine(`pid: an MCP server${params?._meta?.pid?.server ? ` (${params._meta.pid.server})` : ''} asks: ${params?.message}`);
		return this.chat.askElicitation(params, (cb) => {
			if (token.isCancellationRequested) {
				cb();
			} else {
				token.onCancellationRequested(cb);
			}
		});
	}

	/**
	 * approve puts a beforeToolCall question on the call's card in the chat (and to the UI's
	 * askApproval when it has one), logs it in the run, and answers pid with the first answer.
	 */
	private async approve(params: BeforeToolCallParams, token: rpc.CancellationToken): Promise<BeforeToolCallAnswer> {
		const q = question(params);
		// A subagent's call asks with its own session and its parent's.
		const run = this.current?.run && [params.sessionId, params.parentSessionId].includes(this.current.run.sessionId) ? this.current.run : undefined;
		const key = this.chat.approvalKey(params);
		run?.approvalAsked(params.toolCallId, params.toolName, q.title);
		let withdraw: (() => void) | undefined;
		const withdrawn = new Promise<'withdrawn'>((resolve) => {
			if (token.isCancellationRequested) {
				resolve('withdrawn');
			}
			const sub = token.onCancellationRequested(() => resolve('withdrawn'));
			withdraw = () => sub.dispose();
		});
		this.asking.set(key, params);
		const fromChat = this.chat.askApproval(params, q, reviewableCall(params));
		const askUi = this.opts.ui.askApproval;
		const fromUi = askUi
			? askUi.call(this.opts.ui, q, token).then((c) => ({ ui: true as const, c: typeof c === 'string' || c === undefined ? (c === undefined ? undefined : { choice: c }) : c }))
			: new Promise<never>(() => {});
		let a: BeforeToolCallAnswer;
		let choice: ApprovalChoice | undefined;
		try {
			const r = await Promise.race([fromChat.then((c) => ({ ui: false as const, c })), fromUi, withdrawn]);
			if (r === 'withdrawn') {
				this.chat.withdrawApproval(key);
				a = { decision: 'deny', reason: 'The approval request was withdrawn.' };
				run?.approvalAnswered(params.toolCallId, params.toolName, a, true);
				return a;
			}
			choice = r.c;
			if (r.ui) {
				// Answered outside the chat: the card shows it too (or is withdrawn when the choice fits none of its buttons).
				if (!choice || !this.chat.answerApproval(key, choice.choice, choice.reason, choice.mode)) {
					this.chat.withdrawApproval(key);
				}
			}
			a = answer(choice?.choice, params.toolName, q.choices, choice?.mode);
			if (a.decision === 'deny' && choice?.reason) {
				// The reason as typed: pid puts it in its own sentence for the model ("The user
				// denied this call of NAME: REASON"; a plan's in plan mode's).
				a = { decision: 'deny', reason: choice.reason };
			}
		} catch (err) {
			// Answered with an error (client.ts): the person denied nothing.
			// The run's toolEnd says what pid made of it.
			this.chat.withdrawApproval(key);
			throw err;
		} finally {
			withdraw?.();
			this.asking.delete(key);
		}
		run?.approvalAnswered(params.toolCallId, params.toolName, a, false, q.always?.description);
		return a;
	}
}

/** What "Rewind to here" goes back to (PidController.rewindPlan): the message, its checkpoint, the diff since. */
export interface RewindPlan {
	sessionId: string;
	/** The chat item of the message. */
	itemId: string;
	/** The message's text as the chat showed it. */
	text: string;
	checkpoint: Checkpoint;
	files: CheckpointFileDiff[];
}

/** reviewableCall reports whether the call's card offers Review (a diff of a write or an edit). */
function reviewableCall(params: BeforeToolCallParams): boolean {
	return reviewable(params.toolName, params.args);
}

/** modelParam is a models/list entry as session/new and session/setModel take it (without its display name). */
export function modelParam(m: ModelEntry): ModelEntry {
	const { name: _name, ...rest } = m;
	void _name;
	return rest as ModelEntry;
}

/** modelLabel names a model for the Model button: its name, else provider/id. */
export function modelLabel(m: ModelEntry): string {
	return m.name ?? (m.id ? `${m.provider}/${m.id}` : m.provider);
}

/** noticeAction turns an error's action into a button of the chat. */
export function noticeAction(a: ErrorAction): NoticeAction {
	switch (a.kind) {
		case 'openSettings':
			return { label: a.label, action: 'openSettings', arg: a.setting };
		case 'openFile':
			return { label: a.label, action: 'openFile', arg: a.path };
		default:
			return { label: a.label, action: a.kind };
	}
}

/** firstFolder returns the path of the first file: workspace folder, or undefined. */
function firstFolder(folders: readonly { uri: string }[] | undefined): string | undefined {
	try {
		const u = folders?.[0] ? new URL(folders[0].uri) : undefined;
		return u?.protocol === 'file:' ? decodeURIComponent(u.pathname) : undefined;
	} catch {
		return undefined;
	}
}

function realPath(p: string): string {
	try {
		return fs.realpathSync.native(p);
	} catch {
		return p;
	}
}

