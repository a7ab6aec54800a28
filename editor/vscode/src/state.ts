// The state of one conversation's controller (PidController, controller.ts), in one place: its
// options, the chat it feeds, the pid daemon it speaks through, its session, the prompt in
// progress, what is picked for the next session, and what pid has said about the session. The
// modules that do the controller's jobs (prompting.ts, requests.ts, history.ts, picks.ts,
// checkpoints.ts) read and write these fields here and keep none of their own, so that what a
// conversation knows at any moment can be read in this one file. The controller's options and
// errors live here too, since every module uses them. No `vscode` import.

import * as fs from 'node:fs';
import type * as rpc from 'vscode-jsonrpc/node';
import type { ApprovalQuestion } from './approval';
import type { ApprovalChoice, ChatModel, NoticeItem } from './chat';
import type { ChangeTracker, FileAccess } from './changes';
import type { ClientOptions, PidClient } from './client';
import type { ErrorAction } from './errors';
import type { PidDaemon } from './daemon';
import type { AllowHostAnswer, AllowHostParams, BeforeToolCallParams, ChangesListResult, Checkpoint, Diagnostic, EditorDiagnosticsParams, EditorDiagnosticsResult, ModelEntry, RequestTrustParams, RewindRestore, SessionMode, SessionNewParams, SessionSummary } from './protocol';
import type { Run } from './run';

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
	/**
	 * Decides about a host the allow-list does not know (network/allowHost). Optional:
	 * without it pid refuses such hosts and names them in the result. A rejection denies; the
	 * token is cancelled when pid stops waiting (60 s), and the answer is then ignored.
	 */
	askHost?(params: AllowHostParams, token: rpc.CancellationToken): Promise<AllowHostAnswer>;
}

/** The editor's own view of files: open documents with their unsaved changes. */
export interface EditorFiles {
	/** The file's text as the editor has it (an open document's, else the disk's); throws when it cannot be read. */
	read(absPath: string): Promise<string> | string;
	/** Makes the file hold content: an open document gets it as an edit and is saved; another file is written. */
	write(absPath: string, content: string): Promise<void>;
}

/** What starting pid takes (daemon.ts): the client's options without its handlers, and the editor's answers to pid's requests. */
export interface DaemonOptions extends Omit<ClientOptions, 'onBeforeToolCall' | 'onRequestTrust' | 'onAllowHost' | 'onStderr' | 'onReadTextFile' | 'onWriteTextFile' | 'onElicitation' | 'onDiagnostics'> {
	/**
	 * When set, pid asks the editor for the problems of the files a batch changed
	 * (editor/diagnostics; initialize declares capabilities.experimental.pid.diagnostics):
	 * the problems, or the whole answer (with the files whose server was still starting).
	 */
	editorDiagnostics?: (params: EditorDiagnosticsParams, token: rpc.CancellationToken) => Promise<Diagnostic[] | EditorDiagnosticsResult>;
	ui: Ui;
	/** Where `command` comes from, in words (binary.ts's sourceWords): the log says it when pid starts. */
	commandSource?: string;
	/**
	 * pid is started only once this settles: the shutdown of the pid this controller replaces,
	 * which holds its sessions' files until it exits (a new pid could not load them before).
	 */
	startAfter?: Promise<unknown>;
	/**
	 * When set, pid reads and writes files through the editor (initialize declares
	 * capabilities.experimental.pid.fs): unsaved changes are seen, edits land in the buffers.
	 */
	editorFiles?: EditorFiles;
}

export interface ControllerOptions extends DaemonOptions {
	/** Told of each file a write or edit is about to change (toolStart), so that its problems are awaited fresh. */
	onWillChange?: (absPath: string) => void;
	/** session/new's params (cwd, model, scripted tools for tests...). */
	session?: SessionNewParams;
	/** The chat this controller feeds (it outlives controllers: a restart keeps it). Default: a new one. */
	chat?: ChatModel;
	/** How Undo reads and restores files (default: the disk). */
	fileAccess?: FileAccess;
	/**
	 * The session of a pid that stopped (crashed) before this controller replaced the one that
	 * ran it: Resume and the next prompt load it, never a new session in its place.
	 */
	stoppedSession?: string;
	/** Said in the chat when this controller's first session is created (e.g. why pid was restarted). */
	newSessionNote?: string;
	/**
	 * The window's pid, shared with other conversations (chat tabs); the daemon options above
	 * are then its. Default: a pid of this controller's own, shut down with it.
	 */
	daemon?: PidDaemon;
}

