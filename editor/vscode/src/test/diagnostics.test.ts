// The editor's problems for pid (issue 26): ProblemWatcher answers editor/diagnostics with
// fresh problems (a file pid wrote waits for its language server's next report, up to waitMs;
// a file pid did not write is answered at once), and against the real pid an edit's result
// names the problem the "editor" reports, and the chat shows it on the edit's card.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ProblemWatcher, type ProblemSource } from '../diagnostics';
import type { Diagnostic } from '../protocol';
import { start } from './harness';

const T = { timeout: 60_000 };

/** FakeEditor is a language server's view of files: set() reports a file's problems, as VS Code's collection would. */
class FakeEditor implements ProblemSource {
	readonly byPath = new Map<string, Diagnostic[]>();
	private readonly listeners = new Set<(p: readonly string[]) => void>();
	readonly opened: string[] = [];
	get(absPath?: string): Diagnostic[] {
		return absPath === undefined ? [...this.byPath.values()].flat() : (this.byPath.get(absPath) ?? []);
	}
	onDidChange(l: (p: readonly string[]) => void) {
		this.listeners.add(l);
		return { dispose: () => this.listeners.delete(l) };
	}
	async open(absPath: string): Promise<void | (() => void)> {
		this.opened.push(absPath);
	}
	set(absPath: string, diags: Diagnostic[]): void {
		this.byPath.set(absPath, diags);
		for (const l of [...this.listeners]) {
			l([absPath]);
		}
	}
}

const problem = (p: string, line: number, message: string): Diagnostic => ({ path: p, range: { start: { line, character: 2 }, end: { line, character: 5 } }, severity: 1, message, source: 'fake' });

test('ProblemWatcher: a written file waits for its next report; an unwritten one is answered at once; waitMs bounds the wait', async () => {
	const ed = new FakeEditor();
	const w = new ProblemWatcher(ed);
	ed.set('/w/a.json', [problem('/w/a.json', 0, 'old problem')]);

	// Not written by pid: at once, with what the editor has (a long waitMs is never waited).
	const t0 = Date.now();
	assert.deepEqual((await w.answer({ sessionId: 's', paths: ['/w/a.json'], waitMs: 60_000 })).map((d) => d.message), ['old problem']);
	assert.ok(Date.now() - t0 < 5_000);

	// Written: the answer waits for the report on the new text, not the old one.
	w.noteWritten('/w/a.json');
	let settled = false;
	const pending = w.answer({ sessionId: 's', paths: ['/w/a.json'], waitMs: 60_000 }).then((r) => {
		settled = true;
		return r;
	});
	await new Promise((r) => setImmediate(r));
	assert.equal(settled, false, 'still waiting for the language server');
	assert.deepEqual(ed.opened, ['/w/a.json'], 'the file was opened for the language servers');
	ed.set('/w/a.json', [problem('/w/a.json', 3, 'new problem')]);
	assert.deepEqual((await pending).map((d) => d.message), ['new problem']);

	// A report that never comes: after waitMs, what the editor has.
	w.noteWritten('/w/a.json');
	const t1 = Date.now();
	assert.deepEqual((await w.answer({ sessionId: 's', paths: ['/w/a.json'], waitMs: 80 })).map((d) => d.message), ['new problem']);
	assert.ok(Date.now() - t1 >= 70, 'it waited about waitMs');

	// No paths: every file's problems.
	ed.set('/w/b.json', [problem('/w/b.json', 1, 'b problem')]);
	assert.deepEqual((await w.answer({ sessionId: 's', paths: [], waitMs: 10 })).map((d) => d.message).sort(), ['b problem', 'new problem']);
	w.dispose();
});

