// PidController is one conversation of the extension, without VS Code: the chat it feeds, the
// session it keeps in pid (a new one, a saved one it resumed, the one a crashed pid held), and
// every request a person makes of it. It is the entry of the modules that do its jobs, as the
// Neovim plugin is split: state.ts (what it knows, its options and errors), daemon.ts (the pid
// process: started when first needed, its requests routed by session), prompting.ts (prompts,
// steer and follow-up, Undo's snapshots, cancel), requests.ts (approvals and MCP questions in
// the chat), history.ts (saved sessions, Resume, the offer of the last one), picks.ts (mode,
// model, remembered answers, trusted folders) and checkpoints.ts (Rewind to here).
// extension.ts only supplies VS Code (the chat view, the editor's files, pickers) and the
// commands. No `vscode` import: tests drive it under plain node with a scripted UI.

import * as fs from 'node:fs';
import type * as rpc from 'vscode-jsonrpc/node';
import { ChatModel, BUILTIN_COMMANDS, jobViews, type QueueMode } from './chat';
import { ChangeTracker, type FileAccess } from './changes';
import { describeExit, errorText, type Exit, type PidClient } from './client';
import type { ContextChip } from './context';
import { PidDaemon, type Conversation } from './daemon';
import * as checkpoints from './checkpoints';
import * as history from './history';
import * as picks from './picks';
import * as prompting from './prompting';
import * as requests from './requests';
import * as review from './review';
import { DEFAULT_MODES, modeView } from './modes';
import type {
	BeforeToolCallAnswer,
	BeforeToolCallParams,
	ChangesListResult,
	ChangesUndoResult,
	ElicitationParams,
	ElicitationResult,
	ModelEntry,
	ModelsListResult,
	RememberedPermission,
	ReviewFile,
	RewindRestore,
	RewindResult,
	SessionLoadResult,
	SessionMode,
	SessionNewParams,
	SessionSummary,
	TrustedFolder,
} from './protocol';
import type { Run } from './run';
import { ControllerState, folderPath, type ControllerOptions, type DaemonOptions } from './state';

export { BusyError, ChatError, type ControllerOptions, type DaemonOptions, type EditorFiles, type Ui } from './state';
export type { RewindPlan } from './checkpoints';
export { modelLabel, modelParam, noticeAction } from './picks';

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

/** daemonOptions keeps what starting pid takes of a controller's options (not its session's). */
function daemonOptions(o: ControllerOptions): DaemonOptions {
	const { session: _s, chat: _c, fileAccess: _f, stoppedSession: _ss, newSessionNote: _n, onWillChange: _w, daemon: _d, ...rest } = o;
	void [_s, _c, _f, _ss, _n, _w, _d];
	return rest;
}

/** A running job's lines shown under the chat, and how often they are looked at again. */
const JOB_LAST_LINES = 3;
const JOB_POLL_MS = 2000;

/**
 * PidController is one window's conversation with pid: see the file's comment. Used from the
 * extension host's one thread; its async methods may interleave (a Resume while a prompt runs
 * is refused with BusyError), and none of them leaves pid running after dispose().
 */
export class PidController implements Conversation {
	private readonly s: ControllerState;
	/** Whether this controller started its daemon (else it shares one: a chat tab of the window). */
	private readonly ownsDaemon: boolean;
	private readonly subs: { dispose(): void }[] = [];
	/** The session-wide notifications of the running pid (started). */
	private notifications: { dispose(): void } | undefined;

	constructor(opts: ControllerOptions) {
		const chat = opts.chat ?? new ChatModel();
		// Paths are shown relative to the folder pid works in: the cwd, else the first workspace folder.
		chat.folder = opts.cwd ?? (opts.workspaceFolders?.[0] ? folderPath(opts.workspaceFolders[0].uri) : undefined);
		const changes = new ChangeTracker(opts.fileAccess ?? diskAccess);
		this.ownsDaemon = opts.daemon === undefined;
		const s = new ControllerState(opts, chat, changes, opts.daemon ?? new PidDaemon(daemonOptions(opts)), [...DEFAULT_MODES]);
		this.s = s;
		this.subs.push(changes.onChange(() => chat.setChanges(changes.run, changes.list())));
		// A controller that replaces another (pid restarted because its settings changed) starts
		// its new session in the mode the chat shows, so that the mode button stays true.
		const shown = chat.state.mode?.id;
		if (shown !== undefined && shown !== 'default' && DEFAULT_MODES.some((m) => m.id === shown)) {
			s.nextModeId = shown;
		} else if (shown === undefined || shown === 'bypassPermissions') {
			chat.setState({ mode: modeView(s.modeList, 'default') });
		}
		this.subs.push(s.daemon.attach(this));
	}

