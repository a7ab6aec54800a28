// The files a run changed, and what each held before the run's first change to it, so that
// the chat can offer "Open diff" (before the run ↔ now) and "Undo" (put that back). The
// snapshot is taken when pid announces a write or edit (toolStart, before the call runs) or
// when it writes through the editor (fs/write_text_file), whichever comes first; files that
// bash changes are not seen. No `vscode` import: the file access is given (tests use the
// disk; the extension its open documents, unsaved changes included).

import * as path from 'node:path';
import type { ChangeState } from './webviewProtocol';

/** How the tracker reads and restores files. */
export interface FileAccess {
	/** The file's text as the editor has it now, or undefined when it does not exist. Synchronous: it runs as pid's message arrives, before pid's next one. */
	read(absPath: string): string | undefined;
	/** Puts text back (through the editor when the file is open). */
	write(absPath: string, text: string): Promise<void>;
	/** Removes a file the run created. */
	remove(absPath: string): Promise<void>;
}

// (ChangeState is in webviewProtocol.ts: the view shows it.)
export type { ChangeState };

export interface ChangedFile {
	/** Absolute. */
	path: string;
	/** What it held before the run's first change; undefined: it did not exist. */
	before: string | undefined;
	state: ChangeState;
	/** Why the undo failed (state failed). */
	error?: string;
}

/** The tools whose calls change the file named by their `path` argument. */
export const FILE_TOOLS: ReadonlySet<string> = new Set(['write', 'edit']);

/**
 * ChangeTracker keeps, per run, each changed file's content from before the run's first
 * change to it. One run at a time: begin() starts the next (the previous run's list stays
 * until then). Used from the extension host's one thread.
 */
export class ChangeTracker {
	private runId = 0;
	/** Snapshots taken in this run, by absolute path (changed or about to be). */
	private readonly snapshots = new Map<string, { before: string | undefined }>();
	/** The files this run changed, in the order of their first change. */
	private readonly files = new Map<string, ChangedFile>();
	private readonly listeners = new Set<() => void>();

	constructor(private readonly io: FileAccess) {}

	/** The current run's number (0 before the first). */
	get run(): number {
		return this.runId;
	}

	/** begin starts a new run: the list of changed files starts empty. */
	begin(): number {
		this.runId++;
		this.snapshots.clear();
		this.files.clear();
		this.fire();
		return this.runId;
	}

	/** onChange calls l whenever the list of changed files changes. */
	onChange(l: () => void): { dispose(): void } {
		this.listeners.add(l);
		return { dispose: () => this.listeners.delete(l) };
	}

	private fire(): void {
		for (const l of [...this.listeners]) {
			l();
		}
	}

	/**
	 * willChange snapshots absPath unless this run already has: called before pid may change
	 * it (a write or edit announced, a write through the editor about to be applied).
	 */
	willChange(absPath: string): void {
		const p = path.resolve(absPath);
		if (!this.snapshots.has(p)) {
			this.snapshots.set(p, { before: this.io.read(p) });
		}
	}

	/** changed records that absPath was changed by this run (its snapshot is the one taken before). */
	changed(absPath: string): void {
		const p = path.resolve(absPath);
		this.willChange(p);
		const f = this.files.get(p);
		if (f && f.state === 'changed') {
			return;
		}
		this.files.set(p, { path: p, before: this.snapshots.get(p)?.before, state: 'changed' });
		this.fire();
	}

	/** The files this run changed, in the order of their first change. */
	list(): ChangedFile[] {
		return [...this.files.values()].map((f) => ({ ...f }));
	}

	/** The content absPath held before this run's first change to it ('' for a file the run created); undefined when the run did not change it. */
	before(absPath: string): { existed: boolean; text: string } | undefined {
		const f = this.files.get(path.resolve(absPath));
		return f ? { existed: f.before !== undefined, text: f.before ?? '' } : undefined;
	}

	/**
	 * undo puts back what absPath held before the run's first change to it (removes it when the
	 * run created it). It throws, and marks the file failed, when that cannot be done; a file
	 * this run did not change is an error.
	 */
	async undo(absPath: string): Promise<void> {
		const p = path.resolve(absPath);
		const f = this.files.get(p);
		if (!f) {
			throw new Error(`pid did not change ${p} in the last run`);
		}
		try {
			if (f.before === undefined) {
				await this.io.remove(p);
			} else {
				await this.io.write(p, f.before);
			}
			f.state = 'undone';
			delete f.error;
		} catch (err) {
			f.state = 'failed';
			f.error = err instanceof Error ? err.message : String(err);
			throw err;
		} finally {
			this.fire();
		}
	}
}

/**
 * targetPath resolves a file tool's `path` argument against the session's folder: the file a
 * write or edit call changes, or undefined for other calls.
 */
export function targetPath(toolName: string, args: unknown, cwd: string | undefined): string | undefined {
	if (!FILE_TOOLS.has(toolName) || args === null || typeof args !== 'object') {
		return undefined;
	}
	const p = (args as { path?: unknown }).path;
	if (typeof p !== 'string' || p === '') {
		return undefined;
	}
	if (path.isAbsolute(p)) {
		return path.resolve(p);
	}
	return cwd ? path.resolve(cwd, p) : undefined;
}

/**
 * changedSpan returns the smallest span of before that must be replaced to make after: its
 * start and end offsets in before and the text to put there (the common start and end are
 * kept, so that an editor applying it keeps the cursor, folds and marks outside the change).
 * Equal texts give an empty span with empty text.
 */
export function changedSpan(before: string, after: string): { start: number; end: number; text: string } {
	let start = 0;
	const max = Math.min(before.length, after.length);
	while (start < max && before.charCodeAt(start) === after.charCodeAt(start)) {
		start++;
	}
	let end = 0;
	while (end < max - start && before.charCodeAt(before.length - 1 - end) === after.charCodeAt(after.length - 1 - end)) {
		end++;
	}
	// Never split a surrogate pair or a CRLF: widen to whole characters and line ends.
	while (start > 0 && (isLow(before.charCodeAt(start)) || (before[start] === '\n' && before[start - 1] === '\r'))) {
		start--;
	}
	while (end > 0 && (isLow(before.charCodeAt(before.length - end)) || (before[before.length - end] === '\n' && before[before.length - end - 1] === '\r'))) {
		end--;
	}
	return { start, end: before.length - end, text: after.slice(start, after.length - end) };
}

function isLow(c: number): boolean {
	return c >= 0xdc00 && c <= 0xdfff;
}
