// The VS Code side of the extension, kept thin: settings, commands, the output channel, the
// approval dialog, the trust question and the saved-session picker. Everything else (pid's protocol, the run's log,
// approval and trust questions) is in modules that do not import `vscode` and are tested
// under node against pid.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { BusyError, PidController } from './controller';
import { errorText } from './client';
import { ResumeError, sessionPick, type SessionPick } from './sessions';
import { TrustAsker } from './trust';

let controller: PidController | undefined;
let stale = false;

export function activate(context: vscode.ExtensionContext): void {
	const out = vscode.window.createOutputChannel('pid');
	context.subscriptions.push(out);

	// pid's trust questions: never asked in Restricted Mode (answered "not trusted"), else a
	// non-modal warning (it arrives while a prompt may already run, which does not wait for it).
	const trust = new TrustAsker({
		isTrusted: () => vscode.workspace.isTrusted,
		show: async (p) => vscode.window.showWarningMessage(p.message, ...p.choices),
	});

	const ui = {
		appendLine: (line: string) => out.appendLine(line),
		askApproval: async (q: { title: string; detail: string; choices: readonly string[] }) => {
			// A modal dialog: Allow, Always allow (only when pid scoped it), Deny; closing it
			// (Cancel, Escape) denies.
			return vscode.window.showWarningMessage(q.title, { modal: true, detail: q.detail }, ...q.choices);
		},
		askTrust: (params: { folder: string; ignored: string[] }) => trust.ask(params),
	};

	const make = (startAfter?: Promise<unknown>): PidController => {
		const cfg = vscode.workspace.getConfiguration('pid');
		const folders = vscode.workspace.workspaceFolders ?? [];
		const model = cfg.get<Record<string, unknown> | null>('model', null);
		return new PidController({
			command: cfg.get<string>('path', 'pid') || 'pid',
			args: cfg.get<string[]>('args', []),
			cwd: folders[0]?.uri.scheme === 'file' ? folders[0].uri.fsPath : undefined,
			workspaceFolders: folders.map((f) => ({ uri: f.uri.toString(), name: f.name })),
			initializationOptions: model ? { model } : undefined,
			clientInfo: { name: 'vscode', version: vscode.version },
			ui,
			startAfter,
		});
	};

	// Settings and folders are read when pid starts; a change restarts pid once it is idle.
	const current = (): PidController => {
		let stopping: Promise<void> | undefined;
		if (controller && stale && !controller.busy) {
			stopping = controller.dispose();
			controller = undefined;
		}
		if (!controller) {
			// The next pid starts once the old one is gone: it holds the current session's file
			// until then, and "pid: Resume Session" could not load that session.
			controller = make(stopping);
			stale = false;
		}
		return controller;
	};
	context.subscriptions.push(
		vscode.workspace.onDidChangeConfiguration((e) => {
			if (e.affectsConfiguration('pid')) {
				stale = true;
			}
		}),
		vscode.workspace.onDidChangeWorkspaceFolders(() => {
			stale = true;
		}),
		// Leaving Restricted Mode: pid was told "not trusted" without the user being asked, and
		// asks once per folder per daemon; a restart (at the next prompt) lets it ask again.
		vscode.workspace.onDidGrantWorkspaceTrust(() => {
			stale = true;
		}),
	);

	context.subscriptions.push(
		vscode.commands.registerCommand('pid.ask', async () => {
			const c = current();
			if (c.busy) {
				void vscode.window.showInformationMessage(new BusyError().message);
				return;
			}
			const text = await vscode.window.showInputBox({ title: 'pid: Ask', prompt: 'What should pid do?', ignoreFocusOut: true });
			if (!text || text.trim() === '') {
				return;
			}
			out.show(true);
			try {
				const run = await vscode.window.withProgress(
					{ location: vscode.ProgressLocation.Window, title: 'pid is working' },
					() => c.ask(text),
				);
				if (run?.state === 'failed') {
					void vscode.window.showErrorMessage(`pid: the prompt failed; see the "pid" output.`);
				}
			} catch (err) {
				out.appendLine(`! ${errorText(err)}`);
				void vscode.window.showErrorMessage(`pid: ${errorText(err)}`);
			}
		}),
		vscode.commands.registerCommand('pid.cancel', () => {
			if (!controller?.cancel()) {
				void vscode.window.showInformationMessage('pid: nothing to cancel.');
			}
		}),
		vscode.commands.registerCommand('pid.newSession', () => {
			current().newSession();
			out.appendLine('pid: the next prompt starts a new session');
		}),
		vscode.commands.registerCommand('pid.resumeSession', async () => {
			try {
				await resumeSession(current(), out);
			} catch (err) {
				if (err instanceof BusyError) {
					void vscode.window.showInformationMessage(`pid: ${err.message}`);
				} else if (err instanceof ResumeError) {
					void vscode.window.showErrorMessage(`pid: ${err.message}`);
				} else {
					out.appendLine(`! ${errorText(err)}`);
					void vscode.window.showErrorMessage(`pid: ${errorText(err)}`);
				}
			}
		}),
		vscode.commands.registerCommand('pid.trustedFolders', async () => {
			try {
				await trustedFolders(current(), trust);
			} catch (err) {
				void vscode.window.showErrorMessage(`pid: ${errorText(err)}`);
			}
		}),
	);
}