	/** The chat view's model: what this controller's runs show. */
	get chat(): ChatModel {
		return this.s.chat;
	}

	/** The files the last run changed, with what they held before (Undo). */
	get changes(): ChangeTracker {
		return this.s.changes;
	}

	/** The session of a pid that stopped, which Resume (or the next prompt) loads; undefined when none. */
	get stopped(): string | undefined {
		return this.s.stoppedSession;
	}

	/** The run in progress, if any. */
	get run(): Run | undefined {
		return this.s.current?.run;
	}

	/** Reports whether a prompt runs or a saved session is being loaded. */
	get busy(): boolean {
		return this.s.busy;
	}

	/** The session the next prompt goes to; undefined when it will start a new one. */
	get currentSession(): string | undefined {
		return this.s.sessionId;
	}

	/** The pid client, once started (tests use it to look at the daemon). */
	get pid(): PidClient | undefined {
		return this.s.client;
	}

	// --- prompts (prompting.ts) ---------------------------------------------------------------

	/** ask runs one prompt (see prompting.ask). */
	ask(text: string, context: readonly ContextChip[] = []): Promise<Run | undefined> {
		return prompting.ask(this.s, text, context);
	}

	/** send is the chat's prompt box: a prompt, or a message queued for the running one (see prompting.send). */
	send(text: string, mode: QueueMode = 'steer'): Promise<void> {
		return prompting.send(this.s, text, mode);
	}

	/** cancel cancels the running prompt ($/cancelRequest); false when none runs. */
	cancel(): boolean {
		return prompting.cancel(this.s);
	}

	/** The params of the approval pending for a call (for Review), or undefined. */
	approvalParams(toolCallId: string): BeforeToolCallParams | undefined {
		return this.s.asking.get(toolCallId);
	}

	/**
	 * newSession forgets the session: the next prompt starts a new conversation. params, when
	 * given, replace the options' session params for it and the sessions after it.
	 */
	newSession(params?: SessionNewParams): void {
		const s = this.s;
		if (params !== undefined) {
			s.opts.session = params;
		}
		s.sessionId = undefined;
		s.note = undefined;
		history.clearStopped(s);
		s.offer = undefined;
		s.nextModeId = undefined;
		s.modeList = [...DEFAULT_MODES];
		s.chat.setState({ mode: modeView(s.modeList, 'default') });
		s.chat.clear();
		s.chat.setState({ sessionId: undefined, title: undefined, usage: undefined, commands: BUILTIN_COMMANDS, model: s.nextModel ? picks.modelLabel(s.nextModel) : undefined, status: s.busy ? s.chat.state.status : 'idle' });
	}

	// --- saved sessions (history.ts) ----------------------------------------------------------

	/** offerLastSession offers the folder's last session in an empty chat (see history.offerLastSession). */
	offerLastSession(): Promise<SessionSummary | undefined> {
		return history.offerLastSession(this.s);
	}

	/** resumeOffered is the Resume button of offerLastSession's notice (see history.resumeOffered). */
	resumeOffered(sessionId?: string): Promise<SessionLoadResult | undefined> {
		return history.resumeOffered(this.s, sessionId);
	}

	/**
	 * resumeStopped is the chat's Resume after pid stopped: it starts pid again and loads the
	 * session it had (session/load), showing its messages. It throws (a ResumeError saying why
	 * and what to do) when the session cannot be loaded; nothing happens when none stopped.
	 */
	async resumeStopped(): Promise<SessionLoadResult | undefined> {
		const id = this.s.stoppedSession;
		if (id === undefined) {
			return undefined;
		}
		return history.resume(this.s, id);
	}

	/** resume loads a saved session and makes it the current one (see history.resume). */
	resume(sessionId: string, summary?: SessionSummary): Promise<SessionLoadResult> {
		return history.resume(this.s, sessionId, summary);
	}

	/** listSessions lists the saved sessions, newest first (see history.listSessions). */
	listSessions(opts: { max?: number; cwd?: string; onPage?: (page: SessionSummary[]) => void } = {}): Promise<{ sessions: SessionSummary[]; more: boolean }> {
		return history.listSessions(this.s, opts);
	}

