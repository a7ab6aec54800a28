// Test harness: the real pid binary ($PID_BIN, else bin/pid at the repository root) driven
// through PidController with a scripted UI. Every wait is bounded; a failing test prints what
// the UI showed and what pid wrote on stderr.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { CancellationToken } from 'vscode-jsonrpc/node';
import type { ApprovalQuestion } from '../approval';
import type { ChatModel } from '../chat';
import { within, type WorkspaceFolder } from '../client';
import { PidController, type ControllerOptions, type EditorFiles, type Ui } from '../controller';
import type { RequestTrustParams, SessionNewParams } from '../protocol';

// out/test/ -> out -> editor/vscode -> editor -> the repository root.
export const PID_BIN = process.env.PID_BIN ? path.resolve(process.env.PID_BIN) : path.resolve(__dirname, '../../../../bin/pid');

export const STEP_TIMEOUT_MS = 15_000;

export { within };

/**
 * until polls pred every 5 ms and fails after ms naming what it waited for; it stops polling
 * then, so that a failed wait does not keep the test process alive.
 */
export function until(pred: () => boolean, what: string, ms = STEP_TIMEOUT_MS): Promise<void> {
	let stopped = false;
	return within(
		new Promise<void>((resolve) => {
			const poll = () => {
				if (pred()) {
					resolve();
				} else if (!stopped) {
					setTimeout(poll, 5);
				}
			};
			poll();
		}),
		what,
		ms,
	).finally(() => {
		stopped = true;
	});
}

export const text = (s: string) => [{ type: 'text', text: s }];

export interface Asked {
	q: ApprovalQuestion;
	token: CancellationToken;
	/** The UI's lines at the moment the question was asked. */
	linesThen: string[];
}

export type TrustFn = (params: RequestTrustParams) => Promise<boolean> | boolean;

/** ScriptedUi records every line and question; answerFn decides approvals, trustFn trust. */
export class ScriptedUi implements Ui {
	readonly lines: string[] = [];
	readonly asked: Asked[] = [];
	readonly trustAsked: RequestTrustParams[] = [];
	constructor(
		private readonly answerFn: (q: ApprovalQuestion, token: CancellationToken) => Promise<string | undefined> | string | undefined,
		private readonly trustFn: TrustFn = () => false,
	) {}
	appendLine(line: string): void {
		this.lines.push(line);
	}
	async askApproval(q: ApprovalQuestion, token: CancellationToken): Promise<string | undefined> {
		this.asked.push({ q, token, linesThen: this.lines.slice() });
		return this.answerFn(q, token);
	}
	async askTrust(params: RequestTrustParams): Promise<boolean> {
		this.trustAsked.push(params);
		return this.trustFn(params);
	}
}

export interface Harness {
	c: PidController;
	ui: ScriptedUi;
	/** A temporary folder removed after the test. */
	tmp: string;
	/** The workspace folder (tmp/ws) when HarnessOptions.workspace is set. */
	ws: string;
	/** The folder of pid's XDG_CONFIG_HOME (config/) and XDG_STATE_HOME (state/). */
	xdg: string;
	/** pass marks a test that ends without pid running (no diagnostics printed). */
	pass(): void;
	/** shutdown ends pid the LSP way and checks it exits with code 0. */
	shutdown(): Promise<void>;
}

