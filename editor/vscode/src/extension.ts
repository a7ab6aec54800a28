// The VS Code side of the extension: settings, commands, keybindings' targets, the chat view
// (chatview.ts), the status bar item, the approval keys and the log (an output channel), wired
// to the conversation (controller.ts). The rest of the VS Code side is split by job:
// editorFiles.ts (the editor's documents and problems for pid, the diff editor's documents),
// chatActions.ts (what the chat's buttons do: context, Review, Open diff, Undo, Rewind to
// here), pickers.ts (the quick picks). Everything else (pid's protocol, the chat's model,
// approvals, context, undo snapshots, error words) is in modules that do not import `vscode`
// and are tested under node against pid.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { registerReview } from './reviewEditor';
import { ALLOW, ALWAYS_ALLOW, DENY } from './approval';
import { pidVersion, resolvePid, sourceWords } from './binary';
import { ChatModel } from './chat';
import { ChatViewProvider, type FromView } from './chatview';
import { errorText } from './client';
import { ChatActions } from './chatActions';
import { BusyError, ChatError, PidController, noticeAction } from './controller';
import { PidDaemon } from './daemon';
import { EditorDocuments, Snapshots } from './editorFiles';
import { pickMode, pickModel, rememberedAnswers, resumeSession, trustedFolders } from './pickers';
import { safeLink } from './markdown';
import type { AllowHostParams, SessionNewParams } from './protocol';
import { ResumeError } from './sessions';
import { ChatTabs, tabName, type Tab } from './tabs';
import { HostAsker } from './network';
import { TrustAsker } from './trust';

/** The window's pid, shared by the chat's tabs. */
let daemon: PidDaemon | undefined;
let stale = false;

/**
 * activate (VS Code calls it once, when the window has started, so that pid: Focus Chat is
 * quick the first time, or earlier when the chat view or a pid command is used) registers
 * the chat view, the status bar item and the commands; pid itself starts when the chat view
 * first shows (to look for the folder's last session) or at the first message.
 */
