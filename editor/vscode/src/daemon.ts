// PidDaemon is the pid process of a window: it starts pid when first needed (after the pid it
// replaces has let go of its sessions), logs its stderr, answers the requests that belong to no
// conversation (trust, the editor's problems, reading files) and hands the others (approvals,
// MCP questions, writes) to the conversation whose session they name, and tells every
// conversation attached to it when pid started or stopped. Notifications reach each
// conversation directly (client.onNotification): each takes those of its own session. No
// `vscode` import.

import * as path from 'node:path';
import type * as rpc from 'vscode-jsonrpc/node';
import { PidClient, errorText, type Exit } from './client';
import { sliceLines } from './context';
import { insideAny } from './sessions';
import { realPath, type DaemonOptions } from './state';
import { withheld, withheldText } from './trust';
import type { AllowHostAnswer, AllowHostParams, BeforeToolCallAnswer, BeforeToolCallParams, EditorDiagnosticsParams, EditorDiagnosticsResult, ElicitationParams, ElicitationResult, RequestTrustAnswer, RequestTrustParams } from './protocol';

/**
 * A conversation attached to the daemon (PidController): what the daemon asks of it. Called on
 * the extension host's one thread; none of them may throw but approve and elicit, whose
 * failure becomes pid's error answer.
 */
export interface Conversation {
	/** Reports whether sessionId is this conversation's session or one of its subagents'. */
	owns(sessionId: unknown): boolean;
	/** Reports whether a prompt of this conversation runs (its run logs pid's log messages). */
	readonly running: boolean;
	/** A new pid process started: the conversation has no session in it yet. */
	started(client: PidClient): void;
	/** The pid process stopped (e: how); its sessions are gone from it. */
	exited(client: PidClient, e: Exit): void;
	/** Answers a beforeToolCall of this conversation's session (or a subagent's). */
	approve(params: BeforeToolCallParams, token: rpc.CancellationToken): Promise<BeforeToolCallAnswer>;
	/** Answers an MCP server's question during this conversation's call. */
	elicit(params: ElicitationParams, token: rpc.CancellationToken): Promise<ElicitationResult>;
	/** pid is about to write absPath through the editor for this conversation (Undo's snapshot). */
	willWrite(absPath: string): void;
	/** pid wrote absPath through the editor for this conversation. */
	wrote(absPath: string): void;
}

/**
 * PidDaemon is one pid process at a time (see the file's comment). Used from the extension
 * host's one thread; ensureClient may be called concurrently (one start at a time), and
 * nothing of it leaves pid running after dispose().
 */
export class PidDaemon {
	private current: PidClient | undefined;
	private starting: Promise<PidClient> | undefined;
	private disposed = false;
	private stderrLine = '';
	/** The conversations attached, in the order they attached (the first one answers what names no session). */
	private readonly conversations: Conversation[] = [];

	constructor(readonly opts: DaemonOptions) {}

	/** The pid client while pid runs (undefined before it started, and once it stopped). */
	get client(): PidClient | undefined {
		return this.current;
	}

	/** attach makes c one of the conversations this pid serves (told at once when pid runs); the returned dispose detaches it. */
	attach(c: Conversation): { dispose(): void } {
		this.conversations.push(c);
		if (this.current?.alive) {
			c.started(this.current);
		}
		return {
			dispose: () => {
				const i = this.conversations.indexOf(c);
				if (i >= 0) {
					this.conversations.splice(i, 1);
				}
			},
		};
	}

	/** The conversation of a session (its own or a subagent's), else the first one attached. */
	private owner(sessionId: unknown): Conversation | undefined {
		return this.conversations.find((c) => c.owns(sessionId)) ?? this.conversations[0];
	}

	/** ensureClient resolves to the running pid, starting it when none runs; it rejects when pid cannot be started. */
	ensureClient(): Promise<PidClient> {
		if (this.current?.alive) {
			return Promise.resolve(this.current);
		}
		if (!this.starting) {
			this.starting = this.start().finally(() => {
				this.starting = undefined;
			});
		}
		return this.starting;
	}

