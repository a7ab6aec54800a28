// The quick picks of pid's commands: Pick Model, Set Mode, Remembered Answers, Trusted Folders
// and Session History, each asking the conversation (PidController) for its list and telling
// it the pick. The VS Code API is given (extension.ts passes its own), so that tests can
// stand one in.

import * as fs from 'node:fs';
import * as os from 'node:os';
import type * as VSCode from 'vscode';
import { errorText } from './client';
import { BusyError, type PidController } from './controller';
import type { ModelEntry } from './protocol';
import { sessionPick, type SessionPick } from './sessions';
import type { TrustAsker } from './trust';

function realPath(p: string): string {
	try {
		return fs.realpathSync.native(p);
	} catch {
		return p;
	}
}

/**
 * pickModel is "pid: Pick Model": the models pid's settings list (models/list), the current
 * one marked; the picked one becomes the session's (session/setModel) or the next session's.
 * Without a list it says where to set one.
 */
export async function pickModel(vscode: typeof VSCode, c: PidController): Promise<void> {
	const { models, current } = await c.models();
	if (models.length === 0) {
		const open = await vscode.window.showInformationMessage(
			'pid: no models are listed. Add a "models" list to ~/.config/pid/settings.json (e.g. [{"provider": "anthropic", "id": "claude-sonnet-4-5"}]), or set "pid.model" in Settings.',
			'Open Settings',
		);
		if (open) {
			await vscode.commands.executeCommand('workbench.action.openSettings', 'pid.model');
		}
		return;
	}
	const same = (a: ModelEntry, b?: ModelEntry) => b !== undefined && a.provider === b.provider && a.id === b.id;
	type Item = VSCode.QuickPickItem & { model: ModelEntry };
	const items: Item[] = models.map((m) => ({
		label: m.name ?? m.id,
		description: `${m.provider}/${m.id}${same(m, current) ? ' · current' : ''}`,
		model: m,
	}));
	const pick = await vscode.window.showQuickPick(items, { title: 'pid: Pick Model', placeHolder: 'The model for this session (its next call)', matchOnDescription: true });
	if (pick) {
		await c.setModel(pick.model);
	}
}

/**
 * pickMode is "pid: Set Mode" (and the chat's mode button): the modes the session may switch
 * to, each with what it lets run unasked, the current one marked; the pick becomes the
 * session's mode (session/setMode), or the next session's before one exists. modeId, when
 * given (the command run with an argument), is set without asking.
 */
export async function pickMode(vscode: typeof VSCode, c: PidController, modeId?: string): Promise<void> {
	if (modeId !== undefined) {
		await c.setMode(modeId);
		return;
	}
	const { available, current } = await c.offeredModes();
	if (available.length === 0) {
		void vscode.window.showInformationMessage('pid: this pid has no modes: update pid.');
		return;
	}
	type Item = VSCode.QuickPickItem & { id: string };
	const items: Item[] = available.map((m) => ({
		label: m.name,
		description: m.id === current ? `${m.id} · current` : m.id,
		detail: m.description,
		id: m.id,
	}));
	const pick = await vscode.window.showQuickPick(items, {
		title: 'pid: Set Mode',
		placeHolder: 'What pid may do without asking (Shift+Tab in the chat\'s prompt box goes to the next mode)',
		matchOnDescription: true,
	});
	if (pick && pick.id !== current) {
		await c.setMode(pick.id);
	}
}

/**
 * rememberedAnswers is "pid: Remembered Answers": the "always" answers pid keeps per
 * workspace (permissions/list), each with what it covers; picking one (or its trash button)
 * asks to forget it (permissions/revoke).
 */
export async function rememberedAnswers(vscode: typeof VSCode, c: PidController): Promise<void> {
	const list = await c.permissions();
	if (list.length === 0) {
		void vscode.window.showInformationMessage('pid: no remembered answers: every call that asks will ask again.');
		return;
	}
	const home = os.homedir();
	type Item = VSCode.QuickPickItem & { id: string };
	const items: Item[] = list.map((p) => {
		const what = p.pattern ? `${p.tool} ${p.tool === 'bash' ? 'commands starting with' : 'on'} "${p.pattern}"` : p.path ? `${p.tool} on ${p.path}` : `every call of ${p.tool}`;
		const where = p.scope.replace(/^workspace:/, '').replace(home, '~');
		return {
			label: `${p.decision === 'allow' || p.decision === 'allowAlways' ? 'Allowed' : 'Denied'}: ${what}`,
			description: where,
			detail: 'Pick to forget it: the next such call asks again.',
			id: p.id,
			buttons: [{ iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Forget' }],
		};
	});
	const qp = vscode.window.createQuickPick<Item>();
	qp.title = 'pid: Remembered Answers';
	qp.placeholder = 'Pick an answer to forget it';
	qp.items = items;
	const picked = await new Promise<Item | undefined>((resolve) => {
		qp.onDidAccept(() => resolve(qp.selectedItems[0]));
		qp.onDidTriggerItemButton((e) => resolve(e.item));
		qp.onDidHide(() => resolve(undefined));
		qp.show();
	});
	qp.dispose();
	if (!picked) {
		return;
	}
	await c.revokePermission(picked.id);
	void vscode.window.showInformationMessage(`pid: forgotten: ${picked.label}. The next such call asks again.`);
}

/**
 * trustedFolders is the "pid: Trusted Folders" command: a QuickPick of the folders pid trusts
 * (picking one revokes it) and of this window's folders it does not (picking one trusts it;
 * offered only when VS Code trusts the workspace).
 */
export async function trustedFolders(vscode: typeof VSCode, c: PidController, trust: TrustAsker): Promise<void> {
	const trusted = await c.trustedFolders();
	type Item = VSCode.QuickPickItem & { folder: string; grant: boolean };
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
 * resumeSession is the "pid: Session History" command: a QuickPick of pid's saved sessions
 * (title, folder, when and how many messages), filled page by page as pid lists them, newest
 * first; the picked one is loaded and shown in the chat (and the log), and continued by the
 * next message; showLive, told the picked session first, shows it instead (true) when a tab
 * of the window already runs it. It throws BusyError while a prompt runs, ResumeError when pid
 * cannot load it, and pid's error when it cannot list them.
 */
export async function resumeSession(vscode: typeof VSCode, c: PidController, showLive: (sessionId: string) => boolean = () => false): Promise<void> {
	if (c.busy) {
		throw new BusyError();
	}
	type Item = VSCode.QuickPickItem & SessionPick;
	const qp = vscode.window.createQuickPick<Item>();
	qp.title = 'pid: Session History';
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
	if (!pick || showLive(pick.sessionId)) {
		return;
	}
	await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'pid is loading the session' }, () => c.resume(pick.sessionId, pick.summary));
}