	// --- mode, model, what pid remembers (picks.ts) -------------------------------------------

	/** The modes the picker offers and the current one's id (undefined: pid has no modes). */
	get modes(): { available: SessionMode[]; current: string | undefined } {
		return picks.modes(this.s);
	}

	/**
	 * offeredModes is what the mode picker lists: the session's modes, its session made first
	 * when none exists yet (before the first message), so that they are pid's own (with
	 * bypassPermissions when the user settings allow it); see prompting.prepareSession.
	 */
	async offeredModes(): Promise<{ available: SessionMode[]; current: string | undefined }> {
		await prompting.prepareSession(this.s);
		return picks.modes(this.s);
	}

	/** setMode switches the session's mode, or the next session's (see picks.setMode). */
	setMode(modeId: string): Promise<void> {
		return picks.setMode(this.s, modeId);
	}

	/** cycleMode is Shift+Tab in the prompt box: the next mode of the list. */
	cycleMode(): Promise<void> {
		return picks.cycleMode(this.s);
	}

	/** models lists the models the settings offer (models/list) and the session's current one. */
	models(): Promise<ModelsListResult> {
		return picks.models(this.s);
	}

	/** setModel makes model the session's, or the next session's (see picks.setModel). */
	setModel(model: ModelEntry): Promise<void> {
		return picks.setModel(this.s, model);
	}

	/** permissions lists the remembered "always" answers (permissions/list). */
	permissions(): Promise<RememberedPermission[]> {
		return picks.permissions(this.s);
	}

	/** revokePermission forgets one remembered answer (permissions/revoke). */
	revokePermission(id: string): Promise<void> {
		return picks.revokePermission(this.s, id);
	}

	/** trustedFolders lists the folders the user trusts (trust/list), starting pid if needed. */
	trustedFolders(): Promise<TrustedFolder[]> {
		return picks.trustedFolders(this.s);
	}

	/** grantTrust trusts a folder (trust/grant), starting pid if needed. */
	grantTrust(folder: string): Promise<void> {
		return picks.grantTrust(this.s, folder);
	}

	/** revokeTrust stops trusting a folder (trust/revoke), starting pid if needed. */
	revokeTrust(folder: string): Promise<void> {
		return picks.revokeTrust(this.s, folder);
	}

	// --- review of a prompt's changes (review.ts) ----------------------------------------------

	/** reviewList lists the latest prompt's changes, cut into hunks (see review.list). */
	reviewList(): Promise<ChangesListResult> {
		return review.list(this.s);
	}

	/** reviewed is the file of the review shown at absPath (see review.reviewed). */
	reviewed(absPath: string): ReviewFile | undefined {
		return review.reviewed(this.s, absPath);
	}

	/** reviewFiles are the files of the review shown. */
	reviewFiles(): readonly ReviewFile[] {
		return this.s.review?.files ?? [];
	}

	/** reviewUndo undoes hunks of a file (all of them when hunkIds is undefined; see review.undo). */
	reviewUndo(absPath: string, hunkIds?: string[], force = false): Promise<ChangesUndoResult> {
		return review.undo(this.s, absPath, hunkIds, force);
	}

	/** reviewKeep keeps hunks of a file, or every file's (see review.keep). */
	reviewKeep(absPath?: string, hunkIds?: string[]): Promise<string[]> {
		return review.keep(this.s, absPath, hunkIds);
	}

	/** reviewBefore is a reviewed file's text before the prompt (see review.before). */
	reviewBefore(absPath: string): Promise<string | undefined> {
		return review.before(this.s, absPath);
	}

	// --- rewind (checkpoints.ts) --------------------------------------------------------------

	/** refreshCheckpoints gives the chat's messages their checkpoints (see checkpoints.refreshCheckpoints). */
	async refreshCheckpoints(client?: PidClient, sessionId?: string): Promise<void> {
		await checkpoints.refreshCheckpoints(this.s, client ?? this.s.client, sessionId ?? this.s.sessionId);
	}

	/** rewindPlan is the first step of "Rewind to here" (see checkpoints.rewindPlan). */
	rewindPlan(itemId: string): Promise<checkpoints.RewindPlan> {
		return checkpoints.rewindPlan(this.s, itemId);
	}