	private async start(): Promise<PidClient> {
		const { ui, startAfter, editorFiles, editorDiagnostics, ...rest } = this.opts;
		await startAfter?.catch(() => undefined);
		if (this.disposed) {
			throw new Error('the pid controller was disposed');
		}
		const client = await PidClient.start({
			...rest,
			onBeforeToolCall: (params, token) => {
				// A subagent's call asks with its own session and its parent's.
				const to = this.conversations.find((c) => c.owns(params?.sessionId)) ?? this.owner(params?.parentSessionId);
				if (!to) {
					throw new Error('no chat is open to ask in');
				}
				return to.approve(params, token);
			},
			onRequestTrust: ui.askTrust ? (params, token) => this.trust(params, token) : undefined,
			onAllowHost: ui.askHost ? (params, token) => this.allowHost(params, token) : undefined,
			onStderr: (text) => this.stderr(text),
			onElicitation: (params, token) => {
				const to = this.owner(params?._meta?.pid?.sessionId);
				if (!to) {
					return { action: 'decline' };
				}
				return to.elicit(params, token);
			},
			...(editorDiagnostics ? { onDiagnostics: (params: EditorDiagnosticsParams, token: rpc.CancellationToken) => this.diagnostics(editorDiagnostics, params, token) } : {}),
			...(editorFiles
				? {
						onReadTextFile: async (p: { path: string; line?: number; limit?: number }) => {
							const abs = this.checkPath(p?.path);
							return sliceLines(await editorFiles.read(abs), p.line, p.limit);
						},
						onWriteTextFile: async (p: { sessionId?: string; path: string; content: string }) => {
							const abs = this.checkPath(p?.path);
							if (typeof p.content !== 'string') {
								throw new Error('no content to write');
							}
							const to = this.owner(p.sessionId);
							to?.willWrite(abs);
							await editorFiles.write(abs, p.content);
							to?.wrote(abs);
						},
					}
				: {}),
		});
		const info = client.initializeResult?.serverInfo;
		const from = this.opts.commandSource;
		const about = [info ? `${info.name} ${info.version ?? ''}`.trim() : '', from ?? ''].filter((w) => w !== '').join('; ');
		ui.appendLine(`pid: started ${this.opts.command}${about ? ` (${about})` : ''}`);
		this.current = client;
		for (const c of [...this.conversations]) {
			c.started(client);
		}
		client.onNotification((method, params) => {
			// Messages pid logs while no prompt runs (the run logs the others), and what it
			// wants shown (a broken settings file), still reach the user.
			const message = (params as { message?: string } | undefined)?.message ?? '';
			if ((method === 'window/logMessage' && !this.conversations.some((c) => c.running)) || method === 'window/showMessage') {
				ui.appendLine(`! pid: ${message}`);
			}
		});
		void client.exited.then((e) => {
			if (this.current === client) {
				this.current = undefined;
				for (const c of [...this.conversations]) {
					c.exited(client, e);
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
	private async diagnostics(source: NonNullable<DaemonOptions['editorDiagnostics']>, params: EditorDiagnosticsParams, token: rpc.CancellationToken): Promise<EditorDiagnosticsResult> {
		const t0 = Date.now();
		const n = Array.isArray(params?.paths) ? params.paths.length : 0;
		const got = await source(params, token);
		const a: EditorDiagnosticsResult = Array.isArray(got) ? { diagnostics: got } : got;
		const r = a.diagnostics;
		const errors = r.filter((d) => d?.severity === 1).length;
		const starting = a.starting?.length ? `; still starting: the language server for ${a.starting.join(', ')}` : '';
		this.opts.ui.appendLine(`pid: the editor's problems of ${n === 0 ? 'every file' : `${n} file${n === 1 ? '' : 's'}`} after ${Date.now() - t0} ms: ${r.length} problem${r.length === 1 ? '' : 's'}, ${errors} error${errors === 1 ? '' : 's'}${starting}${token.isCancellationRequested ? ' (pid stopped waiting)' : ''}`);
		return a;
	}

	/** allowHost puts a network/allowHost question to the UI and logs it and its answer. */
	private async allowHost(params: AllowHostParams, token: rpc.CancellationToken): Promise<AllowHostAnswer> {
		const what = `${String(params?.host)}:${String(params?.port)} for \`${String(params?.command)}\``;
		let a: AllowHostAnswer = { decision: 'deny' };
		try {
			a = (await this.opts.ui.askHost?.(params, token)) ?? a;
		} catch (err) {
			this.opts.ui.appendLine(`! pid: could not ask about ${what}: ${errorText(err)}`);
		}
		this.opts.ui.appendLine(`pid: network ${what}: ${token.isCancellationRequested ? 'no answer in time (refused)' : a.decision}`);
		return a;
	}

	/** trust puts a workspace/requestTrust question to the UI and logs it and its answer. */
	private async trust(params: RequestTrustParams, token: rpc.CancellationToken): Promise<RequestTrustAnswer> {
		const folder = String(params?.folder);
		const ignored = Array.isArray(params?.ignored) ? params.ignored.map(String) : [];
		this.opts.ui.appendLine(`pid: the workspace folder ${folder} is not trusted, so pid ${withheldText(withheld(ignored))}`);
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

	/** Reports whether absPath is inside one of the workspace folders (or pid's folder when there are none). */
	inWorkspace(absPath: string): boolean {
		const folders = (this.opts.workspaceFolders ?? [])
			.map((f) => {
				try {
					return new URL(f.uri).pathname;
				} catch {
					return '';
				}
			})
			.filter((f) => f !== '')
			.map((f) => decodeURIComponent(f));
		if (folders.length === 0 && this.opts.cwd) {
			folders.push(this.opts.cwd);
		}
		return folders.length === 0 || insideAny(path.resolve(absPath), folders) || insideAny(realPath(absPath), folders.map(realPath));
	}

	/** dispose shuts pid down (killing it if it does not exit in time); nothing starts after it. */
	async dispose(): Promise<void> {
		this.disposed = true;
		const client = this.current ?? (await this.starting?.catch(() => undefined));
		this.current = undefined;
		if (client) {
			await client.shutdown();
		}
	}
}
