// PidController is the extension without VS Code: it starts pid when first needed, keeps one
// session (a new one, or a saved one it resumed), runs prompts (one at a time) into a Run
// whose entries go to the UI as they arrive, puts approval and trust questions to the UI, and
// cancels. extension.ts only supplies the UI (an output channel, a modal dialog, a warning,
// pickers) and the commands. No `vscode` import: tests drive it under plain node with a
// scripted UI.

import * as rpc from 'vscode-jsonrpc/node';
import { answer, question, type ApprovalQuestion } from './approval';
import { PidClient, describeExit, errorCode, errorText, type ClientOptions } from './client';
import {
	contentText,
	type BeforeToolCallAnswer,
	type BeforeToolCallParams,
	type RequestTrustAnswer,
	type RequestTrustParams,
	type SessionLoadResult,
	type SessionNewParams,
	type SessionSummary,
	type TrustedFolder,
} from './protocol';
import { Run, transcriptEntries } from './run';
import { MAX_LISTED, ResumeError, loadErrorText } from './sessions';

export interface Ui {
	/** Shows one more entry of the log (the output channel). */
	appendLine(line: string): void;
	/**
	 * Asks the user; resolves to the chosen choice, or undefined when dismissed. The token is
	 * cancelled when pid withdraws the question (the answer is then ignored).
	 */
	askApproval(q: ApprovalQuestion, token: rpc.CancellationToken): Promise<string | undefined>;
	/**
	 * Decides whether to trust a workspace folder whose settings pid ignored (resolves true to
	 * trust it). Optional: without it pid is not told the editor answers trust questions, and
	 * shows a warning instead. A rejection answers false. The token is cancelled when pid gives
	 * the question up (shutdown); the answer is then ignored.
	 */
	askTrust?(params: RequestTrustParams, token: rpc.CancellationToken): Promise<boolean>;
}

export interface ControllerOptions extends Omit<ClientOptions, 'onBeforeToolCall' | 'onRequestTrust' | 'onStderr'> {
	/** session/new's params (cwd, model, scripted tools for tests...). */
	session?: SessionNewParams;
	ui: Ui;
	/**
	 * pid is started only once this settles: the shutdown of the pid this controller replaces,
	 * which holds its sessions' files until it exits (a new pid could not load them before).
	 */
	startAfter?: Promise<unknown>;
}

export class BusyError extends Error {
	constructor(message = 'pid is already answering a prompt: wait for it, or run "pid: Cancel".') {
		super(message);
	}
}

const LOADING = 'pid is loading a saved session: wait a moment, then try again.';

export class PidController {
	private client: PidClient | undefined;
	private starting: Promise<PidClient> | undefined;
	private sessionId: string | undefined;
	private current: { run?: Run; source: rpc.CancellationTokenSource } | undefined;
	/** True while resume() loads a session: no prompt may start meanwhile. */
	private loading = false;
	private disposed = false;
	private stderrLine = '';