	/** runFileDiff is Open diff of a file a command changed in the last run (see checkpoints.runFileDiff). */
	runFileDiff(absPath: string): Promise<string | undefined> {
		return checkpoints.runFileDiff(this.s, absPath);
	}

	/** restoreAnyway is the rewind report's "Restore them anyway" (see checkpoints.restoreAnyway). */
	restoreAnyway(checkpointId: string): Promise<RewindResult> {
		return checkpoints.restoreAnyway(this.s, checkpointId);
	}

	/** rewind goes back to a plan's checkpoint (see checkpoints.rewind). */
	rewind(plan: { sessionId: string; itemId: string; checkpoint: checkpoints.RewindPlan['checkpoint'] }, restore: RewindRestore, force = false): Promise<RewindResult> {
		return checkpoints.rewind(this.s, plan, restore, force);
	}

	// --- the daemon's side (daemon.ts's Conversation) -----------------------------------------

	/** Reports whether sessionId is this conversation's session or one of its subagents'. */
	owns(sessionId: unknown): boolean {
		return typeof sessionId === 'string' && (sessionId === this.s.sessionId || sessionId === this.s.current?.run?.sessionId || this.s.chat.isChild(sessionId));
	}

	/**
	 * refreshJobs shows the session's running jobs under the chat (jobs/list), each with its
	 * last lines (jobs/output, tail JOB_LAST_LINES); while any runs it looks again every
	 * JOB_POLL_MS. A failure leaves them as they were, in the log.
	 */
	async refreshJobs(client: PidClient, sessionId: string): Promise<void> {
		clearTimeout(this.jobsTimer);
		this.jobsTimer = undefined;
		const current = () => !this.s.disposed && this.s.client === client && this.s.sessionId === sessionId;
		try {
			const r = await client.connection.sendRequest<{ jobs?: unknown } | null>('jobs/list', { sessionId });
			const jobs = jobViews(r?.jobs);
			await Promise.all(
				jobs.map(async (j) => {
					const o = await client.connection.sendRequest<{ output?: unknown } | null>('jobs/output', { sessionId, jobId: j.jobId, tail: JOB_LAST_LINES }).catch(() => null);
					if (typeof o?.output === 'string') {
						j.last = o.output;
					}
				}),
			);
			if (current()) {
				this.s.chat.setState({ jobs });
				if (jobs.length > 0 && this.jobsTimer === undefined) {
					this.jobsTimer = setTimeout(() => void this.refreshJobs(client, sessionId), JOB_POLL_MS);
					this.jobsTimer.unref?.();
				}
			}
		} catch (err) {
			this.s.log(`! pid: jobs/list failed: ${errorText(err)}`);
		}
	}

	/** The next look at the running jobs (refreshJobs), while any runs. */
	private jobsTimer: ReturnType<typeof setTimeout> | undefined;

	/** stopJob stops a job of the session (jobs/kill: SIGTERM, SIGKILL 2 s later); its jobUpdate takes it off the list. */
	async stopJob(jobId: string): Promise<void> {
		const { client, sessionId } = this.s;
		if (client === undefined || sessionId === undefined) {
			return;
		}
		await client.connection.sendRequest('jobs/kill', { sessionId, jobId });
	}

	/** jobOutput returns what a job printed, for the person (jobs/output: the last 2000 lines pid keeps, redacted), headed by the job's id and command. */
	async jobOutput(jobId: string): Promise<string> {
		const { client, sessionId } = this.s;
		if (client === undefined || sessionId === undefined) {
			return '';
		}
		const r = await client.connection.sendRequest<{ output?: unknown; job?: { command?: unknown; running?: unknown; exitCode?: unknown } } | null>('jobs/output', { sessionId, jobId });
		const how = r?.job?.running === true ? 'running' : `ended (exit code ${String(r?.job?.exitCode)})`;
		return `${jobId}: ${String(r?.job?.command ?? '')} (${how})\n\n${typeof r?.output === 'string' ? r.output : ''}`;
	}

	/** Reports whether a prompt of this conversation runs. */
	get running(): boolean {
		return this.s.current?.run !== undefined;
	}

