// ProblemWatcher answers pid's editor/diagnostics from the editor's own diagnostics (VS Code:
// vscode.languages.getDiagnostics, the language servers already running), waiting for fresh
// ones: a file pid changed through the editor is answered once its language server reported
// on the new text, or after waitMs with what the editor has; a file pid did not change is
// answered at once. How long a changed file is waited for depends on its language, when the
// source says it (VS Code does):
//   - a language that reported in this window: up to waitMs (its server is up);
//   - a language with a checker installed that has not reported yet (its server may still be
//     starting, as TypeScript's does for seconds): up to firstWaitMs, and when no report came
//     the answer names the file in `starting` (pid tells the model problems may come later);
//   - plain text and Markdown, and a language nothing installed checks: at once (no report
//     is coming, and waiting would slow every edit of such a file).
// No `vscode` import: extension.ts (editorFiles.ts) supplies the source, tests a fake one.

import * as path from 'node:path';
import type { Diagnostic, EditorDiagnosticsParams, EditorDiagnosticsResult } from './protocol';

/** Where the problems come from: the editor's diagnostics and their changes. */
export interface ProblemSource {
	/** The problems of one file (absolute path) now; every file's when path is undefined. */
	get(absPath?: string): Diagnostic[];
	/** Calls listener with the files (absolute paths) whose problems changed. */
	onDidChange(listener: (absPaths: readonly string[]) => void): { dispose(): void };
	/**
	 * Makes the editor's language servers look at a file pid changed that no editor shows
	 * (VS Code: a tab opened in the background, never replacing one). It may return a
	 * function that closes what it opened, called once the answer is given.
	 */
	open?(absPath: string): Promise<void | (() => void)>;
	/**
	 * The language of a file's document as the editor has it (VS Code's languageId): an open
	 * document's, synchronously; undefined when no document has it. Optional: without it
	 * every changed file waits waitMs.
	 */
	languageOf?(absPath: string): string | undefined;
	/** The language of a file, opening its document (without showing it) when none is open; undefined when it cannot be opened. */
	language?(absPath: string): Promise<string | undefined>;
	/** Reports whether something installed checks files of a language (a language server that may still be starting). */
	checks?(languageId: string): boolean;
}

/** A cancellation token (vscode-jsonrpc's and VS Code's both fit). */
export interface Token {
	readonly isCancellationRequested: boolean;
	onCancellationRequested(listener: () => void): { dispose(): void };
}

const DEFAULT_WAIT_MS = 1500;
const DEFAULT_FIRST_WAIT_MS = 8000;

/** The languages answered at once unless something reported on them in this window: nothing checks them by default. */
export const QUIET_LANGUAGES: ReadonlySet<string> = new Set(['plaintext', 'markdown']);

/** How long a changed file is waited for (see the file's comment). */
export type WaitKind = 'change' | 'first' | 'none';

export class ProblemWatcher {
	/** How many diagnostics changes each file had (absolute, resolved paths). */
	private readonly changes = new Map<string, number>();
	/** The files pid wrote, with their change count at the write: fresh once it grows. */
	private readonly written = new Map<string, number>();
	/** The languages whose problems changed in this window: a server for them is up. */
	private readonly reported = new Set<string>();
	private readonly waiters = new Set<() => void>();
	private readonly sub: { dispose(): void };

	constructor(private readonly source: ProblemSource) {
		this.sub = source.onDidChange((paths) => {
			for (const p of paths) {
				const k = path.resolve(p);
				this.changes.set(k, (this.changes.get(k) ?? 0) + 1);
				const lang = source.languageOf?.(k);
				if (lang !== undefined) {
					this.reported.add(lang);
				}
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

	/** Reports whether a language's problems changed in this window (a server for it reported). */
	hasReported(languageId: string): boolean {
		return this.reported.has(languageId);
	}

	/** waitKind says how long a changed file of that language is waited for (see the file's comment). */
	waitKind(languageId: string | undefined): WaitKind {
		if (languageId === undefined) {
			return 'none';
		}
		if (this.reported.has(languageId)) {
			return 'change';
		}
		if (QUIET_LANGUAGES.has(languageId) || !this.source.checks?.(languageId)) {
			return 'none';
		}
		return 'first';
	}

	/**
	 * answer is editor/diagnostics' answer without `starting` (see report): the problems of
	 * params.paths (every file's when empty).
	 */
	async answer(params: EditorDiagnosticsParams, token?: Token): Promise<Diagnostic[]> {
		return (await this.report(params, token)).diagnostics;
	}

	/**
	 * report is editor/diagnostics' answer: the problems of params.paths (every file's when
	 * empty), given once each changed file's problems are fresh, or once its wait ended (or
	 * the token's cancellation) with what the editor has then; `starting` names the files
	 * whose language's first report did not come within firstWaitMs.
	 */
	async report(params: EditorDiagnosticsParams, token?: Token): Promise<EditorDiagnosticsResult> {
		const paths = Array.isArray(params?.paths) ? params.paths.filter((p): p is string => typeof p === 'string' && path.isAbsolute(p)).map((p) => path.resolve(p)) : [];
		if (paths.length === 0) {
			return { diagnostics: this.source.get() };
		}
		const waitMs = typeof params.waitMs === 'number' && params.waitMs >= 0 ? params.waitMs : DEFAULT_WAIT_MS;
		const firstWaitMs = typeof params.firstWaitMs === 'number' && params.firstWaitMs >= 0 ? params.firstWaitMs : DEFAULT_FIRST_WAIT_MS;
		// Each changed file's wait: by its language when the source knows languages.
		const waits = new Map<string, number>();
		const first = new Set<string>();
		for (const p of paths.filter((x) => !this.fresh(x))) {
			if (!this.source.language) {
				waits.set(p, waitMs);
				continue;
			}
			const kind = this.waitKind(await this.source.language(p).catch(() => undefined));
			if (kind === 'first') {
				first.add(p);
			}
			if (kind !== 'none') {
				waits.set(p, kind === 'first' ? firstWaitMs : waitMs);
			}
		}
		const stale = [...waits.keys()];
		const closers: (() => void)[] = [];
		if (stale.length > 0 && this.source.open) {
			await Promise.all(
				stale.map((p) =>
					this.source.open?.(p).then(
						(close) => close && closers.push(close),
						() => undefined,
					),
				),
			);
		}
		const t0 = Date.now();
		const waiting = () => stale.some((p) => !this.fresh(p) && Date.now() - t0 < (waits.get(p) ?? 0));
		if (waiting() && !token?.isCancellationRequested) {
			await new Promise<void>((resolve) => {
				const timers: NodeJS.Timeout[] = [];
				const done = () => {
					timers.forEach((t) => clearTimeout(t));
					this.waiters.delete(check);
					cancel?.dispose();
					resolve();
				};
				const check = () => {
					if (!waiting()) {
						done();
					}
				};
				// A timer at each file's end of wait: the answer comes when the last one ends.
				for (const ms of new Set(waits.values())) {
					timers.push(setTimeout(check, Math.max(0, ms - (Date.now() - t0)) + 1));
				}
				const cancel = token?.onCancellationRequested(done);
				this.waiters.add(check);
			});
		}
		const starting = [...first].filter((p) => !this.fresh(p));
		for (const p of paths) {
			this.written.delete(p);
		}
		const diagnostics = paths.flatMap((p) => this.source.get(p));
		for (const close of closers) {
			close();
		}
		return starting.length > 0 ? { diagnostics, starting } : { diagnostics };
	}

	dispose(): void {
		this.sub.dispose();
		for (const w of [...this.waiters]) {
			w();
		}
		this.waiters.clear();
	}
}
