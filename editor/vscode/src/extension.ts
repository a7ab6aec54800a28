// The VS Code side of the extension: settings, commands, keybindings' targets, the chat view
// (chatview.ts), the status bar item, the editor's files for pid (open documents with their
// unsaved changes; edits applied to them and saved), Review and Open diff in VS Code's diff
// editor, the pickers (history, model, remembered answers, trusted folders, files) and the
// log (an output channel). Everything else (pid's protocol, the chat's model, approvals,
// context, undo snapshots, error words) is in modules that do not import `vscode` and are
// tested under node against pid.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ALLOW, ALWAYS_ALLOW, DENY } from './approval';
import { ChatModel } from './chat';
import { ChatViewProvider, type FromView } from './chatview';
import { errorText } from './client';
import { diagnosticsChip, fileChip, selectionChip, type Problem } from './context';
import { ProblemWatcher } from './diagnostics';
import { BusyError, ChatError, PidController, noticeAction, type EditorFiles } from './controller';
import { changedSpan, type FileAccess } from './changes';
import { safeLink } from './markdown';
import { proposedContent } from './proposed';
import type { Diagnostic, ModelEntry, SessionNewParams } from './protocol';
import { ResumeError, sessionPick, type SessionPick } from './sessions';
import { RESTORE_CHOICES, diffDocument, short, skipReason } from './rewind';
import { TrustAsker } from './trust';

let controller: PidController | undefined;
let stale = false;

/** The open document of a file, if any. */
function openDocument(absPath: string): vscode.TextDocument | undefined {
	const p = path.resolve(absPath);
	return vscode.workspace.textDocuments.find((d) => !d.isClosed && d.uri.scheme === 'file' && path.resolve(d.uri.fsPath) === p);
}

/** The file's text as VS Code has it: the open document's (unsaved changes included), else the disk's. */
async function editorText(absPath: string): Promise<string> {
	const doc = openDocument(absPath);
	if (doc) {
		return doc.getText();
	}
	try {
		return await fs.promises.readFile(absPath, 'utf8');
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
			throw new Error(`file not found: ${absPath}`);
		}
		throw err;
	}
}

/**
 * putText makes the file hold text: an open document gets one edit replacing what differs
 * and is saved (so the editor shows it and no "file changed on disk" conflict follows);
 * another file is written on disk (its folder created).
 */
async function putText(absPath: string, text: string): Promise<void> {
	const doc = openDocument(absPath);
	if (doc) {
		// Only the changed span is replaced: the cursor, folds and undo history elsewhere stay.
		const span = changedSpan(doc.getText(), text);
		const edit = new vscode.WorkspaceEdit();
		edit.replace(doc.uri, new vscode.Range(doc.positionAt(span.start), doc.positionAt(span.end)), span.text);
		if (!(await vscode.workspace.applyEdit(edit))) {
			throw new Error(`VS Code did not apply the change to ${absPath}`);
		}
		if (!(await doc.save())) {
			throw new Error(`VS Code could not save ${absPath}`);
		}
		return;
	}
	await fs.promises.mkdir(path.dirname(absPath), { recursive: true });
	await fs.promises.writeFile(absPath, text);
}

/** The editor's problems for pid (editor/diagnostics); made at activation. */
let problems: ProblemWatcher | undefined;

