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
	async open(absPath: string) {
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
