// The review of a prompt's changes in VS Code's own editors (review.ts has the logic): the
// chat's "N files changed · Review" opens them in the multi-file diff editor (the file before
// the prompt | now), each pending hunk has Keep and Undo CodeLenses and a file Keep all / Undo
// all, and the commands pid.review.next/previous/keep/undo act on the hunk at the cursor (keys
// in package.json). After a keep or an undo the lenses follow pid's list again.

import * as vscode from 'vscode';
import type { PidController } from './controller';
import { firstLine, hunkAt, nextHunkLine } from './review';

/** The scheme of the documents of a file before the prompt (left side of the diffs). */
const SCHEME = 'pid-before';

/**
 * registerReview registers the review's content provider, CodeLenses and commands. current is
 * the shown conversation's controller; report shows a failure.
 */
export function registerReview(context: vscode.ExtensionContext, current: () => PidController, report: (err: unknown) => void): void {
	const before = new Map<string, string>(); // absolute path -> its text before the prompt
	const changed = new vscode.EventEmitter<vscode.Uri>();
	const lensesChanged = new vscode.EventEmitter<void>();
	const provider: vscode.TextDocumentContentProvider = {
		onDidChange: changed.event,
		provideTextDocumentContent: (uri) => before.get(uri.path) ?? '',
	};
	const lenses: vscode.CodeLensProvider = {
		onDidChangeCodeLenses: lensesChanged.event,
		provideCodeLenses(doc) {
			if (doc.uri.scheme !== 'file') {
				return [];
			}
			const f = current().reviewed(doc.uri.fsPath);
			if (!f) {
				return [];
			}
			const pending = f.hunks.filter((h) => h.state !== 'kept');
			const out: vscode.CodeLens[] = [];
			const top = new vscode.Range(0, 0, 0, 0);
			if (pending.length > 0) {
				out.push(new vscode.CodeLens(top, { title: `pid: Keep all (${pending.length})`, command: 'pid.review.keep', arguments: [f.path] }));
				out.push(new vscode.CodeLens(top, { title: 'Undo all', command: 'pid.review.undo', arguments: [f.path] }));
			}
			for (const h of pending) {
				const line = Math.min(firstLine(h) - 1, Math.max(doc.lineCount - 1, 0));
				const at = new vscode.Range(line, 0, line, 0);
				out.push(new vscode.CodeLens(at, { title: `Keep ${h.header.split(' @@')[0]} @@`, command: 'pid.review.keep', arguments: [f.path, [h.id]] }));
				out.push(new vscode.CodeLens(at, { title: 'Undo', command: 'pid.review.undo', arguments: [f.path, [h.id]] }));
			}
			return out;
		},
	};

	/** refresh lists the changes again and tells the lenses. */
	const refresh = () => lensesChanged.fire();

	/** atCursor is the reviewed file and hunk under the active editor's cursor. */
	const atCursor = () => {
		const ed = vscode.window.activeTextEditor;
		const f = ed && ed.document.uri.scheme === 'file' ? current().reviewed(ed.document.uri.fsPath) : undefined;
		return { ed, f, h: ed && f ? hunkAt(f, ed.selection.active.line + 1) : undefined };
	};

	const open = async () => {
		const c = current();
		const r = await c.reviewList();
		if (r.files.length === 0) {
			void vscode.window.showInformationMessage('pid: the latest prompt left no change to review.');
			return;
		}
		const resources: [vscode.Uri, vscode.Uri, vscode.Uri][] = [];
		for (const f of r.files) {
			const text = (await c.reviewBefore(f.path)) ?? '';
			before.set(f.path, text);
			const file = vscode.Uri.file(f.path);
			const left = vscode.Uri.from({ scheme: SCHEME, path: f.path });
			changed.fire(left);
			const right = f.change === 'deleted' ? vscode.Uri.from({ scheme: SCHEME, path: f.path + '.deleted' }) : file;
			resources.push([file, left, right]);
		}
		refresh();
		const pending = r.files.reduce((n, f) => n + f.hunks.filter((h) => h.state !== 'kept').length, 0);
		await vscode.commands.executeCommand('vscode.changes', `pid: ${r.files.length} file${r.files.length === 1 ? '' : 's'} changed (${pending} to review)`, resources);
	};

	const act = (what: 'keep' | 'undo') => async (absPath?: string, hunkIds?: string[]) => {
		try {
			if (absPath === undefined) {
				const { f, h } = atCursor();
				if (!f || !h) {
					void vscode.window.showInformationMessage('pid: no hunk of the review at the cursor.');
					return;
				}
				absPath = f.path;
				hunkIds = [h.id];
			}
			const c = current();
			if (what === 'keep') {
				await c.reviewKeep(absPath, hunkIds);
			} else {
				const r = await c.reviewUndo(absPath, hunkIds);
				for (const s of r.skipped) {
					void vscode.window.showWarningMessage(`pid: a hunk was left as it is: ${s.reason}`);
				}
			}
			refresh();
		} catch (err) {
			report(err);
		}
	};

	const move = (dir: 1 | -1) => () => {
		const { ed, f } = atCursor();
		const l = ed && f ? nextHunkLine(f, ed.selection.active.line + 1, dir) : undefined;
		if (ed && l !== undefined) {
			const p = new vscode.Position(l - 1, 0);
			ed.selection = new vscode.Selection(p, p);
			ed.revealRange(new vscode.Range(p, p), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
		}
	};

	context.subscriptions.push(
		changed,
		lensesChanged,
		vscode.workspace.registerTextDocumentContentProvider(SCHEME, provider),
		vscode.languages.registerCodeLensProvider({ scheme: 'file' }, lenses),
		vscode.commands.registerCommand('pid.reviewChanges', () => open().catch(report)),
		vscode.commands.registerCommand('pid.review.keep', act('keep')),
		vscode.commands.registerCommand('pid.review.undo', act('undo')),
		vscode.commands.registerCommand('pid.review.next', move(1)),
		vscode.commands.registerCommand('pid.review.previous', move(-1)),
	);
}