/** problemWatcher answers editor/diagnostics from VS Code's diagnostics, fresh after pid's writes. */
function problemWatcher(): ProblemWatcher {
	return new ProblemWatcher({
		get(absPath?: string): Diagnostic[] {
			const asProtocol = (uri: vscode.Uri, d: vscode.Diagnostic): Diagnostic => ({
				path: uri.fsPath,
				range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
				severity: (Math.min(3, Math.max(0, d.severity)) + 1) as Diagnostic['severity'],
				message: d.message,
				...(d.source ? { source: d.source } : {}),
				...(d.code !== undefined ? { code: typeof d.code === 'object' ? d.code.value : d.code } : {}),
			});
			if (absPath !== undefined) {
				const uri = vscode.Uri.file(absPath);
				return vscode.languages.getDiagnostics(uri).map((d) => asProtocol(uri, d));
			}
			return vscode.languages
				.getDiagnostics()
				.filter(([uri]) => uri.scheme === 'file')
				.flatMap(([uri, ds]) => ds.map((d) => asProtocol(uri, d)));
		},
		onDidChange(listener) {
			return vscode.languages.onDidChangeDiagnostics((e) => listener(e.uris.filter((u) => u.scheme === 'file').map((u) => u.fsPath)));
		},
		async open(absPath: string) {
			// Language servers check the files shown in editors (pull diagnostics ask for visible
			// ones only: a document opened unseen got no report): a preview tab, the focus kept.
			const shown = vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && path.resolve(t.input.uri.fsPath) === path.resolve(absPath)));
			if (!shown) {
				const doc = openDocument(absPath) ?? (await vscode.workspace.openTextDocument(vscode.Uri.file(absPath)));
				await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
			}
		},
	});
}

const editorFiles: EditorFiles = {
	read: editorText,
	write: async (absPath, text) => {
		// Before the change reaches the buffer: the language server's next report is about the new text.
		problems?.noteWritten(absPath);
		await putText(absPath, text);
	},
};

/** Undo's view of files: the open document's text (read synchronously as pid's message arrives), else the disk's. */
const undoAccess: FileAccess = {
	read(p) {
		const doc = openDocument(p);
		if (doc) {
			return doc.getText();
		}
		try {
			return fs.readFileSync(p, 'utf8');
		} catch {
			return undefined;
		}
	},
	write: putText,
	async remove(p) {
		await vscode.workspace.fs.delete(vscode.Uri.file(p), { useTrash: false });
	},
};

/** Read-only documents for the diff editor: what a file held before a run, and a call's proposal. */
class Snapshots implements vscode.TextDocumentContentProvider {
	static readonly scheme = 'pid-snapshot';
	private readonly texts = new Map<string, string>();
	private n = 0;
	/** put keeps text and returns a URI showing it, named after the file. */
	put(absPath: string, what: string, text: string): vscode.Uri {
		this.n++;
		const key = `${this.n}`;
		this.texts.set(key, text);
		// At most the last 50 documents are kept.
		if (this.texts.size > 50) {
			this.texts.delete(this.texts.keys().next().value as string);
		}
		return vscode.Uri.from({ scheme: Snapshots.scheme, path: absPath, query: `${what}-${key}` });
	}
	/** provideTextDocumentContent (VS Code calls it) returns the kept text, or '' once it was dropped. */
	provideTextDocumentContent(uri: vscode.Uri): string {
		const key = uri.query.split('-').pop() ?? '';
		return this.texts.get(key) ?? '';
	}
}

/**
 * activate (VS Code calls it once, when the window has started, so that pid: Focus Chat is
 * quick the first time, or earlier when the chat view or a pid command is used) registers
 * the chat view, the status bar item and the commands; pid itself starts when the chat view
 * first shows (to look for the folder's last session) or at the first message.
 */
