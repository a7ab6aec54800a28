// PidClient starts the pid daemon and speaks its protocol over stdio with vscode-jsonrpc
// (JSON-RPC 2.0 with LSP framing). No `vscode` import: tests run it under plain node against
// the real binary.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as rpc from 'vscode-jsonrpc/node';
import type {
	BeforeToolCallAnswer,
	BeforeToolCallParams,
	Checkpoint,
	CheckpointDiffResult,
	ChangesKeepResult,
	ChangesListResult,
	ChangesUndoResult,
	CheckpointFileDiff,
	CheckpointsListResult,
	CommandInfo,
	CommandsListResult,
	SkillInfo,
	SkillsListResult,
	AgentsListResult,
	EditorCapabilities,
	EditorDiagnosticsParams,
	EditorDiagnosticsResult,
	ElicitationParams,
	ElicitationResult,
	InitializeParams,
	InitializeResult,
	ModelEntry,
	ModelsListResult,
	PermissionsListResult,
	PromptBlock,
	PromptParams,
	PromptResult,
	QueueParams,
	ReadTextFileParams,
	ReadTextFileResult,
	RememberedPermission,
	AllowHostAnswer,
	AllowHostParams,
	RequestTrustAnswer,
	RequestTrustParams,
	RewindParams,
	RewindResult,
	SessionListParams,
	SessionListResult,
	SessionLoadResult,
	SessionNewParams,
	SessionNewResult,
	SetModelParams,
	SetModeParams,
	ToolInfo,
	ToolsListResult,
	TrustedFolder,
	TrustListResult,
	WriteTextFileParams,
} from './protocol';

export interface WorkspaceFolder {
	/** A file:// URI. */
	uri: string;
	name: string;
}

export interface ClientOptions {
	/** The pid binary: a path, or a name looked up on PATH. */
	command: string;
	args?: string[];
	/** The daemon's working folder (default: this process's). */
	cwd?: string;
	/** The daemon's whole environment (default: this process's). */
	env?: NodeJS.ProcessEnv;
	workspaceFolders?: WorkspaceFolder[];
	/** Defaults for every session (the same fields as session/new), e.g. {model}. */
	initializationOptions?: unknown;
	clientInfo?: { name: string; version?: string };
	/**
	 * Answers pid's beforeToolCall requests. The token is cancelled when pid withdraws the
	 * question (the prompt was cancelled); the answer is then ignored. A throw denies.
	 */
	onBeforeToolCall: (params: BeforeToolCallParams, token: rpc.CancellationToken) => Promise<BeforeToolCallAnswer> | BeforeToolCallAnswer;
	/**
	 * Answers pid's workspace/requestTrust requests (at most one per folder per daemon, right
	 * after a session/new answer). When set, initialize declares
	 * capabilities.experimental.pid.trust; when unset, pid shows a warning instead. A throw
	 * answers {trusted: false}; the token is cancelled when pid gives the question up
	 * (shutdown).
	 */
	onRequestTrust?: (params: RequestTrustParams, token: rpc.CancellationToken) => Promise<RequestTrustAnswer> | RequestTrustAnswer;
	/**
	 * Answers pid's network/allowHost requests (a host the allow-list does not know). When
	 * set, initialize declares capabilities.experimental.pid.networkApproval; when unset, pid
	 * refuses such hosts and names them in the result. A throw answers {decision: "deny"}; the
	 * token is cancelled when pid stops waiting (60 s).
	 */
	onAllowHost?: (params: AllowHostParams, token: rpc.CancellationToken) => Promise<AllowHostAnswer> | AllowHostAnswer;
	/**
	 * Files through the editor: when both are set, initialize declares
	 * capabilities.experimental.pid.fs {readTextFile, writeTextFile} and pid's file tools read
	 * (unsaved changes included) and write through the editor. A throw answers pid with an
	 * error naming the file; pid's tool then fails with it.
	 */
	onReadTextFile?: (params: ReadTextFileParams) => Promise<string> | string;
	onWriteTextFile?: (params: WriteTextFileParams) => Promise<void> | void;
	/**
	 * Answers an MCP server's question (elicitation/create). The token is cancelled when pid
	 * withdraws it. Unset: pid's request is answered "method not found", which declines.
	 */
	onElicitation?: (params: ElicitationParams, token: rpc.CancellationToken) => Promise<ElicitationResult> | ElicitationResult;
	/**
	 * Answers editor/diagnostics: the problems the editor's language servers report in the
	 * files a batch changed, once they reported on the new text or after params.waitMs. When
	 * set, initialize declares capabilities.experimental.pid.diagnostics. The token is
	 * cancelled when pid gives up waiting; a throw answers pid with an error (pid adds nothing).
	 */
	onDiagnostics?: (params: EditorDiagnosticsParams, token: rpc.CancellationToken) => Promise<EditorDiagnosticsResult> | EditorDiagnosticsResult;
	/** pid's stderr (its log), as it arrives. */
	onStderr?: (text: string) => void;
	/** How long start() waits for the initialize response (default 15 s). */
	startTimeoutMs?: number;
}