	/** started is told of a new pid process: the conversation has no session in it yet, and takes its session-wide notifications. */
	started(client: PidClient): void {
		const s = this.s;
		s.sessionId = undefined;
		s.chat.setState({ sessionId: undefined });
		this.notifications?.dispose();
		this.notifications = client.onNotification((method, params) => {
			// The plan, the context meter and a command's output, in a run or not (the plan
			// follows session/load's and session/rewind's answers).
			if (prompting.SESSION_WIDE.has(method) && s.client === client && (params as { sessionId?: unknown } | undefined)?.sessionId === s.sessionId && s.sessionId !== undefined) {
				s.chat.handle(method, params);
				if (method === 'commandOutput') {
					const c = params as { name?: unknown; text?: unknown; isError?: unknown };
					s.log(`pid: /${String(c.name)}${c.isError === true ? ' failed' : ''}: ${String(c.text)}`);
				}
			}
			// A job of the session started or ended (in a run or not): the running ones again.
			if (method === 'jobUpdate' && s.client === client && (params as { sessionId?: unknown } | undefined)?.sessionId === s.sessionId && s.sessionId !== undefined) {
				void this.refreshJobs(client, s.sessionId);
			}
			// The mode changes by session/setMode and by an approved plan, in a run or not.
			if (method === 'modeUpdate') {
				const p = params as { sessionId?: unknown; currentModeId?: unknown } | undefined;
				if (s.client === client && p?.sessionId === s.sessionId && typeof p?.currentModeId === 'string' && p.currentModeId !== '') {
					const view = modeView(s.modeList, p.currentModeId);
					if (s.chat.state.mode?.id !== view.id) {
						s.log(`pid: the session is now in ${view.name} mode`);
					}
					s.chat.setState({ mode: view });
				}
			}
		});
	}

	/** exited is told that pid stopped: its session is kept for Resume (never a new one in its place). */
	exited(client: PidClient, e: Exit): void {
		const s = this.s;
		const lost = s.sessionId;
		s.sessionId = undefined;
		if (s.disposed) {
			return;
		}
		if (lost !== undefined && client.savesSessions) {
			// Never a new session in its place: the next prompt (or Resume) loads this one.
			s.stoppedSession = lost;
			s.log(`pid: the daemon ${describeExit(e)}; the session ${lost} was saved: the next prompt (or Resume) starts pid again and loads it`);
			s.stoppedNotice = s.chat.notice('error', `pid stopped (${describeExit(e).replace(/^was /, '')}); the session was saved. Resume starts pid again and continues it.`, [{ label: 'Resume', action: 'resume' }]);
			s.chat.setState({ status: 'stopped' });
		} else {
			s.log(`pid: the daemon ${describeExit(e)}; the next prompt starts it again (in a new session)`);
			s.chat.notice('error', `pid stopped (${describeExit(e)}); the next message starts it again.`);
		}
	}

	/** approve answers a beforeToolCall on the call's card (see requests.approve). */
	approve(params: BeforeToolCallParams, token: rpc.CancellationToken): Promise<BeforeToolCallAnswer> {
		return requests.approve(this.s, params, token);
	}

	/** elicit answers an MCP server's question with the chat's form (see requests.elicit). */
	elicit(params: ElicitationParams, token: rpc.CancellationToken): Promise<ElicitationResult> {
		return requests.elicit(this.s, params, token);
	}

	/** willWrite snapshots a file pid is about to write through the editor (Undo). */
	willWrite(absPath: string): void {
		this.s.changes.willChange(absPath);
	}

	/** wrote records a file pid wrote through the editor as changed by the run. */
	wrote(absPath: string): void {
		this.s.changes.changed(absPath);
	}

	/**
	 * detach lets go of the daemon without closing the session in it: the daemon is being
	 * replaced (pid restarted), and a new conversation takes the chat over.
	 */
	detach(): void {
		this.s.disposed = true;
		clearTimeout(this.jobsTimer);
		this.jobsTimer = undefined;
		this.cancel();
		for (const sub of this.subs.splice(0)) {
			sub.dispose();
		}
		this.notifications?.dispose();
	}

	/**
	 * dispose cancels what runs and shuts pid down (killing it if it does not exit in time);
	 * a controller sharing its daemon (a chat tab closed) closes its session in pid instead
	 * (session/close: its file stays) and leaves the daemon running.
	 */
	async dispose(): Promise<void> {
		const s = this.s;
		this.detach();
		if (this.ownsDaemon) {
			await s.daemon.dispose();
			return;
		}
		const client = s.client;
		if (client?.alive && s.sessionId !== undefined) {
			await client.closeSession(s.sessionId).catch((err) => s.log(`! pid: could not close the session ${s.sessionId}: ${errorText(err)}`));
		}
	}
}