export function activate(context: vscode.ExtensionContext): void {
	const out = vscode.window.createOutputChannel('pid');
	context.subscriptions.push(out);

	problems = problemWatcher();
	context.subscriptions.push(problems);

	// One chat for the window: it outlives the controllers (a restart of pid keeps it).
	const chat = new ChatModel();
	const snapshots = new Snapshots();
	context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(Snapshots.scheme, snapshots));

	// pid's trust questions: never asked in Restricted Mode (answered "not trusted"), else a
	// non-modal warning (it arrives while a prompt may already run, which does not wait for it).
	const trust = new TrustAsker({
		isTrusted: () => vscode.workspace.isTrusted,
		show: async (p) => vscode.window.showWarningMessage(p.message, ...p.choices),
	});

	const ui = {
		appendLine: (line: string) => out.appendLine(line),
		askTrust: (params: { folder: string; ignored: string[] }) => trust.ask(params),
	};

	const make = (startAfter?: Promise<unknown>, stoppedSession?: string, newSessionNote?: string): PidController => {
		const cfg = vscode.workspace.getConfiguration('pid');
		const folders = vscode.workspace.workspaceFolders ?? [];
		const model = cfg.get<Record<string, unknown> | null>('model', null);
		const session = cfg.get<SessionNewParams | null>('session', null);
		return new PidController({
			command: cfg.get<string>('path', 'pid') || 'pid',
			args: cfg.get<string[]>('args', []),
			cwd: folders[0]?.uri.scheme === 'file' ? folders[0].uri.fsPath : undefined,
			workspaceFolders: folders.map((f) => ({ uri: f.uri.toString(), name: f.name })),
			initializationOptions: model ? { model } : undefined,
			clientInfo: { name: 'vscode', version: vscode.version },
			session: session && typeof session === 'object' ? session : undefined,
			ui,
			startAfter,
			chat,
			editorFiles: cfg.get<boolean>('editorFiles', true) ? editorFiles : undefined,
			editorDiagnostics: async (params, token) => (problems ? problems.answer(params, token) : []),
			onWillChange: (p) => problems?.noteWritten(p),
			fileAccess: undoAccess,
			stoppedSession,
			newSessionNote,
		});
	};

	// Settings and folders are read when pid starts; a change restarts pid once it is idle, in a
	// new session (the model or folders may have changed), which the chat says; a session pid
	// lost in a crash is still the one Resume and the next prompt load.
	const current = (): PidController => {
		let stopping: Promise<void> | undefined;
		let stopped: string | undefined;
		let note: string | undefined;
		if (controller && stale && !controller.busy) {
			stopped = controller.stopped;
			if (controller.currentSession !== undefined) {
				note = "pid was restarted because its settings changed, so this is a new session (the previous one is in pid's Session History).";
			}
			stopping = controller.dispose();
			controller = undefined;
		}
		if (!controller) {
			// The next pid starts once the old one is gone: it holds the current session's file
			// until then, and could not be loaded by the new one before.
			controller = make(stopping, stopped, note);
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

	// --- the chat view, the status bar ------------------------------------------------------

	// The page ready with an empty chat (a window reload, an editor restart, the chat first
	// opened): offer the folder's last session rather than a blank chat.
	const view = new ChatViewProvider(context.extensionUri, () => chat, (m) => void onViewMessage(m), () => {
		if (chat.empty && !(controller?.busy ?? false)) {
			void current().offerLastSession();
		}
	});
	context.subscriptions.push(view, view.attach(chat), vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, view, { webviewOptions: { retainContextWhenHidden: true } }));

	const status = vscode.window.createStatusBarItem('pid.status', vscode.StatusBarAlignment.Left, 100);
	status.name = 'pid';
	status.command = 'pid.focusChat';
	context.subscriptions.push(status);
	let shownStatus = '';
	let approvalToast = false;
	const refreshStatus = () => {
		const s = chat.state.status;
		if (s === shownStatus) {
			return;
		}
		shownStatus = s;
		const texts: Record<string, [string, string]> = {
			idle: ['$(comment-discussion) pid', 'pid is idle: click to open the chat'],
			starting: ['$(loading~spin) pid: starting', 'pid is starting'],
			working: ['$(loading~spin) pid: working', 'pid is working: click to open the chat'],
			approval: ['$(bell) pid: waiting for approval', 'pid waits for your answer in the chat: click to open it'],
			loading: ['$(loading~spin) pid: loading', 'pid is loading a session'],
			stopped: ['$(error) pid stopped', 'pid stopped; the session was saved: open the chat to resume it'],
		};
		const [text, tip] = texts[s] ?? texts.idle;
		status.text = text;
		status.tooltip = tip;
		status.backgroundColor = s === 'approval' ? new vscode.ThemeColor('statusBarItem.warningBackground') : s === 'stopped' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
		status.show();
		void vscode.commands.executeCommand('setContext', 'pid.running', chat.state.running);
		// An approval while the chat is hidden: say so without taking focus (a notification).
		if (s === 'approval' && !view.visible && !approvalToast) {
			approvalToast = true;
			const outside = chat.firstPendingApproval()?.approval?.escalation !== undefined;
			const said = outside
				? 'pid asks to run a command outside the sandbox (with your full rights and the network): answer in the chat (Ctrl+Alt+Y allows once, Ctrl+Alt+Shift+N denies).'
				: 'pid is waiting for your approval in the chat (Ctrl+Alt+Y allows, Ctrl+Alt+Shift+N denies).';
			void (outside ? vscode.window.showWarningMessage(said, 'Show Chat') : vscode.window.showInformationMessage(said, 'Show Chat')).then((c) => {
				approvalToast = false;
				if (c) {
					void view.reveal(true);
				}
			});
		}
	};
	context.subscriptions.push(chat.onEvent((e) => e.type === 'state' && refreshStatus()));
	refreshStatus();

	// pid.approvalPending enables the approval commands and their keys while a question waits.
	let approvalPending = false;
	/** The reasons for denying typed on the pending cards, by call (the page sends them as typed). */
	const reasons = new Map<string, string>();
	const refreshApprovalPending = () => {
		const pending = chat.firstPendingApproval() !== undefined;
		if (!pending) {
			reasons.clear();
		}
		if (pending !== approvalPending) {
			approvalPending = pending;
			void vscode.commands.executeCommand('setContext', 'pid.approvalPending', pending);
		}
	};
	context.subscriptions.push(chat.onEvent((e) => (e.type !== 'upsert' || e.item.kind === 'tool') && refreshApprovalPending()));

	/**
	 * answerPending is the approval commands (pid.approval.*, Ctrl+Alt+Y and its kin): it
	 * answers the first pending question of the chat, the one whose card shows the keys, as
	 * its button would (Deny with the reason typed on the card, if any).
	 */
	const answerPending = (choice: string) => {
		const t = chat.firstPendingApproval();
		if (!t?.approval) {
			void vscode.window.showInformationMessage('pid: no call is waiting for your approval.');
			return;
		}
		if (choice === ALWAYS_ALLOW && t.approval.always === undefined) {
			void vscode.window.showInformationMessage(
				t.approval.escalation
					? 'pid: Allow always is not offered for running this command outside the sandbox (pid could not limit it to exactly this command): allow it once or deny it.'
					: 'pid: Allow always is not offered for this call (pid cannot limit it to calls like this one): allow it once or deny it.',
			);
			return;
		}
		chat.answerApproval(t.toolCallId, choice, choice === DENY ? reasons.get(t.toolCallId) : undefined);
		reasons.delete(t.toolCallId);
	};

	/** report shows a failure: in the chat when it is not there yet, and as a notification when the chat is hidden. */
	const report = (err: unknown) => {
		if (err instanceof BusyError) {
			void vscode.window.showInformationMessage(`pid: ${err.message}`);
			return;
		}
		const shownInChat = err instanceof ChatError || err instanceof ResumeError;
		if (!shownInChat) {
			chat.notice('error', errorText(err));
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

	const workspaceFolder = () => {
		const f = vscode.workspace.workspaceFolders?.[0];
		return f?.uri.scheme === 'file' ? f.uri.fsPath : undefined;
	};

	const addFile = async () => {
		const files = await vscode.workspace.findFiles('**/*', '**/{node_modules,.git}/**', 5000);
		const folder = workspaceFolder();
		type Item = vscode.QuickPickItem & { uri: vscode.Uri };
		const items: Item[] = files
			.filter((u) => u.scheme === 'file')
			.map((u) => ({ label: path.basename(u.fsPath), description: path.relative(folder ?? '', path.dirname(u.fsPath)) || undefined, uri: u }))
			.sort((a, b) => `${a.description ?? ''}/${a.label}`.localeCompare(`${b.description ?? ''}/${b.label}`));
		const pick = await vscode.window.showQuickPick(items, { title: 'pid: Add File to Chat', placeHolder: 'Pick a workspace file for the next message', matchOnDescription: true });
		if (!pick) {
			return;
		}
		const doc = openDocument(pick.uri.fsPath);
		chat.addContext(fileChip(pick.uri.fsPath, folder, doc?.isDirty ? doc.getText() : undefined));
	};

	const addSelection = () => {
		const editor = vscode.window.activeTextEditor;
		if (!editor || editor.document.uri.scheme !== 'file') {
			void vscode.window.showInformationMessage('pid: open a file (and select some of it) to add it to the chat.');
			return;
		}
		const doc = editor.document;
		const sel = editor.selection;
		const folder = workspaceFolder();
		if (sel.isEmpty) {
			chat.addContext(fileChip(doc.uri.fsPath, folder, doc.isDirty ? doc.getText() : undefined));
			return;
		}
		// A selection ending at a line's start does not take that line.
		const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line - 1 : sel.end.line;
		chat.addContext(selectionChip(doc.uri.fsPath, folder, { start: sel.start.line + 1, end: endLine + 1 }, doc.getText(sel)));
	};

	const addProblems = () => {
		const editor = vscode.window.activeTextEditor;
		if (!editor || editor.document.uri.scheme !== 'file') {
			void vscode.window.showInformationMessage('pid: open a file to add its problems to the chat.');
			return;
		}
		const severities: Problem['severity'][] = ['error', 'warning', 'info', 'hint'];
		const problems: Problem[] = vscode.languages.getDiagnostics(editor.document.uri).map((d) => ({
			line: d.range.start.line + 1,
			column: d.range.start.character + 1,
			severity: severities[d.severity] ?? 'info',
			message: d.message,
			...(d.source ? { source: d.source } : {}),
			...(d.code !== undefined ? { code: String(typeof d.code === 'object' ? d.code.value : d.code) } : {}),
		}));
		if (problems.length === 0) {
			void vscode.window.showInformationMessage(`pid: VS Code reports no problems in ${path.basename(editor.document.uri.fsPath)}.`);
			return;
		}
		chat.addContext(diagnosticsChip(editor.document.uri.fsPath, workspaceFolder(), problems));
	};

	// The diffs Review opened, by call: closed once the call's question is answered (the
	// proposal is then applied or dropped, and the diff would show something stale).
	const reviews = new Map<string, string[]>();
	context.subscriptions.push(
		chat.onEvent((e) => {
			if (e.type !== 'upsert' || e.item.kind !== 'tool' || !e.item.approval || e.item.approval.state === 'pending') {
				return;
			}
			const uris = reviews.get(e.item.toolCallId);
			if (!uris) {
				return;
			}
			reviews.delete(e.item.toolCallId);
			const tabs = vscode.window.tabGroups.all
				.flatMap((g) => g.tabs)
				.filter((t) => t.input instanceof vscode.TabInputTextDiff && uris.includes(t.input.modified.toString()));
			if (tabs.length > 0) {
				void vscode.window.tabGroups.close(tabs, true).then(undefined, () => undefined);
			}
		}),
	);

	const review = async (toolCallId: string) => {
		const params = controller?.approvalParams(toolCallId);
		if (!params) {
			return;
		}
		const args = params.args as { path?: unknown };
		const rel = typeof args?.path === 'string' ? args.path : '';
		const folder = workspaceFolder();
		const abs = path.isAbsolute(rel) ? rel : path.resolve(folder ?? '', rel);
		let current: string | undefined;
		try {
			current = await editorText(abs);
		} catch {
			current = undefined;
		}
		const p = proposedContent(params.toolName, params.args, current);
		if (!p.ok) {
			void vscode.window.showWarningMessage(`pid: nothing to review: ${p.error}`);
			return;
		}
		const left = snapshots.put(abs, 'now', current ?? '');
		const right = snapshots.put(abs, 'proposed', p.content);
		reviews.set(toolCallId, [...(reviews.get(toolCallId) ?? []), right.toString()]);
		const label = path.basename(abs);
		await vscode.commands.executeCommand('vscode.diff', left, right, `${label}: ${current === undefined ? 'new file' : 'now'} ↔ proposed by pid (${params.toolName})`, { preview: true });
	};

	const openDiff = async (absPath: string) => {
		const before = controller?.changes.before(absPath);
		if (!before) {
			return;
		}
		const left = snapshots.put(absPath, 'before', before.text);
		await vscode.commands.executeCommand('vscode.diff', left, vscode.Uri.file(absPath), `${path.basename(absPath)}: before pid's run ↔ now`, { preview: true });
	};

	const undo = async (absPath: string) => {
		try {
			await controller?.changes.undo(absPath);
		} catch (err) {
			void vscode.window.showErrorMessage(`pid: could not undo the change to ${absPath}: ${errorText(err)}`);
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
				controller?.cancel();
				break;
			case 'reason':
				if (typeof m.toolCallId === 'string' && typeof m.text === 'string') {
					reasons.set(m.toolCallId, m.text.slice(0, 2000));
				}
				break;
			case 'approve':
				reasons.delete(String(m.toolCallId));
				chat.answerApproval(String(m.toolCallId), m.choice === ALWAYS_ALLOW ? ALWAYS_ALLOW : String(m.choice), typeof m.reason === 'string' ? m.reason : undefined, typeof m.mode === 'string' ? m.mode : undefined);
				break;
			case 'review':
				await review(String(m.toolCallId));
				break;
			case 'elicit':
				chat.answerElicitation(String(m.id), m.action === 'accept' ? 'accept' : 'decline', m.values ?? {});
				break;
			case 'addContext':
				if (m.kind === 'file') {
					await addFile();
				} else if (m.kind === 'selection') {
					addSelection();
				} else {
					addProblems();
				}
				break;
			case 'removeContext':
				chat.removeContext(String(m.id));
				break;
			case 'openDiff':
				await openDiff(String(m.path));
				break;
			case 'undo':
				await undo(String(m.path));
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
				await rewindHere(String(m.id));
				break;
			case 'cycleMode':
				try {
					await current().cycleMode();
				} catch (err) {
					report(err);
				}
				break;
			case 'ready':
				// The view handles it (chatview.ts).
				break;
			default:
				// A message of the page's that nothing here handles: typecheck fails here when FromView gains one.
				unhandledViewMessage(m);
		}
	};

	/**
	 * rewindHere is "Rewind to here" on a message of the person's: what a rewind would take
	 * back is shown first (checkpoints/diff, as a diff document beside the chat), then the
	 * choice of files, conversation or both; after the rewind the chat shows the conversation
	 * as pid has it and says what was restored and what was left as it was (with why), and a
	 * rewound message goes back into the prompt box. Files left as they were because they
	 * changed since pid wrote them can then be restored anyway.
	 */
	const rewindHere = async (itemId: string) => {
		const c = current();
		try {
			const plan = await c.rewindPlan(itemId);
			const name = `Rewind to before ${short(plan.checkpoint.prompt).replace(/[\\/]/g, ' ')}.diff`;
			const uri = snapshots.put(path.join(path.sep, name), 'rewind', diffDocument(plan.checkpoint, plan.files, workspaceFolder()));
			const doc = await vscode.workspace.openTextDocument(uri);
			await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
			type Item = vscode.QuickPickItem & { restore: (typeof RESTORE_CHOICES)[number]['restore'] };
			const n = plan.files.length;
			const items: Item[] = RESTORE_CHOICES.map((r) => ({
				label: r.label,
				description: r.restore === 'conversation' ? undefined : n === 0 ? 'no file changed since' : `${n} file${n === 1 ? '' : 's'} back as before`,
				detail: r.detail,
				restore: r.restore,
			}));
			const pick = await vscode.window.showQuickPick(items, {
				title: `pid: Rewind to before "${short(plan.checkpoint.prompt)}"`,
				placeHolder: plan.checkpoint.incomplete
					? `Some changes cannot be taken back (${plan.checkpoint.reason ?? 'pid did not say why'}). Rewind what?`
					: 'The diff beside shows what the files would get back. Rewind what?',
				ignoreFocusOut: true,
			});
			if (!pick) {
				return;
			}
			const r = await c.rewind(plan, pick.restore);
			if (pick.restore !== 'files') {
				view.putInPrompt(plan.text);
			}
			const changed = r.skipped.filter((s) => /changed|modified|newer/i.test(s.reason));
			if (r.skipped.length > 0) {
				const list = r.skipped.map((s) => `${path.basename(s.path)} (${skipReason(s.reason)})`).join('; ');
				const again = changed.length > 0 ? ['Restore them anyway'] : [];
				const choice = await vscode.window.showWarningMessage(`pid: the rewind left ${r.skipped.length} file${r.skipped.length === 1 ? '' : 's'} as ${r.skipped.length === 1 ? 'it is' : 'they are'}: ${list}.`, ...again);
				if (choice === 'Restore them anyway') {
					await c.rewind(plan, 'files', true);
				}
			}
		} catch (err) {
			report(err);
		}
	};

	const resumeStopped = async () => {
		try {
			await current().resumeStopped();
		} catch (err) {
			report(err);
		}
	};

	// --- commands ---------------------------------------------------------------------------

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
			if (!controller?.cancel()) {
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
		vscode.commands.registerCommand('pid.resumeSession', async () => {
			try {
				await resumeSession(current());
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
				await pickModel(current());
			} catch (err) {
				report(err);
			}
		}),
		vscode.commands.registerCommand('pid.setMode', async (modeId?: unknown) => {
			try {
				await pickMode(current(), typeof modeId === 'string' ? modeId : undefined);
			} catch (err) {
				report(err);
			}
		}),
		vscode.commands.registerCommand('pid.permissions', async () => {
			try {
				await rememberedAnswers(current());
			} catch (err) {
				report(err);
			}
		}),
		vscode.commands.registerCommand('pid.trustedFolders', async () => {
			try {
				await trustedFolders(current(), trust);
			} catch (err) {
				void vscode.window.showErrorMessage(`pid: ${errorText(err)}`);
			}
		}),
		vscode.commands.registerCommand('pid.addSelection', () => {
			addSelection();
			void view.reveal(false);
		}),
		vscode.commands.registerCommand('pid.addFile', () => addFile()),
		vscode.commands.registerCommand('pid.addProblems', () => {
			addProblems();
			void view.reveal(false);
		}),
		vscode.commands.registerCommand('pid.showLog', () => out.show(true)),
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
async function pickModel(c: PidController): Promise<void> {
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
	type Item = vscode.QuickPickItem & { model: ModelEntry };
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
async function pickMode(c: PidController, modeId?: string): Promise<void> {
	if (modeId !== undefined) {
		await c.setMode(modeId);
		return;
	}
	const { available, current } = c.modes;
	if (available.length === 0) {
		void vscode.window.showInformationMessage('pid: this pid has no modes: update pid.');
		return;
	}
	type Item = vscode.QuickPickItem & { id: string };
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
async function rememberedAnswers(c: PidController): Promise<void> {
	const list = await c.permissions();
	if (list.length === 0) {
		void vscode.window.showInformationMessage('pid: no remembered answers: every call that asks will ask again.');
		return;
	}
	const home = os.homedir();
	type Item = vscode.QuickPickItem & { id: string };
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
 * resumeSession is the "pid: Session History" command: a QuickPick of pid's saved sessions
 * (title, folder, when and how many messages), filled page by page as pid lists them, newest
 * first; the picked one is loaded and shown in the chat (and the log), and continued by the
 * next message. It throws BusyError while a prompt runs, ResumeError when pid cannot load it,
 * and pid's error when it cannot list them.
 */
async function resumeSession(c: PidController): Promise<void> {
	if (c.busy) {
		throw new BusyError();
	}
	type Item = vscode.QuickPickItem & SessionPick;
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
	if (!pick) {
		return;
	}
	await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'pid is loading the session' }, () => c.resume(pick.sessionId, pick.summary));
}

/** deactivate (VS Code calls it when the window closes) shuts pid down; it resolves once pid exited or was killed. */
export async function deactivate(): Promise<void> {
	const c = controller;
	controller = undefined;
	await c?.dispose();
}