export type NotificationListener = (method: string, params: unknown) => void;

export interface Exit {
	code: number | null;
	signal: NodeJS.Signals | null;
	/** Set when the process could not be started (e.g. ENOENT). */
	error?: Error;
}

export interface Disposable {
	dispose(): void;
}

const STDERR_TAIL_BYTES = 16 * 1024;

/** within rejects with a message naming what was awaited when the promise takes longer than ms. */
export function within<T>(promise: Promise<T>, what: string, ms: number): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
	});
	return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class PidClient {
	readonly connection: rpc.MessageConnection;
	/** Resolves once the process is gone (never rejects). */
	readonly exited: Promise<Exit>;
	initializeResult: InitializeResult | undefined;
	private readonly child: ChildProcessWithoutNullStreams;
	private readonly listeners = new Set<NotificationListener>();
	private stderr = '';
	private exit: Exit | undefined;
	private shutDown = false;

	private constructor(opts: ClientOptions) {
		this.child = spawn(opts.command, opts.args ?? [], {
			cwd: opts.cwd,
			env: opts.env ?? process.env,
			stdio: ['pipe', 'pipe', 'pipe'],
			windowsHide: true,
		});
		this.exited = new Promise<Exit>((resolve) => {
			this.child.on('error', (error) => {
				// 'error' without 'exit' when spawning failed.
				if (this.child.pid === undefined) {
					this.exit = { code: null, signal: null, error };
					resolve(this.exit);
				}
			});
			this.child.on('exit', (code, signal) => {
				this.exit = { code, signal };
				resolve(this.exit);
			});
		});
		// Writing to a daemon that died must not crash the host; the exit is reported instead.
		this.child.stdin.on('error', () => {});
		this.child.stderr.setEncoding('utf8');
		this.child.stderr.on('data', (d: string) => {
			this.stderr = (this.stderr + d).slice(-STDERR_TAIL_BYTES);
			opts.onStderr?.(d);
		});

		this.connection = rpc.createMessageConnection(
			new rpc.StreamMessageReader(this.child.stdout),
			new rpc.StreamMessageWriter(this.child.stdin),
		);
		this.connection.onNotification((method: string, params: unknown) => {
			for (const l of [...this.listeners]) {
				l(method, params);
			}
		});
		this.connection.onRequest('beforeToolCall', async (params: BeforeToolCallParams, token: rpc.CancellationToken) => {
			try {
				return await opts.onBeforeToolCall(params, token);
			} catch (err) {
				// An error response, not a denial: the person denied nothing. pid denies the call
				// and tells the model the editor failed to ask (docs/protocol.md).
				throw new rpc.ResponseError(rpc.ErrorCodes.InternalError, `The editor could not ask the user: ${errorText(err)}`);
			}
		});
		const onTrust = opts.onRequestTrust;
		if (onTrust) {
			this.connection.onRequest('workspace/requestTrust', async (params: RequestTrustParams, token: rpc.CancellationToken) => {
				try {
					const a = await onTrust(params, token);
					return { trusted: a?.trusted === true } satisfies RequestTrustAnswer;
				} catch {
					return { trusted: false } satisfies RequestTrustAnswer;
				}
			});
		}
		const onHost = opts.onAllowHost;
		if (onHost) {
			this.connection.onRequest('network/allowHost', async (params: AllowHostParams, token: rpc.CancellationToken) => {
				try {
					return await onHost(params, token);
				} catch {
					return { decision: 'deny' } satisfies AllowHostAnswer;
				}
			});
		}
		const { onReadTextFile, onWriteTextFile, onElicitation, onDiagnostics } = opts;
		if (onDiagnostics) {
			this.connection.onRequest('editor/diagnostics', async (params: EditorDiagnosticsParams, token: rpc.CancellationToken) => {
				try {
					return (await onDiagnostics(params, token)) satisfies EditorDiagnosticsResult;
				} catch (err) {
					throw new rpc.ResponseError(rpc.ErrorCodes.InternalError, `the editor could not give the problems: ${errorText(err)}`);
				}
			});
		}
		if (onReadTextFile && onWriteTextFile) {
			this.connection.onRequest('fs/read_text_file', async (params: ReadTextFileParams) => {
				try {
					return { content: await onReadTextFile(params) } satisfies ReadTextFileResult;
				} catch (err) {
					throw new rpc.ResponseError(rpc.ErrorCodes.InternalError, `the editor could not read ${params?.path}: ${errorText(err)}`);
				}
			});
			this.connection.onRequest('fs/write_text_file', async (params: WriteTextFileParams) => {
				try {
					await onWriteTextFile(params);
					return null;
				} catch (err) {
					throw new rpc.ResponseError(rpc.ErrorCodes.InternalError, `the editor could not write ${params?.path}: ${errorText(err)}`);
				}
			});
		}
		if (onElicitation) {
			this.connection.onRequest('elicitation/create', async (params: ElicitationParams, token: rpc.CancellationToken) => {
				try {
					return await onElicitation(params, token);
				} catch {
					return { action: 'decline' } satisfies ElicitationResult;
				}
			});
		}
		this.connection.onRequest((method: string) => {
			throw new rpc.ResponseError(rpc.ErrorCodes.MethodNotFound, `the pid VS Code extension does not handle ${method}`);
		});
		// Errors reading or writing are followed by the process's exit, which is what we report.
		this.connection.onError(() => {});
		this.connection.listen();
		// Pending requests fail (rather than hang) once the daemon is gone.
		void this.exited.then(() => this.connection.dispose());
	}

	/**
	 * start spawns pid, sends initialize (workspace folders, beforeToolCall declared, trust
	 * declared when opts.onRequestTrust is set) and initialized. It fails with a message
	 * saying what went wrong: the binary is missing, it exited, or it did not answer in time.
	 */
	static async start(opts: ClientOptions): Promise<PidClient> {
		const c = new PidClient(opts);
		const folders = opts.workspaceFolders ?? [];
		// LSP's processId and clientInfo, which pid does not read, then what it reads.
		const params: InitializeParams & { processId: number; clientInfo: { name: string; version?: string } } = {
			processId: process.pid,
			clientInfo: opts.clientInfo ?? { name: 'pid-vscode', version: '0.1.0' },
			rootUri: folders.length > 0 ? folders[0].uri : null,
			workspaceFolders: folders.length > 0 ? folders : null,
			capabilities: { experimental: { pid: declared(opts) } },
			initializationOptions: opts.initializationOptions,
		};
		const diedMessage = (e: Exit) =>
			`pid (${opts.command}) ${describeExit(e)} before answering initialize${c.stderrTail() ? `; its stderr: ${c.stderrTail().trim()}` : ''}`;
		const died = c.exited.then((e) => {
			throw new Error(diedMessage(e));
		});
		died.catch(() => {}); // only start() cares, and only until initialize answers
		try {
			c.initializeResult = await within(
				Promise.race([c.connection.sendRequest<InitializeResult>('initialize', params), died]),
				`pid (${opts.command}) to answer initialize`,
				opts.startTimeoutMs ?? 15_000,
			);
			await c.connection.sendNotification('initialized', {});
		} catch (err) {
			c.kill();
			// The pending initialize is rejected when the connection is disposed at exit:
			// say why the process is gone instead.
			if (c.exit) {
				throw new Error(diedMessage(c.exit));
			}
			throw err;
		}
		return c;
	}

	/** Listens to every notification pid sends, in arrival order. */
	onNotification(listener: NotificationListener): Disposable {
		this.listeners.add(listener);
		return { dispose: () => this.listeners.delete(listener) };
	}

	newSession(params: SessionNewParams): Promise<SessionNewResult> {
		return this.connection.sendRequest<SessionNewResult>('session/new', params);
	}

	/**
	 * Runs session/prompt with text, or with content blocks when there are some (the text
	 * first among them). Cancelling the token sends $/cancelRequest: the prompt still answers,
	 * with stopReason "aborted" and what was gathered so far.
	 */
	prompt(sessionId: string, text: string, token?: rpc.CancellationToken, content?: readonly PromptBlock[]): Promise<PromptResult> {
		const params: PromptParams = { sessionId };
		if (content && content.length > 0) {
			params.content = text === '' ? [...content] : [{ type: 'text', text }, ...content];
		} else {
			params.text = text;
		}
		return this.connection.sendRequest<PromptResult>('session/prompt', params, token);
	}

	/** Queues text for the running prompt, taken after the current turn (session/steer). */
	steer(sessionId: string, text: string): Promise<null> {
		return this.connection.sendRequest<null>('session/steer', { sessionId, text } satisfies QueueParams);
	}

	/** Queues text taken when the running prompt would stop: another round (session/followUp). */
	followUp(sessionId: string, text: string): Promise<null> {
		return this.connection.sendRequest<null>('session/followUp', { sessionId, text } satisfies QueueParams);
	}

	/** The commands a person may type as `/NAME` in the session (commands/list), built-in ones first. */
	async listCommands(sessionId: string): Promise<CommandInfo[]> {
		const r = await this.connection.sendRequest<CommandsListResult | null>('commands/list', { sessionId });
		return Array.isArray(r?.commands) ? r.commands.filter((c) => c && typeof c.name === 'string' && c.name !== '') : [];
	}

	/** The session's skills (skills/list): those in use and those left out, with why. */
	async listSkills(sessionId: string): Promise<SkillInfo[]> {
		const r = await this.connection.sendRequest<SkillsListResult | null>('skills/list', { sessionId });
		return Array.isArray(r?.skills) ? r.skills.filter((x) => x && typeof x.name === 'string') : [];
	}

	/** The session's agent files (agents/list): those in use and those left out, with why. */
	async listAgents(sessionId: string): Promise<SkillInfo[]> {
		const r = await this.connection.sendRequest<AgentsListResult | null>('agents/list', { sessionId });
		return Array.isArray(r?.agents) ? r.agents.filter((x) => x && typeof x.name === 'string') : [];
	}

	/** The models the settings list (models/list), and the session's current one. */
	async listModels(sessionId?: string): Promise<ModelsListResult> {
		const r = await this.connection.sendRequest<ModelsListResult | null>('models/list', sessionId ? { sessionId } : {});
		return { models: Array.isArray(r?.models) ? r.models : [], current: r?.current ?? undefined };
	}

	/** Makes the session's next model call use model (session/setModel); saved with the session. */
	async setModel(sessionId: string, model: ModelEntry): Promise<void> {
		await this.connection.sendRequest('session/setModel', { sessionId, model } satisfies SetModelParams);
	}

	/**
	 * Switches the session's mode (session/setMode): pid sends modeUpdate before it answers
	 * when the mode changed. A mode the session is not offered is -32602.
	 */
	async setMode(sessionId: string, modeId: string): Promise<void> {
		await this.connection.sendRequest('session/setMode', { sessionId, modeId } satisfies SetModeParams);
	}

	/** The "always" answers pid remembers across restarts (permissions/list). */
	async permissionsList(): Promise<RememberedPermission[]> {
		const r = await this.connection.sendRequest<PermissionsListResult | null>('permissions/list', {});
		return Array.isArray(r?.permissions) ? r.permissions : [];
	}

	/** Forgets one remembered answer (permissions/revoke); an unknown id is -32602. */
	async permissionsRevoke(id: string): Promise<void> {
		await this.connection.sendRequest('permissions/revoke', { id });
	}

	async listTools(sessionId: string): Promise<ToolInfo[]> {
		const r = await this.connection.sendRequest<ToolsListResult>('tools/list', { sessionId });
		return r.tools;
	}

	/** Reports whether pid saves sessions (initialize's capabilities.experimental.pid.sessions). */
	get savesSessions(): boolean {
		return this.initializeResult?.capabilities?.experimental?.pid?.sessions === true;
	}

	/**
	 * One page of the saved sessions (session/list), newest first; params.cursor is the
	 * previous page's nextCursor, params.cwd (absolute) keeps one folder's.
	 */
	async listSessions(params: SessionListParams = {}): Promise<SessionListResult> {
		const r = await this.connection.sendRequest<SessionListResult | null>('session/list', params);
		return { sessions: Array.isArray(r?.sessions) ? r.sessions : [], nextCursor: typeof r?.nextCursor === 'string' && r.nextCursor !== '' ? r.nextCursor : undefined };
	}

	/**
	 * Makes a saved session live in this pid (session/load) and returns its items. Fails with
	 * -32602 for an unknown id and -32803 when another live pid holds it (see REQUEST_FAILED).
	 */
	async loadSession(sessionId: string): Promise<SessionLoadResult> {
		const r = await this.connection.sendRequest<SessionLoadResult>('session/load', { sessionId });
		return {
			sessionId: r.sessionId,
			tools: Array.isArray(r.tools) ? r.tools : [],
			messages: Array.isArray(r.messages) ? r.messages : [],
			...(r.modes && typeof r.modes === 'object' ? { modes: r.modes } : {}),
			...(Array.isArray(r.instructions) ? { instructions: r.instructions } : {}),
		};
	}

	/** Unloads a session from this pid (session/close): its file stays, another pid may load it. */
	async closeSession(sessionId: string): Promise<void> {
		await this.connection.sendRequest('session/close', { sessionId });
	}

	/** The session's checkpoints (checkpoints/list), one per prompt, oldest first. */
	async listCheckpoints(sessionId: string): Promise<Checkpoint[]> {
		const r = await this.connection.sendRequest<CheckpointsListResult | null>('checkpoints/list', { sessionId });
		return Array.isArray(r?.checkpoints) ? r.checkpoints.filter((c) => c && typeof c.id === 'string') : [];
	}

	/** What changed since before a checkpoint's prompt (checkpoints/diff): a unified diff per file. */
	async checkpointDiff(sessionId: string, checkpointId: string): Promise<CheckpointFileDiff[]> {
		const r = await this.connection.sendRequest<CheckpointDiffResult | null>('checkpoints/diff', { sessionId, checkpointId });
		return Array.isArray(r?.files) ? r.files : [];
	}

	/** The changes of a prompt (changes/list; checkpointId undefined: the latest prompt's), cut into hunks. */
	async listChanges(sessionId: string, checkpointId?: string): Promise<ChangesListResult> {
		const r = await this.connection.sendRequest<ChangesListResult | null>('changes/list', { sessionId, ...(checkpointId ? { checkpointId } : {}) });
		return { checkpointId: typeof r?.checkpointId === 'string' ? r.checkpointId : '', files: Array.isArray(r?.files) ? r.files : [] };
	}

	/** Undoes hunks of a file (changes/undo; hunkIds undefined: all of them). -32803 while a running tool may be changing it. */
	async undoChanges(sessionId: string, checkpointId: string, path: string, hunkIds?: string[], force = false): Promise<ChangesUndoResult> {
		const r = await this.connection.sendRequest<ChangesUndoResult | null>('changes/undo', { sessionId, checkpointId, path, ...(hunkIds ? { hunkIds } : {}), ...(force ? { force } : {}) });
		return { path, undone: r?.undone ?? [], skipped: r?.skipped ?? [], safetyCheckpointId: r?.safetyCheckpointId ?? '' };
	}

	/** Marks hunks as kept (changes/keep; path undefined: every file; hunkIds undefined: all of the file's). */
	async keepChanges(sessionId: string, checkpointId: string, path?: string, hunkIds?: string[]): Promise<string[]> {
		const r = await this.connection.sendRequest<ChangesKeepResult | null>('changes/keep', { sessionId, checkpointId, ...(path ? { path } : {}), ...(hunkIds ? { hunkIds } : {}) });
		return Array.isArray(r?.kept) ? r.kept : [];
	}

	/**
	 * Rewinds the session to a checkpoint (session/rewind): its files, its conversation or
	 * both. -32803 while a prompt runs, -32602 for an unknown checkpoint.
	 */
	async rewind(params: RewindParams): Promise<RewindResult> {
		const r = await this.connection.sendRequest<RewindResult | null>('session/rewind', params);
		const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
		return {
			restored: list(r?.restored),
			removed: list(r?.removed),
			skipped: Array.isArray(r?.skipped) ? r.skipped.filter((x) => x && typeof x.path === 'string').map((x) => ({ path: x.path, reason: String(x.reason ?? '') })) : [],
			safetyCheckpointId: typeof r?.safetyCheckpointId === 'string' ? r.safetyCheckpointId : '',
		};
	}

	/** The folders the user trusts (trust/list): their settings apply in full. */
	async trustList(): Promise<TrustedFolder[]> {
		const r = await this.connection.sendRequest<TrustListResult>('trust/list', {});
		return r.folders ?? [];
	}

	/** Trusts a folder (trust/grant): its settings apply in full, in running sessions too. */
	async trustGrant(folder: string): Promise<void> {
		await this.connection.sendRequest('trust/grant', { folder });
	}

	/** Stops trusting a folder (trust/revoke); fails (-32602) for a folder trust/list does not list. */
	async trustRevoke(folder: string): Promise<void> {
		await this.connection.sendRequest('trust/revoke', { folder });
	}

	/** True until the process exits. */
	get alive(): boolean {
		return this.exit === undefined;
	}

	/** The last 16 KB pid wrote on stderr. */
	stderrTail(): string {
		return this.stderr;
	}

	/**
	 * shutdown ends pid the LSP way (shutdown, exit) and waits for it to exit; it kills pid
	 * when that takes longer than timeoutMs. Returns how pid exited.
	 */
	async shutdown(timeoutMs = 5_000): Promise<Exit> {
		if (this.exit) {
			return this.exit;
		}
		if (!this.shutDown) {
			this.shutDown = true;
			try {
				await within(this.connection.sendRequest('shutdown'), 'pid to answer shutdown', timeoutMs);
				await this.connection.sendNotification('exit');
			} catch {
				this.kill();
			}
		}
		try {
			return await within(this.exited, 'pid to exit', timeoutMs);
		} catch {
			this.kill();
			return this.exited;
		}
	}

	/** Kills the process at once. */
	kill(): void {
		if (this.exit === undefined) {
			this.child.kill('SIGKILL');
		}
	}
}

