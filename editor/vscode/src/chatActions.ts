// What the chat's buttons do in VS Code: context for the next message (@ File, + Selection,
// + Problems), an approval's Review in the diff editor, a changed file's Open diff and Undo,
// and "Rewind to here" (the diff document, the choice, the report). extension.ts hands the
// page's messages here.

import * as path from 'node:path';
import type * as VSCode from 'vscode';
import type { ChatModel } from './chat';
import type { ChatViewProvider } from './chatview';
import { errorText } from './client';
import { diagnosticsChip, fileChip, selectionChip, type Problem } from './context';
import type { PidController } from './controller';
import type { EditorDocuments, Snapshots } from './editorFiles';
import { proposedContent } from './proposed';
import { RESTORE_CHOICES, diffDocument, short, skipped } from './rewind';
import { relativeTime } from './sessions';

/** workspaceFolder is the window's first folder's path (undefined: none, or not on disk). */
export function workspaceFolder(vscode: typeof VSCode): string | undefined {
	const f = vscode.workspace.workspaceFolders?.[0];
	return f?.uri.scheme === 'file' ? f.uri.fsPath : undefined;
}

/**
 * ChatActions does what the chat's buttons ask (see the file's comment). Used from the
 * extension host's one thread; its methods show their failures and never throw.
 */
export class ChatActions implements VSCode.Disposable {
	/** The diffs Review opened, by chat and call: closed once the call's question is answered. */
	private readonly reviews = new Map<ChatModel, Map<string, string[]>>();
	private readonly subs: { dispose(): void }[] = [];

	constructor(
		private readonly vscode: typeof VSCode,
		private readonly docs: EditorDocuments,
		private readonly view: ChatViewProvider,
		private readonly snapshots: Snapshots,
		/** The chat shown (the chat view's tab). */
		private readonly shownChat: () => ChatModel,
		/** The conversation of the chat shown, as it is. */
		private readonly shown: () => PidController,
		/** The conversation of the chat shown, replaced first when pid must restart (its settings changed). */
		private readonly current: () => PidController,
		/** Shows a failure (in the chat, and as a notification when the chat is hidden). */
		private readonly report: (err: unknown) => void,
	) {}

	private get chat(): ChatModel {
		return this.shownChat();
	}

	/** watch follows a chat (a tab's) so that the diffs Review opened for its questions close once they are answered. */
	watch(chat: ChatModel): { dispose(): void } {
		const reviews = new Map<string, string[]>();
		this.reviews.set(chat, reviews);
		// A proposal answered is applied or dropped: the diff Review opened for it would be stale.
		const sub = chat.onEvent((e) => {
			if (e.type !== 'upsert' || e.item.kind !== 'tool' || !e.item.approval || e.item.approval.state === 'pending') {
				return;
			}
			const uris = reviews.get(e.item.toolCallId);
			if (!uris) {
				return;
			}
			reviews.delete(e.item.toolCallId);
			const tabs = this.vscode.window.tabGroups.all
				.flatMap((g) => g.tabs)
				.filter((t) => t.input instanceof this.vscode.TabInputTextDiff && uris.includes(t.input.modified.toString()));
			if (tabs.length > 0) {
				void this.vscode.window.tabGroups.close(tabs, true).then(undefined, () => undefined);
			}
		});
		const d = {
			dispose: () => {
				sub.dispose();
				this.reviews.delete(chat);
			},
		};
		this.subs.push(d);
		return d;
	}

	/** addFile is @ File: a workspace file picked goes with the next message (its text when it has unsaved changes). */
	async addFile(): Promise<void> {
		const vscode = this.vscode;
		const files = await vscode.workspace.findFiles('**/*', '**/{node_modules,.git}/**', 5000);
		const folder = workspaceFolder(vscode);
		type Item = VSCode.QuickPickItem & { uri: VSCode.Uri };
		const items: Item[] = files
			.filter((u) => u.scheme === 'file')
			.map((u) => ({ label: path.basename(u.fsPath), description: path.relative(folder ?? '', path.dirname(u.fsPath)) || undefined, uri: u }))
			.sort((a, b) => `${a.description ?? ''}/${a.label}`.localeCompare(`${b.description ?? ''}/${b.label}`));
		const pick = await vscode.window.showQuickPick(items, { title: 'pid: Add File to Chat', placeHolder: 'Pick a workspace file for the next message', matchOnDescription: true });
		if (!pick) {
			return;
		}
		const doc = this.docs.openDocument(pick.uri.fsPath);
		this.chat.addContext(fileChip(pick.uri.fsPath, folder, doc?.isDirty ? doc.getText() : undefined));
	}

