// ProblemWatcher answers pid's editor/diagnostics from the editor's own diagnostics (VS Code:
// vscode.languages.getDiagnostics, the language servers already running), waiting for fresh
// ones: a file pid changed through the editor is answered once its language server reported
// on the new text (a diagnostics change for it after the write), or after waitMs with what the
// editor has; a file pid did not change is answered at once. No `vscode` import: extension.ts
// supplies the source, tests a fake one.

import * as path from 'node:path';
import type { Diagnostic, EditorDiagnosticsParams } from './protocol';

/** Where the problems come from: the editor's diagnostics and their changes. */
export interface ProblemSource {
	/** The problems of one file (absolute path) now; every file's when path is undefined. */
	get(absPath?: string): Diagnostic[];
	/** Calls listener with the files (absolute paths) whose problems changed. */
	onDidChange(listener: (absPaths: readonly string[]) => void): { dispose(): void };
	/**
	 * Makes the editor's language servers look at a file pid changed that no editor shows
	 * (VS Code: a preview tab that does not take the focus): they check shown files only.
	 */
	open?(absPath: string): Promise<void>;
}

/** A cancellation token (vscode-jsonrpc's and VS Code's both fit). */
export interface Token {
	readonly isCancellationRequested: boolean;
	onCancellationRequested(listener: () => void): { dispose(): void };
}

const DEFAULT_WAIT_MS = 1500;

export class ProblemWatcher {
	/** How many diagnostics changes each file had (absolute, resolved paths). */
	private readonly changes = new Map<string, number>();
	/** The files pid wrote, with their change count at the write: fresh once it grows. */
	private readonly written = new Map<string, number>();
	private readonly waiters = new Set<() => void>();
	private readonly sub: { dispose(): void };

	constructor(private readonly source: ProblemSource) {
		this.sub = source.onDidChange((paths) => {
			for (const p of paths) {
				const k = path.resolve(p);
				this.changes.set(k, (this.changes.get(k) ?? 0) + 1);
			}
			for (const w of [...this.waiters]) {
				w();
			}
		});
	}

	/** noteWritten marks a file pid just changed (through the editor): its next report is the fresh one. */
	noteWritten(absPath: string): void {
		const k = path.resolve(absPath);
		this.written.set(k, this.changes.get(k) ?? 0);
	}

	/** Reports whether the file's problems are fresh: pid did not change it, or its language server reported since. */
	private fresh(absPath: string): boolean {
		const k = path.resolve(absPath);
		const mark = this.written.get(k);
		return mark === undefined || (this.changes.get(k) ?? 0) > mark;
	}

	/**
	 * answer is editor/diagnostics' answer: the problems of params.paths (every file's when
	 * empty), given once each changed file's problems are fresh, or after waitMs (or the
	 * token's cancellation) with what the editor has then.
	 */
	async answer(params: EditorDiagnosticsParams, token?: Token): Promise<Diagnostic[]> {
		const paths = Array.isArray(params?.paths) ? params.paths.filter((p): p is string => typeof p === 'string' && path.isAbsolute(p)).map((p) => path.resolve(p)) : [];
		if (paths.length === 0) {
			return this.source.get();
		}
		const waitMs = typeof params.waitMs === 'number' && params.waitMs >= 0 ? params.waitMs : DEFAULT_WAIT_MS;
		const stale = paths.filter((p) => !this.fresh(p));
		if (stale.length > 0 && this.source.open) {
			await Promise.all(stale.map((p) => this.source.open?.(p).catch(() => undefined)));
		}
		if (stale.some((p) => !this.fresh(p)) && !token?.isCancellationRequested) {
			await new Promise<void>((resolve) => {
				const done = () => {
					clearTimeout(timer);
					this.waiters.delete(check);
					cancel?.dispose();
					resolve();
				};
				const check = () => {
					if (stale.every((p) => this.fresh(p))) {
						done();
					}
				};
				const timer = setTimeout(done, waitMs);
				const cancel = token?.onCancellationRequested(done);
				this.waiters.add(check);
			});
		}
		for (const p of paths) {
			this.written.delete(p);
		}
		return paths.flatMap((p) => this.source.get(p));
	}

	dispose(): void {
		this.sub.dispose();
		for (const w of [...this.waiters]) {
			w();
		}
		this.waiters.clear();
	}
}