/** declared is what initialize says the editor answers: capabilities.experimental.pid. */
function declared(opts: ClientOptions): EditorCapabilities {
	// usage: the chat shows the context meter (usageUpdate after each model call).
	const pid: EditorCapabilities = { beforeToolCall: true, usage: true };
	if (opts.onDiagnostics) {
		pid.diagnostics = true;
	}
	if (opts.onRequestTrust) {
		pid.trust = true;
	}
	if (opts.onAllowHost) {
		pid.networkApproval = true;
	}
	if (opts.onReadTextFile && opts.onWriteTextFile) {
		pid.fs = { readTextFile: true, writeTextFile: true };
	}
	return pid;
}

export function describeExit(e: Exit): string {
	if (e.error) {
		const code = (e.error as NodeJS.ErrnoException).code;
		if (code === 'ENOENT') {
			return 'could not be started: no such file (set pid.path to the pid binary)';
		}
		return `could not be started: ${e.error.message}`;
	}
	if (e.signal) {
		return `was killed by ${e.signal}`;
	}
	return `exited with code ${e.code}`;
}

/** pid's JSON-RPC error codes a client tells apart (docs/protocol.md, Errors). */
export const INVALID_PARAMS = -32602;
export const REQUEST_FAILED = -32803;
export const METHOD_NOT_FOUND = -32601;

/** The `data` of a failed request, when pid sent an object. */
export function errorData(err: unknown): Record<string, unknown> | undefined {
	if (err instanceof rpc.ResponseError && err.data !== null && typeof err.data === 'object' && !Array.isArray(err.data)) {
		return err.data as Record<string, unknown>;
	}
	return undefined;
}

/** The JSON-RPC error code of a failed request, or undefined when it failed otherwise. */
export function errorCode(err: unknown): number | undefined {
	return err instanceof rpc.ResponseError ? err.code : undefined;
}

export function errorText(err: unknown): string {
	return err instanceof Error ? err.message : String(err);
}