export function activate(context: vscode.ExtensionContext): void {
	const out = vscode.window.createOutputChannel('pid');
	context.subscriptions.push(out);
	// A background job's output (Show output under the chat), one channel per job id.
	const jobChannels = new Map<string, vscode.OutputChannel>();

	// The editor's documents and problems for pid (editor/diagnostics).
	const docs = new EditorDocuments(vscode);
	const problems = docs.problemWatcher();
	context.subscriptions.push(problems);

	const snapshots = new Snapshots(vscode);
	context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(Snapshots.scheme, snapshots));

	// pid's trust questions: never asked in Restricted Mode (answered "not trusted"), else a
	// non-modal warning (it arrives while a prompt may already run, which does not wait for it).
	const trust = new TrustAsker({
		isTrusted: () => vscode.workspace.isTrusted,
		show: async (p) => vscode.window.showWarningMessage(p.message, ...p.choices),
	});

	// pid's network questions: a non-modal warning; the command's connection waits for it
	// (at most 60 s, then pid refuses and the token is cancelled).
	const hosts = new HostAsker({ show: async (p) => vscode.window.showWarningMessage(p.message, ...p.choices) });

	const ui = {
		appendLine: (line: string) => out.appendLine(line),
		askTrust: (params: { folder: string; ignored: string[] }) => trust.ask(params),
		askHost: (params: AllowHostParams, token: { isCancellationRequested: boolean }) => hosts.ask(params, token),
	};

	/** makeDaemon is the window's pid, started at the first need once startAfter (the pid it replaces stopping) settled. */
	const makeDaemon = (startAfter?: Promise<unknown>): PidDaemon => {
		const cfg = vscode.workspace.getConfiguration('pid');
		const folders = vscode.workspace.workspaceFolders ?? [];
		const model = cfg.get<Record<string, unknown> | null>('model', null);
		const bin = resolvePid(cfg.get<string>('path', ''), context.extensionUri?.fsPath);
		return new PidDaemon({
			command: bin.command,
			commandSource: sourceWords(bin.source),
			args: cfg.get<string[]>('args', []),
			cwd: folders[0]?.uri.scheme === 'file' ? folders[0].uri.fsPath : undefined,
			workspaceFolders: folders.map((f) => ({ uri: f.uri.toString(), name: f.name })),
			initializationOptions: model ? { model } : undefined,
			clientInfo: { name: 'vscode', version: vscode.version },
			ui,
			startAfter,
			editorFiles: cfg.get<boolean>('editorFiles', true) ? docs.filesFor(problems) : undefined,
			editorDiagnostics: async (params, token) => problems.report(params, token),
		});
	};
	daemon = makeDaemon();

	/** makeController is a tab's conversation through the window's pid. */
	const makeController = (chat: ChatModel, stoppedSession?: string, newSessionNote?: string): PidController => {
		const d = daemon ?? (daemon = makeDaemon());
		const session = vscode.workspace.getConfiguration('pid').get<SessionNewParams | null>('session', null);
		return new PidController({
			...d.opts,
			daemon: d,
			session: session && typeof session === 'object' ? session : undefined,
			chat,
			onWillChange: (p) => problems.noteWritten(p),
			fileAccess: docs.undoAccess(),
			stoppedSession,
			newSessionNote,
		});
	};

	// The chat view's tabs: one conversation each, all through the window's pid. Each chat
	// outlives its controllers (a restart of pid keeps it).
	const chats = new ChatTabs((chat) => makeController(chat));

	// Settings and folders are read when pid starts; a change restarts pid once no tab is busy,
	// each tab in a new session (the model or folders may have changed), which its chat says; a
	// session pid lost in a crash is still the one Resume and the next prompt load.
	const current = (): PidController => {
		if (stale && !chats.busy) {
			stale = false;
			// The next pid starts once the old one is gone: it holds the sessions' files until
			// then, and could not load them before.
			const stopping = daemon?.dispose();
			daemon = makeDaemon(stopping);
			chats.replaceControllers((tab) =>
				makeController(
					tab.chat,
					tab.controller.stopped,
					tab.controller.currentSession !== undefined ? "pid was restarted because its settings changed, so this is a new session (the previous one is in pid's Session History)." : undefined,
				),
			);
		}
		return chats.shown.controller;
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

	// --- the chat view, the status bar ------------------------------------------------------

	// The page ready with an empty chat (a window reload, an editor restart, the chat first
	// opened): offer the folder's last session rather than a blank chat.
	const view = new ChatViewProvider(
		context.extensionUri,
		() => chats.shown.chat,
		(m) => void onViewMessage(m),
		() => {
			if (chats.all().length === 1 && chats.shown.chat.empty && !chats.busy) {
				void current().offerLastSession();
			}
		},
		() => (chats.all().length > 1 ? chats.views() : []),
	);
	// What the prompt box holds unsent outlives a reload of the window (the workspace's state).
	if (context.workspaceState) {
		view.keepDraftsIn(context.workspaceState);
	}
	context.subscriptions.push(view, vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, view, { webviewOptions: { retainContextWhenHidden: true } }));

	const actions = new ChatActions(vscode, docs, view, snapshots, () => chats.shown.chat, () => chats.shown.controller, current, (err) => report(err));
	context.subscriptions.push(actions);

	/** follow wires a tab's chat: to the view, the status bar, the approval keys and Review's diffs. */
	const follow = (tab: Tab) => {
		const subs = [
			view.attach(tab.chat),
			actions.watch(tab.chat),
			tab.chat.onEvent((e) => e.type === 'state' && refreshStatus()),
			tab.chat.onEvent((e) => (e.type !== 'upsert' || e.item.kind === 'tool') && refreshApprovalPending()),
		];
		followed.set(tab.id, subs);
	};
	const followed = new Map<string, { dispose(): void }[]>();
	let shownId = chats.shown.id;
	context.subscriptions.push(
		chats.onChange(() => {
			for (const t of chats.all()) {
				if (!followed.has(t.id)) {
					follow(t);
				}
			}
			for (const [id, subs] of followed) {
				if (!chats.get(id)) {
					subs.forEach((d) => d.dispose());
					followed.delete(id);
				}
			}
			if (chats.shown.id !== shownId) {
				shownId = chats.shown.id;
				view.showChat();
			} else {
				view.tabsChanged();
			}
			refreshStatus();
			refreshApprovalPending();
		}),
	);

	const status = vscode.window.createStatusBarItem('pid.status', vscode.StatusBarAlignment.Left, 100);
	status.name = 'pid';
	status.command = 'pid.focusChat';
	context.subscriptions.push(status);
	let shownStatus = '';
	let approvalToast = false;
	/** The tab whose state the status bar says: one waiting for approval, else the shown one. */
	const statusTab = (): Tab => chats.all().find((t) => t.chat.state.status === 'approval') ?? chats.shown;
	const refreshStatus = () => {
		const tab = statusTab();
		const chat = tab.chat;
		const s = chat.state.status;
		const several = chats.all().length > 1;
		const key = `${s}|${several ? tab.id : ''}|${tab === chats.shown}`;
		if (key === shownStatus) {
			return;
		}
		shownStatus = key;
		const texts: Record<string, [string, string]> = {
			idle: ['$(comment-discussion) pid', 'pid is idle: click to open the chat'],
			starting: ['$(loading~spin) pid: starting', 'pid is starting'],
			working: ['$(loading~spin) pid: working', 'pid is working: click to open the chat'],
			approval: ['$(bell) pid: waiting for approval', 'pid waits for your answer in the chat: click to open it'],
			loading: ['$(loading~spin) pid: loading', 'pid is loading a session'],
			stopped: ['$(error) pid stopped', 'pid stopped; the session was saved: open the chat to resume it'],
		};
		const [text, tip] = texts[s] ?? texts.idle;
		status.text = several && s === 'approval' ? `${text} (${tabName(tab)})` : text;
		status.tooltip = several && s === 'approval' ? `${tip} (the tab "${tabName(tab)}")` : tip;
		status.backgroundColor = s === 'approval' ? new vscode.ThemeColor('statusBarItem.warningBackground') : s === 'stopped' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
		status.show();
		void vscode.commands.executeCommand('setContext', 'pid.running', chats.shown.chat.state.running);
		// An approval while the chat is hidden, or in a tab not shown: say so, and which tab
		// asks, without taking focus (a notification).
		if (s === 'approval' && (!view.visible || tab !== chats.shown) && !approvalToast) {
			approvalToast = true;
			const outside = chat.firstPendingApproval()?.approval?.escalation !== undefined;
			const where = several ? `the chat "${tabName(tab)}"` : 'the chat';
			const said = outside
				? `pid asks to run a command outside the sandbox (with your full rights and the network): answer in ${where} (Ctrl+Alt+Y allows once, Ctrl+Alt+Shift+N denies).`
				: `pid is waiting for your approval in ${where} (Ctrl+Alt+Y allows, Ctrl+Alt+Shift+N denies).`;
			void (outside ? vscode.window.showWarningMessage(said, 'Show Chat') : vscode.window.showInformationMessage(said, 'Show Chat')).then((c) => {
				approvalToast = false;
				if (c) {
					chats.show(tab.id);
					void view.reveal(true);
				}
			});
		}
	};

	// pid.approvalPending enables the approval commands and their keys while a question waits.
	let approvalPending = false;
	/** The reasons for denying typed on the pending cards, by tab and call (the page sends them as typed). */
	const reasons = new Map<string, string>();
	const reasonKey = (tab: Tab, toolCallId: string) => `${tab.id}/${toolCallId}`;
	const refreshApprovalPending = () => {
		const pending = chats.pending() !== undefined;
		if (!pending) {
			reasons.clear();
		}
		if (pending !== approvalPending) {
			approvalPending = pending;
			void vscode.commands.executeCommand('setContext', 'pid.approvalPending', pending);
		}
	};
	for (const t of chats.all()) {
		follow(t);
	}
	refreshStatus();

	/**
	 * answerPending is the approval commands (pid.approval.*, Ctrl+Alt+Y and its kin): it
	 * answers the first pending question of the shown chat, the one whose card shows the keys,
	 * as its button would (Deny with the reason typed on the card, if any). A question waiting
	 * in another tab is not answered unseen: that tab is shown, and the next key answers it.
	 */
	const answerPending = (choice: string) => {
		const p = chats.pending();
		if (!p?.card.approval) {
			void vscode.window.showInformationMessage('pid: no call is waiting for your approval.');
			return;
		}
		const t = p.card;
		if (p.elsewhere) {
			chats.show(p.tab.id);
			void view.reveal(false);
			void vscode.window.showInformationMessage(`pid: the question waiting is in the chat "${tabName(p.tab)}", shown now: the key answers it once you have read it.`);
			return;
		}
		if (choice === ALWAYS_ALLOW && t.approval?.always === undefined) {
			void vscode.window.showInformationMessage(
				t.approval?.escalation
					? 'pid: Allow always is not offered for running this command outside the sandbox (pid could not limit it to exactly this command): allow it once or deny it.'
					: 'pid: Allow always is not offered for this call (pid cannot limit it to calls like this one): allow it once or deny it.',
			);
			return;
		}
		p.tab.chat.answerApproval(t.toolCallId, choice, choice === DENY ? reasons.get(reasonKey(p.tab, t.toolCallId)) : undefined);
		reasons.delete(reasonKey(p.tab, t.toolCallId));
	};

	/** report shows a failure: in the chat when it is not there yet, and as a notification when the chat is hidden. */
	const report = (err: unknown) => {
		if (err instanceof BusyError) {
			void vscode.window.showInformationMessage(`pid: ${err.message}`);
			return;
		}
		const shownInChat = err instanceof ChatError || err instanceof ResumeError;
		if (!shownInChat) {
			chats.shown.chat.notice('error', errorText(err));
			out.appendLine(`! ${errorText(err)}`);
		}
		if (!view.visible) {
			const actions = err instanceof ChatError ? err.actions : [];
			void vscode.window.showErrorMessage(`pid: ${errorText(err)}`, ...actions.map((a) => a.label)).then((label) => {
				const a = actions.find((x) => x.label === label);
				if (a) {
					const n = noticeAction(a);
					void runAction(n.action, n.arg);
				}
			});
		}
	};

	const send = async (text: string, mode: 'steer' | 'followUp') => {
		try {
			await current().send(text, mode);
		} catch (err) {
			report(err);
		}
	};

	/** runAction does what a button of an error or notice offers (see ErrorAction and NoticeAction). */
	const runAction = async (action: string | undefined, arg: string | undefined) => {
		switch (action) {
			case 'resume':
				await resumeStopped();
				break;
			case 'resumeSession':
				try {
					await current().resumeOffered(arg);
				} catch (err) {
					report(err);
				}
				break;
			case 'openSettings':
				await vscode.commands.executeCommand('workbench.action.openSettings', arg ?? 'pid');
				break;
			case 'openFile':
				// A settings file pid named (it may not exist yet: then it is opened to be created).
				if (arg && path.isAbsolute(arg)) {
					const uri = fs.existsSync(arg) ? vscode.Uri.file(arg) : vscode.Uri.file(arg).with({ scheme: 'untitled' });
					await vscode.window.showTextDocument(uri).then(undefined, (err) => report(err));
				}
				break;
			case 'trustedFolders':
				await vscode.commands.executeCommand('pid.trustedFolders');
				break;
			case 'showLog':
				out.show(true);
				break;
			case 'newSession':
				await vscode.commands.executeCommand('pid.newSession');
				break;
			case 'restoreAnyway':
				try {
					await current().restoreAnyway(String(arg));
				} catch (err) {
					report(err);
				}
				break;
			default:
				break;
		}
	};

	const onViewMessage = async (m: FromView) => {
		switch (m?.type) {
			case 'send':
				await send(String(m.text ?? ''), m.mode === 'followUp' ? 'followUp' : 'steer');
				break;
			case 'cancel':
				chats.shown.controller.cancel();
				break;
			case 'reason':
				if (typeof m.toolCallId === 'string' && typeof m.text === 'string') {
					reasons.set(reasonKey(chats.shown, m.toolCallId), m.text.slice(0, 2000));
				}
				break;
			case 'approve':
				reasons.delete(reasonKey(chats.shown, String(m.toolCallId)));
				chats.shown.chat.answerApproval(String(m.toolCallId), m.choice === ALWAYS_ALLOW ? ALWAYS_ALLOW : String(m.choice), typeof m.reason === 'string' ? m.reason : undefined, typeof m.mode === 'string' ? m.mode : undefined);
				break;
			case 'review':
				await actions.review(String(m.toolCallId));
				break;
			case 'elicit':
				chats.shown.chat.answerElicitation(String(m.id), m.action === 'accept' ? 'accept' : 'decline', m.values ?? {});
				break;
			case 'addContext':
				if (m.kind === 'file') {
					await actions.addFile();
				} else if (m.kind === 'selection') {
					actions.addSelection();
				} else {
					actions.addProblems();
				}
				break;
			case 'removeContext':
				chats.shown.chat.removeContext(String(m.id));
				break;
			case 'openDiff':
				await actions.openDiff(String(m.path));
				break;
			case 'undo':
				await actions.undo(String(m.path));
				break;
			case 'reviewChanges':
				await vscode.commands.executeCommand('pid.reviewChanges');
				break;
			case 'openFile':
				if (typeof m.path === 'string' && path.isAbsolute(m.path)) {
					await vscode.window.showTextDocument(vscode.Uri.file(m.path), { preview: true }).then(undefined, (err) => report(err));
				}
				break;
			case 'openLink':
				if (typeof m.href === 'string' && safeLink(m.href)) {
					await vscode.env.openExternal(vscode.Uri.parse(m.href, true));
				}
				break;
			case 'action':
				await runAction(m.action, m.arg);
				break;
			case 'command': {
				const cmd = { newSession: 'pid.newSession', history: 'pid.resumeSession', model: 'pid.pickModel', mode: 'pid.setMode', permissions: 'pid.permissions', showLog: 'pid.showLog' }[m.command];
				if (cmd) {
					await vscode.commands.executeCommand(cmd);
				}
				break;
			}
			case 'rewind':
				await actions.rewindHere(String(m.id));
				break;
			case 'job':
				try {
					if (m.action === 'stop') {
						await current().stopJob(String(m.jobId));
					} else {
						const text = await current().jobOutput(String(m.jobId));
						let ch = jobChannels.get(String(m.jobId));
						if (ch === undefined) {
							ch = vscode.window.createOutputChannel(`pid: ${String(m.jobId)}`);
							jobChannels.set(String(m.jobId), ch);
							context.subscriptions.push(ch);
						}
						ch.replace(text);
						ch.show(true);
					}
				} catch (err) {
					report(err);
				}
				break;
			case 'cycleMode':
				try {
					await current().cycleMode();
				} catch (err) {
					report(err);
				}
				break;
			case 'showTab':
				chats.show(String(m.id));
				break;
			case 'newTab':
				newTab();
				break;
			case 'closeTab':
				await closeTab(String(m.id));
				break;
			case 'ready':
			case 'draft':
				// The view handles them (chatview.ts).
				break;
			default:
				// A message of the page's that nothing here handles: typecheck fails here when FromView gains one.
				unhandledViewMessage(m);
		}
	};

	/** newTab opens a conversation in a tab of its own and shows it (the others go on running). */
	const newTab = () => {
		const tab = chats.add();
		chats.show(tab.id);
		void view.reveal(true);
		out.appendLine(`pid: a new chat tab (${tabName(tab)}): its first message starts its own session`);
	};

	/** closeTab closes a tab: its run is stopped and its session closed (Session History keeps it). */
	const closeTab = async (id: string) => {
		const tab = chats.get(id);
		if (!tab) {
			return;
		}
		if (tab.controller.busy) {
			const ok = await vscode.window.showWarningMessage(`pid is working in the chat "${tabName(tab)}": close it and stop that run?`, 'Stop and Close');
			if (ok !== 'Stop and Close') {
				return;
			}
		}
		await chats.close(id);
	};

	const resumeStopped = async () => {
		try {
			await current().resumeStopped();
		} catch (err) {
			report(err);
		}
	};

	// --- commands ---------------------------------------------------------------------------

	registerReview(context, current, report);
	context.subscriptions.push(
		vscode.commands.registerCommand('pid.ask', async () => {
			const c = current();
			const running = c.busy;
			const text = await vscode.window.showInputBox({
				title: 'pid: Ask',
				prompt: running ? 'pid is working: this steers it (read after the current step).' : 'What should pid do?',
				ignoreFocusOut: true,
			});
			if (!text || text.trim() === '') {
				return;
			}
			// The chat shows the run; it is revealed without taking focus from the editor.
			void view.reveal(false);
			await send(text, 'steer');
		}),
		vscode.commands.registerCommand('pid.focusChat', () => view.reveal(true)),
		vscode.commands.registerCommand('pid.cancel', () => {
			if (!chats.shown.controller.cancel()) {
				void vscode.window.showInformationMessage('pid: nothing to cancel.');
			}
		}),
		vscode.commands.registerCommand('pid.newSession', () => {
			const c = current();
			if (c.busy) {
				void vscode.window.showInformationMessage('pid: wait for pid to finish (or stop it) before starting a new session.');
				return;
			}
			c.newSession();
			out.appendLine('pid: the next prompt starts a new session');
		}),
		vscode.commands.registerCommand('pid.newChat', () => newTab()),
		vscode.commands.registerCommand('pid.rewind', () => actions.pickRewind()),
		vscode.commands.registerCommand('pid.resumeSession', async () => {
			try {
				await resumeSession(vscode, current(), (id) => {
					// A session a tab already runs is shown there, never loaded twice.
					const tab = chats.bySession(id);
					if (tab && tab !== chats.shown) {
						chats.show(tab.id);
						return true;
					}
					return false;
				});
				void view.reveal(false);
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
		vscode.commands.registerCommand('pid.pickModel', async () => {
			try {
				await pickModel(vscode, current());
			} catch (err) {
				report(err);
			}
		}),
		vscode.commands.registerCommand('pid.setMode', async (modeId?: unknown) => {
			try {
				await pickMode(vscode, current(), typeof modeId === 'string' ? modeId : undefined);
			} catch (err) {
				report(err);
			}
		}),
		vscode.commands.registerCommand('pid.permissions', async () => {
			try {
				await rememberedAnswers(vscode, current());
			} catch (err) {
				report(err);
			}
		}),
		vscode.commands.registerCommand('pid.trustedFolders', async () => {
			try {
				await trustedFolders(vscode, current(), trust);
			} catch (err) {
				void vscode.window.showErrorMessage(`pid: ${errorText(err)}`);
			}
		}),
		vscode.commands.registerCommand('pid.addSelection', () => {
			actions.addSelection();
			void view.reveal(false);
		}),
		vscode.commands.registerCommand('pid.addFile', () => actions.addFile()),
		vscode.commands.registerCommand('pid.addProblems', () => {
			actions.addProblems();
			void view.reveal(false);
		}),
		vscode.commands.registerCommand('pid.showLog', () => out.show(true)),
		// Which pid the window runs (pid.path, the bundled binary, or pid on PATH) and its version.
		vscode.commands.registerCommand('pid.showVersion', async () => {
			const bin = resolvePid(vscode.workspace.getConfiguration('pid').get<string>('path', ''), context.extensionUri?.fsPath);
			try {
				const line = await pidVersion(bin.command);
				out.appendLine(`pid: ${line}: ${bin.command} (${sourceWords(bin.source)})`);
				void vscode.window.showInformationMessage(`${line}: ${bin.command} (${sourceWords(bin.source)})`);
			} catch (err) {
				const msg = err instanceof Error ? err.message : String(err);
				out.appendLine(`pid: ${msg} (${sourceWords(bin.source)})`);
				void vscode.window.showErrorMessage(`${msg} (${sourceWords(bin.source)})`, 'Open Settings').then((a) => {
					if (a) {
						void vscode.commands.executeCommand('workbench.action.openSettings', 'pid.path');
					}
				});
			}
		}),
		vscode.commands.registerCommand('pid.approval.allow', () => answerPending(ALLOW)),
		vscode.commands.registerCommand('pid.approval.allowAlways', () => answerPending(ALWAYS_ALLOW)),
		vscode.commands.registerCommand('pid.approval.deny', () => answerPending(DENY)),
	);
}

/**
 * unhandledViewMessage ignores a message of the chat page's that onViewMessage has no case for.
 * Its parameter is never: a FromView type without a case does not compile.
 */
function unhandledViewMessage(m: never): void {
	void m;
}

/** deactivate (VS Code calls it when the window closes) shuts pid down; it resolves once pid exited or was killed. */
export async function deactivate(): Promise<void> {
	const d = daemon;
	daemon = undefined;
	await d?.dispose();
}