	/** addSelection is + Selection: the editor's selected lines (or its whole file) go with the next message. */
	addSelection(): void {
		const vscode = this.vscode;
		const editor = vscode.window.activeTextEditor;
		if (!editor || editor.document.uri.scheme !== 'file') {
			void vscode.window.showInformationMessage('pid: open a file (and select some of it) to add it to the chat.');
			return;
		}
		const doc = editor.document;
		const sel = editor.selection;
		const folder = workspaceFolder(vscode);
		if (sel.isEmpty) {
			this.chat.addContext(fileChip(doc.uri.fsPath, folder, doc.isDirty ? doc.getText() : undefined));
			return;
		}
		// A selection ending at a line's start does not take that line.
		const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line - 1 : sel.end.line;
		this.chat.addContext(selectionChip(doc.uri.fsPath, folder, { start: sel.start.line + 1, end: endLine + 1 }, doc.getText(sel)));
	}

	/** addProblems is + Problems: the problems VS Code reports in the current file go with the next message. */
	addProblems(): void {
		const vscode = this.vscode;
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
		this.chat.addContext(diagnosticsChip(editor.document.uri.fsPath, workspaceFolder(vscode), problems));
	}

	/** review is an approval's Review: VS Code's diff editor, the file now against what pid proposes (closed once the question is answered). */
	async review(toolCallId: string): Promise<void> {
		const vscode = this.vscode;
		const params = this.shown().approvalParams(toolCallId);
		if (!params) {
			return;
		}
		const args = params.args as { path?: unknown };
		const rel = typeof args?.path === 'string' ? args.path : '';
		const folder = workspaceFolder(vscode);
		const abs = path.isAbsolute(rel) ? rel : path.resolve(folder ?? '', rel);
		let current: string | undefined;
		try {
			current = await this.docs.editorText(abs);
		} catch {
			current = undefined;
		}
		const p = proposedContent(params.toolName, params.args, current);
		if (!p.ok) {
			void vscode.window.showWarningMessage(`pid: nothing to review: ${p.error}`);
			return;
		}
		const left = this.snapshots.put(abs, 'now', current ?? '');
		const right = this.snapshots.put(abs, 'proposed', p.content);
		const reviews = this.reviews.get(this.chat);
		reviews?.set(toolCallId, [...(reviews.get(toolCallId) ?? []), right.toString()]);
		const label = path.basename(abs);
		await vscode.commands.executeCommand('vscode.diff', left, right, `${label}: ${current === undefined ? 'new file' : 'now'} ↔ proposed by pid (${params.toolName})`, { preview: true });
	}

	/** openDiff is a changed file's Open diff: the file before the run against now. */
	async openDiff(absPath: string): Promise<void> {
		const vscode = this.vscode;
		const before = this.shown().changes.before(absPath);
		if (!before) {
			// A file a command changed: pid's diff since before the run's prompt.
			try {
				const diff = await this.shown().runFileDiff(absPath);
				if (diff !== undefined) {
					const doc = await vscode.workspace.openTextDocument({ content: diff, language: 'diff' });
					await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
				}
			} catch (err) {
				this.report(err);
			}
			return;
		}
		const left = this.snapshots.put(absPath, 'before', before.text);
		await vscode.commands.executeCommand('vscode.diff', left, vscode.Uri.file(absPath), `${path.basename(absPath)}: before pid's run ↔ now`, { preview: true });
	}

	/** undo is a changed file's Undo: what it held before the run put back. */
	async undo(absPath: string): Promise<void> {
		const vscode = this.vscode;
		try {
			await this.shown().changes.undo(absPath);
		} catch (err) {
			void vscode.window.showErrorMessage(`pid: could not undo the change to ${absPath}: ${errorText(err)}`);
		}
	}