function realPath(p: string): string {
	try {
		return fs.realpathSync.native(p);
	} catch {
		return p;
	}
}

/**
 * trustedFolders is the "pid: Trusted Folders" command: a QuickPick of the folders pid trusts
 * (picking one revokes it) and of this window's folders it does not (picking one trusts it;
 * offered only when VS Code trusts the workspace).
 */
async function trustedFolders(c: PidController, trust: TrustAsker): Promise<void> {
	const trusted = await c.trustedFolders();
	type Item = vscode.QuickPickItem & { folder: string; grant: boolean };
	const items: Item[] = trusted.map((f) => ({
		label: f.folder,
		description: `trusted since ${f.trustedAt}`,
		detail: 'Pick to revoke: its .pid/settings.json will only narrow what pid does.',
		folder: f.folder,
		grant: false,
	}));
	if (vscode.workspace.isTrusted) {
		for (const wf of vscode.workspace.workspaceFolders ?? []) {
			const folder = wf.uri.scheme === 'file' ? realPath(wf.uri.fsPath) : undefined;
			if (folder !== undefined && !trusted.some((f) => f.folder === folder)) {
				items.push({ label: folder, description: 'not trusted', detail: 'Pick to trust: its .pid/settings.json will apply in full.', folder, grant: true });
			}
		}
	}
	if (items.length === 0) {
		void vscode.window.showInformationMessage('pid: no folder is trusted.');
		return;
	}
	const pick = await vscode.window.showQuickPick(items, { title: 'pid: Trusted Folders', placeHolder: 'Pick a folder to revoke or grant its trust', matchOnDescription: true });
	if (!pick) {
		return;
	}
	trust.forget(pick.folder);
	if (pick.grant) {
		await c.grantTrust(pick.folder);
		void vscode.window.showInformationMessage(`pid: ${pick.folder} is trusted: its .pid/settings.json applies in full.`);
	} else {
		await c.revokeTrust(pick.folder);
		void vscode.window.showInformationMessage(`pid: ${pick.folder} is no longer trusted: its .pid/settings.json may only narrow what pid does.`);
	}
}

/**
 * resumeSession is the "pid: Resume Session" command: a QuickPick of pid's saved sessions
 * (title, folder, when and how many messages), filled page by page as pid lists them, newest
 * first; the picked one is loaded, shown in the output channel, and continued by the next
 * "pid: Ask". It throws BusyError while a prompt runs, ResumeError when pid cannot load it,
 * and pid's error when it cannot list them.
 */
async function resumeSession(c: PidController, out: vscode.OutputChannel): Promise<void> {
	if (c.busy) {
		throw new BusyError();
	}
	type Item = vscode.QuickPickItem & SessionPick;
	const qp = vscode.window.createQuickPick<Item>();
	qp.title = 'pid: Resume Session';
	qp.placeholder = 'Loading the saved sessions…';
	qp.matchOnDescription = true;
	qp.matchOnDetail = true;
	qp.keepScrollPosition = true;
	qp.busy = true;
	const now = new Date();
	const home = os.homedir();
	const current = c.currentSession;
	const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => realPath(f.uri.fsPath));
	let settled = false;
	let failed: unknown;
	let empty = false;
	const picked = new Promise<Item | undefined>((resolve) => {
		qp.onDidAccept(() => {
			const item = qp.selectedItems[0] ?? qp.activeItems[0];
			if (item) {
				resolve(item);
				qp.hide();
			}
		});
		qp.onDidHide(() => resolve(undefined));
	});
	qp.show();
	void c
		.listSessions({
			onPage: (page) => {
				if (!settled) {
					qp.items = [...qp.items, ...page.map((s) => sessionPick(s, now, { home, current, folders }))];
				}
			},
		})
		.then(
			(r) => {
				if (settled) {
					return;
				}
				qp.busy = false;
				if (r.sessions.length === 0) {
					empty = true;
					qp.hide();
					return;
				}
				qp.placeholder = r.more
					? `The newest ${r.sessions.length} sessions: type to filter, pick one to continue it`
					: 'Type to filter, pick a session to continue it';
			},
			(err) => {
				failed = err;
				qp.hide();
			},
		);
	const pick = await picked;
	settled = true;
	qp.dispose();
	if (failed !== undefined) {
		throw new Error(`could not list the saved sessions: ${errorText(failed)}`);
	}
	if (empty) {
		void vscode.window.showInformationMessage('pid: there are no saved sessions yet.');
		return;
	}
	if (!pick) {
		return;
	}
	out.show(true);
	await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'pid is loading the session' }, () => c.resume(pick.sessionId, pick.summary));
}

export async function deactivate(): Promise<void> {
	const c = controller;
	controller = undefined;
	await c?.dispose();
}