	constructor(private readonly opts: ControllerOptions) {}

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
	 * ask runs one prompt: starts pid and a session if needed, then session/prompt. It
	 * resolves to the finished Run (state done, aborted or failed), or undefined when it was
	 * cancelled before the prompt was sent. It throws BusyError while another prompt runs,
	 * and when pid cannot be started or the session cannot be created.
	 */
	async ask(text: string): Promise<Run | undefined> {
		if (this.disposed) {
			throw new Error('the pid controller was disposed');
		}
		if (this.current) {
			throw new BusyError();
		}
		if (this.loading) {
			throw new BusyError(LOADING);
		}
		const source = new rpc.CancellationTokenSource();
		const cur: { run?: Run; source: rpc.CancellationTokenSource } = { source };
		this.current = cur;
		try {
			const client = await this.ensureClient();
			if (this.sessionId === undefined) {
				const params: SessionNewParams = { cwd: this.opts.cwd, ...this.opts.session };
				const s = await client.newSession(params);
				this.sessionId = s.sessionId;
				this.opts.ui.appendLine(`pid: new session ${s.sessionId} (${s.tools.length} tools: ${s.tools.map((t) => t.name).join(', ')})`);
			}
			if (source.token.isCancellationRequested) {
				this.opts.ui.appendLine('pid: cancelled before the prompt was sent');
				return undefined;
			}
			const run = new Run(this.sessionId, text, (e) => this.opts.ui.appendLine(e.line));
			cur.run = run;
			const sub = client.onNotification((method, params) => {
				run.handle(method, params);
			});
			try {
				run.finish(await client.prompt(this.sessionId, text, source.token));
			} catch (err) {
				run.fail(client.alive ? `the prompt failed: ${errorText(err)}` : `pid stopped during the prompt: ${errorText(err)}`);
			} finally {
				sub.dispose();
			}
			return run;
		} finally {
			source.dispose();
			this.current = undefined;
		}
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
		if (this.disposed) {
			throw new Error('the pid controller was disposed');
		}
		if (this.current) {
			throw new BusyError();
		}
		if (this.loading) {
			throw new BusyError(LOADING);
		}
		this.loading = true;
		try {
			const client = await this.ensureClient();
			if (!client.savesSessions) {
				throw new ResumeError('this pid does not keep saved sessions (its initialize result does not declare them): update pid.');
			}
			let loaded: SessionLoadResult;
			try {
				loaded = await client.loadSession(sessionId);
			} catch (err) {
				const message = loadErrorText(err, sessionId, summary?.cwd);
				this.opts.ui.appendLine(`! ${message}`);
				throw new ResumeError(message, errorCode(err));
			}
			const previous = this.sessionId;
			this.sessionId = loaded.sessionId;
			if (previous !== undefined && previous !== loaded.sessionId) {
				client.closeSession(previous).catch((err) => {
					this.opts.ui.appendLine(`! pid: could not close the previous session ${previous}: ${errorText(err)}`);
				});
			}
			this.showTranscript(loaded, summary);
			return loaded;
		} finally {
			this.loading = false;
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
		const client = await PidClient.start({
			...clientOpts,
			onBeforeToolCall: (params, token) => this.approve(params, token),
			onRequestTrust: ui.askTrust ? (params, token) => this.trust(params, token) : undefined,
			onStderr: (text) => this.stderr(text),
		});
		const info = client.initializeResult?.serverInfo;
		ui.appendLine(`pid: started ${this.opts.command}${info ? ` (${info.name} ${info.version ?? ''})` : ''}`);
		this.client = client;
		this.sessionId = undefined;
		client.onNotification((method, params) => {
			// Messages pid logs while no prompt runs (the run logs the others), and what it
			// wants shown (a broken settings file), still reach the user.
			const message = (params as { message?: string } | undefined)?.message ?? '';
			if ((method === 'window/logMessage' && !this.current?.run) || method === 'window/showMessage') {
				ui.appendLine(`! pid: ${message}`);
			}
		});
		void client.exited.then((e) => {
			if (this.client === client) {
				this.client = undefined;
				this.sessionId = undefined;
				if (!this.disposed) {
					ui.appendLine(`pid: the daemon ${describeExit(e)}; the next prompt starts it again (in a new session)`);
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

	/** approve puts a beforeToolCall question to the UI and logs it in the run. */
	private async approve(params: BeforeToolCallParams, token: rpc.CancellationToken): Promise<BeforeToolCallAnswer> {
		const q = question(params);
		const run = this.current?.run?.sessionId === params.sessionId ? this.current.run : undefined;
		run?.approvalAsked(params.toolCallId, params.toolName, q.title);
		let withdraw: (() => void) | undefined;
		const withdrawn = new Promise<'withdrawn'>((resolve) => {
			if (token.isCancellationRequested) {
				resolve('withdrawn');
			}
			const sub = token.onCancellationRequested(() => resolve('withdrawn'));
			withdraw = () => sub.dispose();
		});
		let a: BeforeToolCallAnswer;
		try {
			const r = await Promise.race([this.opts.ui.askApproval(q, token).then((choice) => ({ choice })), withdrawn]);
			if (r === 'withdrawn') {
				a = { decision: 'deny', reason: 'The approval request was withdrawn.' };
				run?.approvalAnswered(params.toolCallId, params.toolName, a, true);
				return a;
			}
			a = answer(r.choice, params.toolName, q.choices);
		} catch (err) {
			a = { decision: 'deny', reason: `The editor could not ask the user: ${errorText(err)}` };
		} finally {
			withdraw?.();
		}
		run?.approvalAnswered(params.toolCallId, params.toolName, a, false, q.always?.description);
		return a;
	}
}