/** A prompt in progress (see PidController.ask). */
export interface Current {
	run?: Run;
	source: rpc.CancellationTokenSource;
	/** Settles once the prompt was sent (run is set) or ask gave up. */
	started: Promise<void>;
	settle: () => void;
}

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

export const LOADING = 'pid is loading a saved session: wait a moment, then try again.';

/**
 * ControllerState is what one conversation knows (see the file's comment). Touched from the
 * extension host's one thread only.
 */
export class ControllerState {
	/** The session the next prompt goes to; undefined when it will start a new one. */
	sessionId: string | undefined;
	/** The prompt in progress: its run once sent; started settles once it is sent or gave up. */
	current: Current | undefined;
	/** True while a session loads (resume) or a rewind runs: no prompt may start meanwhile. */
	loading = false;
	disposed = false;
	/** The session of a pid that stopped (crashed): the next prompt or Resume loads it. */
	stoppedSession: string | undefined;
	/** The chat's notice of that stop, with its Resume button (retired once resumed). */
	stoppedNotice: NoticeItem | undefined;
	/** Said in the chat with the next new session (newSessionNote), then forgotten. */
	note: string | undefined;
	/** The model picked before a session exists: the next session/new gets it. */
	nextModel: ModelEntry | undefined;
	/** The offer to resume the folder's last session (offerLastSession), while the chat shows it. */
	offer: { notice: NoticeItem; summary: SessionSummary } | undefined;
	/** The modes the session may switch to (before a session exists: those every pid offers). */
	modeList: SessionMode[];
	/** The mode picked before a session exists: the next session/new starts in it. */
	nextModeId: string | undefined;
	/** The session/new in flight (a prompt's or the mode picker's): the other waits for it. */
	creating: Promise<void> | undefined;
	/** The approvals pending now, by the chat's approval key: what Review shows. */
	readonly asking = new Map<string, BeforeToolCallParams>();
	/** The file each write or edit call of the running prompt (or its subagents) changes, by sessionId/toolCallId. */
	readonly callTargets = new Map<string, string>();
	/** The last run's checkpoint (its files: the changed-files card, Open diff of a file a command changed). */
	runCheckpoint: { sessionId: string; id: string; run: number } | undefined;
	/** The last rewind (its message, checkpoint and what it restored): the report's "Restore them anyway" repeats it with force. */
	lastRewind: { sessionId: string; itemId: string; checkpoint: Checkpoint; restore: RewindRestore } | undefined;
	/** The review shown (review.ts): the last changes/list of the session's prompt, its files cut into hunks. */
	review: ({ sessionId: string } & ChangesListResult) | undefined;
	/** The sessions pid said have no checkpoints (settings, or an older pid): no more asking. */
	readonly checkpointsOff = new Set<string>();

	constructor(
		readonly opts: ControllerOptions,
		/** The chat view's model: what this controller's runs show. */
		readonly chat: ChatModel,
		/** The files the last run changed, with what they held before (Undo). */
		readonly changes: ChangeTracker,
		/** The pid process this conversation speaks through. */
		readonly daemon: PidDaemon,
		modeList: SessionMode[],
	) {
		this.modeList = modeList;
		this.stoppedSession = opts.stoppedSession;
		this.note = opts.newSessionNote;
	}

	/** The pid client while pid runs (undefined before it started and once it stopped). */
	get client(): PidClient | undefined {
		return this.daemon.client;
	}

	/** log writes one line to the UI's log. */
	log(line: string): void {
		this.opts.ui.appendLine(line);
	}

	/** Reports whether a prompt runs or a saved session is being loaded. */
	get busy(): boolean {
		return this.current !== undefined || this.loading;
	}

	/**
	 * assertIdle throws unless a prompt or a load may start now: an Error once disposed,
	 * BusyError while a prompt runs or a session loads.
	 */
	assertIdle(): void {
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

	/** The folders of the workspace (file: URIs only), as paths. */
	folders(): string[] {
		return (this.opts.workspaceFolders ?? []).map((f) => folderPath(f.uri)).filter((f): f is string => f !== undefined);
	}
}

/** folderPath returns the path of a file: URI, or undefined for another URI. */
export function folderPath(uri: string): string | undefined {
	try {
		const u = new URL(uri);
		return u.protocol === 'file:' ? decodeURIComponent(u.pathname) : undefined;
	} catch {
		return undefined;
	}
}

/** realPath resolves p's links, or returns p when it cannot be resolved. */
export function realPath(p: string): string {
	try {
		return fs.realpathSync.native(p);
	} catch {
		return p;
	}
}
