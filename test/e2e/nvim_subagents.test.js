// Issue 27 in a real Neovim (tmux), checked on the screen as a person sees it:
// - the model calls two tasks in one batch (an explore child that reads, a general child that
//   writes); each shows as a card "[task] AGENT: DESCRIPTION" with its steps folded under it;
// - the general child's write asks: the float names the task that asks; keys typed elsewhere
//   answer nothing; :PidApproval and `a` answer it;
// - after the run, zR in the chat opens the folds: each child's steps under its own card (its
//   tool call, its approval, what it said, how it ended), none of them as a conversation of
//   their own.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { panes, withNvim } from './lib/nvim.js';

const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

test('Neovim: two subagents under their task cards, steps folded, the child approval naming its task', { timeout: 60000 }, async () => {
	const model = {
		provider: 'script',
		turns: [
			{
				content: [
					call('t1', 'task', { description: 'find Add', prompt: 'Where is Add defined?', agent: 'explore' }),
					call('t2', 'task', { description: 'write notes', prompt: 'Write notes.txt saying hi.', agent: 'general' }),
				],
			},
			{ content: [text('Both tasks are done.')] },
		],
		subagents: {
			'find Add': { provider: 'script', turns: [{ content: [call('r1', 'read', { path: 'a.go' })] }, { content: [text('Add is in a.go, line 1.')] }] },
			'write notes': { provider: 'script', turns: [{ content: [call('w1', 'write', { path: 'notes.txt', content: 'hi\n' })] }, { content: [text('Wrote notes.txt.')] }] },
		},
	};
	await withNvim({ name: 'nvim-subagents', session: { model }, files: { 'a.go': 'func Add(a, b int) int { return a + b }\n' } }, async (nv) => {
		await nv.sendKeys(':PidAsk look around with helpers', 'Enter');
		let screen = await nv.waitFor((s) => s.includes('asked by a subagent, for the task "write notes" (general subagent, call t2)'), { what: "the child's approval" });
		await nv.saveScreen('nvim-subagents-approval', screen);
		assert.ok(screen.includes('pid wants to run write notes.txt:'), `the float says what it asks:\n${screen}`);
		screen = await nv.waitFor((s) => panes(s).right.some((r) => /^\[task\] general: write notes\s+running · its subagent waits for your answer/.test(r)), { what: 'the task card to say its child waits' });
		// Keys typed elsewhere answer nothing.
		await nv.sendKeys('i', 'a a A', 'Escape');
		screen = await nv.waitFor((s) => s.includes('a a A'), { what: 'the typed keys in the file buffer' });
		assert.ok(screen.includes('asked by a subagent'), `the question is still open:\n${screen}`);
		assert.ok(!fs.existsSync(path.join(nv.dirs.workspace, 'notes.txt')), 'nothing written yet');

		await nv.sendKeys(':PidApproval', 'Enter', 'a');
		screen = await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the run to end' });
		await nv.saveScreen('nvim-subagents-folded', screen);
		let chat = panes(screen).right;
		const c1 = chat.findIndex((r) => /^\[task\] explore: find Add\s+ok · Add is in a\.go, line 1\./.test(r));
		const c2 = chat.findIndex((r) => /^\[task\] general: write notes\s+ok · Wrote notes\.txt\./.test(r));
		assert.ok(c1 >= 0 && c2 > c1, `both task cards, done:\n${screen}`);
		// Folded: one closed fold line under each card.
		assert.match(chat[c1 + 1], /^\+-+\s+4 lines: .*explore subagent started/, `the first child's steps are folded:\n${screen}`);
		assert.match(chat[c2 + 1], /^\+-+\s+5 lines: .*general subagent started/, `the second child's steps are folded:\n${screen}`);
		assert.equal(fs.readFileSync(path.join(nv.dirs.workspace, 'notes.txt'), 'utf8'), 'hi\n');

		// zR in the chat window opens them.
		await nv.sendKeys('Escape', 'C-w', 'l', 'zR');
		screen = await nv.waitFor((s) => panes(s).right.some((r) => r.includes('│ [approval] write (w1): allow')), { what: 'the open folds' });
		await nv.saveScreen('nvim-subagents-open', screen);
		chat = panes(screen).right;
		const at = chat.findIndex((r) => r.startsWith('[task] explore: find Add'));
		assert.deepEqual(chat.slice(at + 1, at + 5).map((r) => r.replace(/\(session \w+\)/, '(session S)')), [
			'  │ explore subagent started (session S)',
			'  │ [tool] read a.go  ok · 1 line',
			'  │ says: Add is in a.go, line 1.',
			'  │ [done] stop',
		], `the first child's steps:\n${screen}`);
		const at2 = chat.findIndex((r) => r.startsWith('[task] general: write notes'));
		assert.ok(chat[at2 + 2].startsWith('  │ [tool] write notes.txt  ok · Created notes.txt'), `the second child's write:\n${screen}`);
		assert.equal(chat[at2 + 3], '  │ [approval] write (w1): allow', `its approval under it:\n${screen}`);
		assert.ok(!chat.some((r) => r.startsWith('[tool] read') || r.startsWith('[tool] write')), `no child step at the top level:\n${screen}`);
	});
});
