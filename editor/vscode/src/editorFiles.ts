// VS Code's files for pid: the open documents with their unsaved changes (what pid's file tools
// read), a change applied to an open document and saved (what they write), Undo's view of files,
// the editor's problems as pid asks for them (diagnostics.ts's ProblemWatcher fed from
// vscode.languages), and read-only documents for the diff editor (a file before a run, a
// call's proposal, the diff before a rewind). The VS Code API is given to them (extension.ts
// passes its own), so that tests can stand one in.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as VSCode from 'vscode';
import { changedSpan, type FileAccess } from './changes';
import type { EditorFiles } from './controller';
import { ProblemWatcher } from './diagnostics';
import type { Diagnostic } from './protocol';

/**
 * EditorDocuments is the editor's files as pid sees them (see the file's comment). Used from
 * the extension host's one thread.
 */
export class EditorDocuments {
	constructor(private readonly vscode: typeof VSCode) {}

	/** The open document of a file, if any. */
	openDocument(absPath: string): VSCode.TextDocument | undefined {
		const p = path.resolve(absPath);
		return this.vscode.workspace.textDocuments.find((d) => !d.isClosed && d.uri.scheme === 'file' && path.resolve(d.uri.fsPath) === p);
	}

	/** The file's text as VS Code has it: the open document's (unsaved changes included), else the disk's. */
	async editorText(absPath: string): Promise<string> {
		const doc = this.openDocument(absPath);
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
	async putText(absPath: string, text: string): Promise<void> {
		const vscode = this.vscode;
		const doc = this.openDocument(absPath);
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

	/** problemWatcher answers editor/diagnostics from VS Code's diagnostics, fresh after pid's writes. */
	problemWatcher(): ProblemWatcher {
		const vscode = this.vscode;
		const asProtocol = (uri: VSCode.Uri, d: VSCode.Diagnostic): Diagnostic => ({
			path: uri.fsPath,
			range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
			severity: (Math.min(3, Math.max(0, d.severity)) + 1) as Diagnostic['severity'],
			message: d.message,
			...(d.source ? { source: d.source } : {}),
			...(d.code !== undefined ? { code: typeof d.code === 'object' ? d.code.value : d.code } : {}),
		});
		return new ProblemWatcher({
			get(absPath?: string): Diagnostic[] {
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
			languageOf: (absPath) => this.openDocument(absPath)?.languageId,
			language: async (absPath) => (this.openDocument(absPath) ?? (await vscode.workspace.openTextDocument(vscode.Uri.file(absPath)))).languageId,
			checks: (languageId) => checks(vscode, languageId),
			open: async (absPath: string) => {
				// Language servers check the files in tabs (pull diagnostics ask for those only: a
				// document opened unseen got no report): a tab opened in the background, which takes
				// neither the focus nor the person's preview tab, and is closed again once answered.
				const tabOf = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputText && path.resolve(t.input.uri.fsPath) === path.resolve(absPath));
				if (tabOf()) {
					return undefined;
				}
				await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(absPath), { background: true, preview: false, preserveFocus: true });
				return () => {
					const t = tabOf();
					// Not one the person has turned to (or changed) since.
					if (t && !t.isActive && !t.isDirty) {
						void vscode.window.tabGroups.close(t, true).then(undefined, () => undefined);
					}
				};
			},
		});
	}

	/** filesFor is pid's files through VS Code: a write tells problems first, so that the language server's next report is awaited fresh. */
	filesFor(problems: ProblemWatcher | undefined): EditorFiles {
		return {
			read: (absPath) => this.editorText(absPath),
			write: async (absPath, text) => {
				// Before the change reaches the buffer: the language server's next report is about the new text.
				problems?.noteWritten(absPath);
				await this.putText(absPath, text);
			},
		};
	}

	/** Undo's view of files: the open document's text (read synchronously as pid's message arrives), else the disk's. */
	undoAccess(): FileAccess {
		return {
			read: (p) => {
				const doc = this.openDocument(p);
				if (doc) {
					return doc.getText();
				}
				try {
					return fs.readFileSync(p, 'utf8');
				} catch {
					return undefined;
				}
			},
			write: (p, text) => this.putText(p, text),
			remove: async (p) => {
				await this.vscode.workspace.fs.delete(this.vscode.Uri.file(p), { useTrash: false });
			},
		};
	}
}

/**
 * checks reports whether an installed extension with code checks files of a language: it is
 * activated for the language (onLanguage:ID) or contributes it (then activated for it
 * implicitly). Grammar-only extensions (Python's built-in one) do not count.
 */
export function checks(vscode: typeof VSCode, languageId: string): boolean {
	return (vscode.extensions?.all ?? []).some((e) => {
		const pj = (e.packageJSON ?? {}) as { main?: unknown; browser?: unknown; activationEvents?: unknown; contributes?: { languages?: unknown } };
		if (!pj.main && !pj.browser) {
			return false;
		}
		const events = Array.isArray(pj.activationEvents) ? pj.activationEvents : [];
		const langs = Array.isArray(pj.contributes?.languages) ? (pj.contributes.languages as { id?: unknown }[]) : [];
		return events.includes(`onLanguage:${languageId}`) || langs.some((l) => l?.id === languageId);
	});
}

/** Read-only documents for the diff editor: what a file held before a run, and a call's proposal. */
export class Snapshots implements VSCode.TextDocumentContentProvider {
	static readonly scheme = 'pid-snapshot';
	private readonly texts = new Map<string, string>();
	private n = 0;
	constructor(private readonly vscode: typeof VSCode) {}
	/** put keeps text and returns a URI showing it, named after the file. */
	put(absPath: string, what: string, text: string): VSCode.Uri {
		this.n++;
		const key = `${this.n}`;
		this.texts.set(key, text);
		// At most the last 50 documents are kept.
		if (this.texts.size > 50) {
			this.texts.delete(this.texts.keys().next().value as string);
		}
		return this.vscode.Uri.from({ scheme: Snapshots.scheme, path: absPath, query: `${what}-${key}` });
	}
	/** provideTextDocumentContent (VS Code calls it) returns the kept text, or '' once it was dropped. */
	provideTextDocumentContent(uri: VSCode.Uri): string {
		const key = uri.query.split('-').pop() ?? '';
		return this.texts.get(key) ?? '';
	}
}