/** LangEditor is FakeEditor with languages: each file's language by its extension, and the languages something checks. */
class LangEditor extends FakeEditor {
	readonly closed: string[] = [];
	constructor(readonly checked: readonly string[]) {
		super();
	}
	languageOf(absPath: string): string | undefined {
		return { '.ts': 'typescript', '.txt': 'plaintext', '.md': 'markdown', '.py': 'python', '.json': 'json' }[path.extname(absPath)];
	}
	async language(absPath: string) {
		return this.languageOf(absPath);
	}
	checks(languageId: string): boolean {
		return this.checked.includes(languageId);
	}
	override async open(absPath: string): Promise<void | (() => void)> {
		this.opened.push(absPath);
		return () => {
			this.closed.push(absPath);
		};
	}
}

/** settles runs the pending promise callbacks and reports whether p has settled. */
async function settles(p: Promise<unknown>): Promise<boolean> {
	let done = false;
	void p.then(() => (done = true));
	for (let i = 0; i < 10; i++) {
		await new Promise((r) => setImmediate(r));
	}
	return done;
}

test("ProblemWatcher: plain text, Markdown and a language nothing checks are answered at once; a checked language's first report is waited up to firstWaitMs, and its file named as starting when it does not come", async (t) => {
	t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
	const ed = new LangEditor(['typescript', 'json', 'markdown']);
	const w = new ProblemWatcher(ed);
	const ask = (p: string) => w.report({ sessionId: 's', paths: [p], waitMs: 1500, firstWaitMs: 8000 });

	// Nothing checks them: at once, without opening anything (no time passes).
	for (const p of ['/w/notes.txt', '/w/README.md', '/w/a.py']) {
		w.noteWritten(p);
		assert.equal(await settles(ask(p)), true, `${p} answered at once`);
	}
	assert.deepEqual(ed.opened, []);

	// The first .ts file: no TypeScript report yet in this window, so up to firstWaitMs.
	w.noteWritten('/w/a.ts');
	const first = ask('/w/a.ts');
	assert.equal(await settles(first), false);
	assert.deepEqual(ed.opened, ['/w/a.ts'], 'shown to the language servers');
	t.mock.timers.tick(1600);
	assert.equal(await settles(first), false, 'still waiting after waitMs: the server may be starting');
	t.mock.timers.tick(6500);
	assert.deepEqual(await first, { diagnostics: [], starting: ['/w/a.ts'] }, 'no report in firstWaitMs: named as starting');
	assert.deepEqual(ed.closed, ['/w/a.ts'], 'what was opened for it is closed once answered');

	// The server reports during the first wait: answered then, not starting.
	w.noteWritten('/w/b.ts');
	const second = ask('/w/b.ts');
	assert.equal(await settles(second), false);
	t.mock.timers.tick(3000);
	ed.set('/w/b.ts', [problem('/w/b.ts', 0, 'type error')]);
	assert.deepEqual((await second).starting, undefined);
	assert.deepEqual((await second).diagnostics.map((d) => d.message), ['type error']);

	// TypeScript reported in this window: the next file waits waitMs only.
	w.noteWritten('/w/c.ts');
	const third = ask('/w/c.ts');
	assert.equal(await settles(third), false);
	t.mock.timers.tick(1600);
	assert.deepEqual(await third, { diagnostics: [] });

	// Markdown once something reported on it in this window: waited for like any language.
	ed.set('/w/README.md', []);
	w.noteWritten('/w/README.md');
	const md = ask('/w/README.md');
	assert.equal(await settles(md), false, 'a Markdown checker reported in this window: its report is awaited');
	ed.set('/w/README.md', [problem('/w/README.md', 2, 'broken link')]);
	assert.deepEqual((await md).diagnostics.map((d) => d.message), ['broken link']);
	w.dispose();
});