export interface HarnessOptions {
	session?: SessionNewParams;
	answer?: (q: ApprovalQuestion, token: CancellationToken) => Promise<string | undefined> | string | undefined;
	/** Answers trust questions (default: not trusted). */
	trust?: TrustFn;
	/** Creates tmp/ws and sends it as the only workspace folder. */
	workspace?: boolean;
	/** With workspace: the content of tmp/ws/.pid/settings.json. */
	workspaceSettings?: string;
	workspaceFolders?: WorkspaceFolder[];
	cwd?: string;
	command?: string;
	/**
	 * pid's XDG folder (config/ and state/ in it), e.g. another harness's xdg, so that a
	 * second pid sees the first one's saved sessions. Default: tmp/xdg.
	 */
	xdg?: string;
	/** ControllerOptions.startAfter. */
	startAfter?: Promise<unknown>;
	/** ControllerOptions.editorFiles: pid reads and writes files through these. */
	editorFiles?: EditorFiles;
	/** ControllerOptions.initializationOptions. */
	initializationOptions?: Record<string, unknown>;
	/** ControllerOptions.chat: a chat another controller fed (a restart keeps it). */
	chat?: ChatModel;
	/** ControllerOptions.editorDiagnostics: the editor answers editor/diagnostics. */
	editorDiagnostics?: ControllerOptions['editorDiagnostics'];
}

export function start(t: TestContext, o: HarnessOptions = {}): Harness {
	const command = o.command ?? PID_BIN;
	if (o.command === undefined) {
		assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (cd the repository root && go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	}
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-test-'));
	// pid's settings, remembered answers and audit log go to this test's folder, never the user's.
	const ws = path.join(tmp, 'ws');
	let workspaceFolders = o.workspaceFolders;
	if (o.workspace) {
		fs.mkdirSync(ws);
		workspaceFolders = [{ uri: pathToFileURL(ws).href, name: 'ws' }];
		if (o.workspaceSettings !== undefined) {
			fs.mkdirSync(path.join(ws, '.pid'));
			fs.writeFileSync(path.join(ws, '.pid', 'settings.json'), o.workspaceSettings);
		}
	}
	const xdg = o.xdg ?? path.join(tmp, 'xdg');
	const env = { ...process.env, XDG_CONFIG_HOME: path.join(xdg, 'config'), XDG_STATE_HOME: path.join(xdg, 'state') };
	const ui = new ScriptedUi(o.answer ?? (() => 'Allow'), o.trust);
	const c = new PidController({
		command,
		env,
		cwd: o.cwd,
		workspaceFolders,
		clientInfo: { name: 'pid-vscode tests', version: '0' },
		session: o.session,
		ui,
		startAfter: o.startAfter,
		editorFiles: o.editorFiles,
		initializationOptions: o.initializationOptions,
		chat: o.chat,
		editorDiagnostics: o.editorDiagnostics,
	});
	let done = false;
	t.after(async () => {
		if (!done) {
			const pid = c.pid;
			t.diagnostic(`pid (${command}) ${pid ? (pid.alive ? 'still running' : 'exited') : 'not started'}`);
			for (const line of (pid?.stderrTail() ?? '').split('\n').filter(Boolean).slice(-40)) {
				t.diagnostic(`pid stderr: ${line}`);
			}
			t.diagnostic(`the UI showed ${ui.lines.length} lines:`);
			for (const l of ui.lines) {
				t.diagnostic(`  | ${l.replace(/\n/g, '\n  | ')}`);
			}
			c.pid?.kill();
		}
		await within(c.dispose(), 'the controller to dispose', STEP_TIMEOUT_MS).catch(() => c.pid?.kill());
		fs.rmSync(tmp, { recursive: true, force: true });
	});
	return {
		c,
		ui,
		tmp,
		ws,
		xdg,
		pass() {
			done = true;
		},
		async shutdown() {
			const pid = c.pid;
			assert.ok(pid, 'pid was started');
			const e = await within(pid.shutdown(STEP_TIMEOUT_MS), 'pid to shut down', STEP_TIMEOUT_MS * 2);
			assert.deepEqual(e, { code: 0, signal: null }, `pid's exit after shutdown and exit (stderr: ${pid.stderrTail()})`);
			done = true;
		},
	};
}

/** ask runs a prompt through the controller, bounded. */
export async function ask(h: Harness, prompt: string, what = `the answer to "${prompt}"`) {
	const run = await within(h.c.ask(prompt), what, STEP_TIMEOUT_MS);
	assert.ok(run, 'the prompt was sent');
	return run;
}