	/**
	 * rewindHere is "Rewind to here" on a message of the person's: what a rewind would take
	 * back is shown first (checkpoints/diff, as a diff document beside the chat), then the
	 * choice of files, conversation or both; after the rewind the chat shows the conversation
	 * as pid has it and says what was restored and what was left as it was (with why), and a
	 * rewound message goes back into the prompt box. Files left as they were because they
	 * changed since pid wrote them can then be restored anyway.
	 */
	async rewindHere(itemId: string): Promise<void> {
		const vscode = this.vscode;
		const c = this.current();
		try {
			const plan = await c.rewindPlan(itemId);
			const name = `Rewind to before ${short(plan.checkpoint.prompt).replace(/[\\/]/g, ' ')}.diff`;
			const uri = this.snapshots.put(path.join(path.sep, name), 'rewind', diffDocument(plan.checkpoint, plan.files, workspaceFolder(vscode)));
			const doc = await vscode.workspace.openTextDocument(uri);
			await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
			// The diff is for the choice: it closes once the choice is made (or dismissed).
			const closeDiff = () => {
				const tabs = (vscode.window.tabGroups?.all ?? []).flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString());
				if (tabs.length > 0) {
					void vscode.window.tabGroups.close(tabs, true).then(undefined, () => undefined);
				}
			};
			type Item = VSCode.QuickPickItem & { restore: (typeof RESTORE_CHOICES)[number]['restore'] };
			const n = plan.files.length;
			// Said before the choice: the files a rewind of the files would leave as they are, and why.
			const left = skipped(plan.files, workspaceFolder(vscode));
			const back = n - plan.files.filter((f) => f.skip).length;
			const items: Item[] = RESTORE_CHOICES.map((r) => ({
				label: r.label,
				description: r.restore === 'conversation' ? undefined : n === 0 ? 'no file changed since' : `${back} file${back === 1 ? '' : 's'} back as before${left ? `, ${n - back} left as ${n - back === 1 ? 'it is' : 'they are'}` : ''}`,
				detail: r.restore !== 'conversation' && left ? `${r.detail} ${left}.` : r.detail,
				restore: r.restore,
			}));
			const pick = await vscode.window.showQuickPick(items, {
				title: `pid: Rewind to before "${short(plan.checkpoint.prompt)}"`,
				placeHolder: plan.checkpoint.incomplete
					? `Some changes cannot be taken back (${plan.checkpoint.reason ?? 'pid did not say why'}). Rewind what?`
					: left
						? `${left}. Rewind what?`
						: 'The diff beside shows what the files would get back. Rewind what?',
				ignoreFocusOut: true,
			});
			closeDiff();
			if (!pick) {
				return;
			}
			await c.rewind(plan, pick.restore);
			if (pick.restore !== 'files') {
				this.view.putInPrompt(plan.text);
			}
			// What was left as it is, and Restore them anyway, are in the chat's report.
		} catch (err) {
			this.report(err);
		}
	}

	/**
	 * pickRewind is "pid: Rewind to Here…" (the command palette): the shown chat's messages
	 * that have a checkpoint, newest first, as typed; the picked one goes on as its "Rewind to
	 * here" button would.
	 */
	async pickRewind(): Promise<void> {
		const vscode = this.vscode;
		const users = this.chat.userItems().filter((u) => u.checkpointId !== undefined);
		if (users.length === 0) {
			void vscode.window.showInformationMessage('pid: no message of this chat can be rewound to (pid keeps a checkpoint per prompt, from its first message on).');
			return;
		}
		type Item = VSCode.QuickPickItem & { id: string };
		const now = new Date();
		const items: Item[] = users.reverse().map((u) => ({
			label: short(u.text),
			...(u.at !== undefined ? { description: relativeTime(new Date(u.at).toISOString(), now) } : {}),
			id: u.id,
		}));
		const pick = await vscode.window.showQuickPick(items, { title: 'pid: Rewind to Here', placeHolder: 'Back to before which of your messages? (the diff since is shown next)', matchOnDescription: true });
		if (pick) {
			await this.rewindHere(pick.id);
		}
	}

	dispose(): void {
		for (const d of this.subs.splice(0)) {
			d.dispose();
		}
	}
}