test('against pid: a language server still starting is said in the answer, and the model reads that the problems may come later', T, async (t) => {
	const ed = new LangEditor(['typescript']);
	const w = new ProblemWatcher(ed);
	let asked: unknown;
	const h = start(t, {
		workspace: true,
		answer: () => 'Allow',
		editorFiles: {
			read: (p) => fs.readFileSync(p, 'utf8'),
			write: async (p, content) => {
				w.noteWritten(p);
				fs.writeFileSync(p, content);
			},
		},
		editorDiagnostics: (params, token) => {
			asked = params;
			return w.report(params, token);
		},
		session: {
			diagnostics: { waitMs: 50, firstWaitMs: 200 },
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.ts', content: 'let x: number = "one";\n' } }] },
					{ content: [{ type: 'text', text: 'done' }] },
				],
			},
		},
	});
	const run = await h.c.ask('write a.ts');
	assert.equal(run?.state, 'done', h.ui.lines.join('\n'));
	assert.equal((asked as { firstWaitMs?: number }).firstWaitMs, 200, 'pid sends the session\'s firstWaitMs');
	const result = (run?.result?.messages ?? []).find((m) => m.role === 'toolResult' && m.toolCallId === 'w1');
	assert.ok(result && result.role === 'toolResult');
	const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
	assert.match(text, /\nThe language server for a\.ts was still starting: problems may come later; call diagnostics before you finish\.$/, text);
	assert.ok(h.ui.lines.some((l) => /^pid: the editor's problems of 1 file after \d+ ms: 0 problems, 0 errors; still starting: the language server for \/.*\/a\.ts$/.test(l)), h.ui.lines.join('\n'));
	w.dispose();
	await h.shutdown();
});

test('against pid: an edit that breaks a .json file gets the editor\'s error in its result (what the model reads next), and the card shows it', T, async (t) => {
	const ed = new FakeEditor();
	const w = new ProblemWatcher(ed);
	let file = '';
	const h = start(t, {
		workspace: true,
		answer: () => 'Allow',
		// The editor's files: the write lands, then the "JSON language server" reports on the new text.
		editorFiles: {
			read: (p) => fs.readFileSync(p, 'utf8'),
			write: async (p, content) => {
				w.noteWritten(p);
				fs.writeFileSync(p, content);
				setImmediate(() => {
					try {
						JSON.parse(content);
						ed.set(p, []);
					} catch {
						ed.set(p, [{ path: p, range: { start: { line: 1, character: 9 }, end: { line: 1, character: 10 } }, severity: 1, message: 'Expected comma or closing brace', source: 'json' }]);
					}
				});
			},
		},
		editorDiagnostics: (params, token) => w.answer(params, token),
		session: {
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'r1', name: 'read', arguments: { path: 'conf.json' } }] },
					{ content: [{ type: 'toolCall', id: 'e1', name: 'edit', arguments: { path: 'conf.json', edits: [{ oldText: '"b": 2', newText: '"b": 2 "c": 3' }] } }] },
					{ content: [{ type: 'text', text: 'done' }] },
				],
			},
		},
	});
	file = path.join(fs.realpathSync(h.ws), 'conf.json');
	fs.writeFileSync(file, '{\n  "a": 1,\n  "b": 2\n}\n');
	const run = await h.c.ask('add c');
	assert.equal(run?.state, 'done', h.ui.lines.join('\n'));
	const result = (run?.result?.messages ?? []).find((m) => m.role === 'toolResult' && m.toolCallId === 'e1');
	assert.ok(result && result.role === 'toolResult');
	const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
	assert.match(text, /Problems the editor reports in conf\.json after this change:\nL2:10 Expected comma or closing brace \(json\)/, text);
	assert.ok(h.ui.lines.some((l) => /^pid: the editor's problems of 1 file after \d+ ms: 1 problem, 1 error$/.test(l)), h.ui.lines.join('\n'));
	const card = h.c.chat.tool('e1');
	assert.deepEqual(card?.problems, [{ label: 'conf.json', line: 2, column: 10, severity: 'error', message: 'Expected comma or closing brace', source: 'json' }]);
	w.dispose();
	await h.shutdown();
});
