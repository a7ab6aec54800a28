// Subagents (issue 27) in a real VS Code (code-server in headless Chromium): the model hands a
// task to a general child; the task's card shows the child (its agent, description, steps) with
// its steps folded under it, and the child's write, which asks, unfolds it: the question says
// which task asks and is answered there by a click. The child's own answer is the task's
// result; its messages are not the conversation's.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';

const model = {
	provider: 'script',
	turns: [
		{ content: [{ type: 'toolCall', id: 'c1', name: 'task', arguments: { description: 'Write the note', prompt: 'write note.txt', agent: 'general' } }] },
		{ content: [{ type: 'text', text: 'The child wrote the note.' }] },
	],
	subagents: {
		'Write the note': {
			provider: 'script',
			turns: [
				{ content: [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'notes.md' } }] },
				{ content: [{ type: 'toolCall', id: 'c2', name: 'write', arguments: { path: 'note.txt', content: 'from the child\n' } }] },
				{ content: [{ type: 'text', text: 'CHILD-ANSWER: note.txt written' }] },
			],
		},
	},
};

const TASK = '.item.tool[data-tool-call-id="c1"]';

test('VS Code subagents: the child on its task card, its steps folded under it, its approval answered there naming the task', { timeout: 120000 }, async () => {
	await withVSCode({ name: 'vscode-subagents', model, files: { 'notes.md': 'notes\n' } }, async (vs) => {
		await vs.openChat();
		const f = await vs.chatFrame();
		await vs.sendInChat('delegate the note');

		// The child's write asks: its step, under the task card, unfolded, says which task asks.
		await vs.waitForChat((c) => c.status === 'approval' && c, { what: "the child's write to ask" });
		const view = () => f.evaluate((sel) => {
			const card = document.querySelector(sel);
			const sub = card?.querySelector(':scope > details.subagent');
			return {
				topLevel: [...document.querySelectorAll('#log > .item.tool')].map((n) => n.querySelector('.tool-name').textContent),
				title: card?.querySelector('.tool-title')?.textContent,
				summary: sub?.querySelector('summary')?.textContent,
				open: sub?.open,
				steps: [...(sub?.querySelectorAll('.children > .item.tool') ?? [])].map((n) => ({ name: n.querySelector('.tool-name').textContent, title: n.querySelector('.tool-title').textContent, status: (n.className.match(/status-(\w+)/) ?? [])[1] })),
				asked: sub?.querySelector('.children .approval .asked-by')?.textContent,
				keyed: Boolean(sub?.querySelector('.children .approval.keyed')),
			};
		}, TASK);
		let v = await view();
		assert.deepEqual(v.topLevel, ['task'], "the child's calls are not the conversation's cards");
		assert.equal(v.title, 'Write the note (general)');
		assert.equal(v.open, true, 'unfolded for its question');
		assert.deepEqual(v.steps, [{ name: 'read', title: 'notes.md', status: 'done' }, { name: 'write', title: 'note.txt', status: 'waiting' }]);
		assert.equal(v.asked, 'Asked by the subagent of the task "Write the note" (general):');
		assert.equal(v.keyed, true, 'the approval keys answer it');
		assert.match(v.summary, /^general subagent: Write the note · 2 steps · running$/);
		await f.evaluate((sel) => document.querySelector(sel).scrollIntoView({ block: 'start' }), TASK);
		await vs.screenshot('vscode-subagents-asks');

		await vs.clickInChat(`${TASK} details.subagent .children .approval button`, 'Allow');
		const chat = await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('The child wrote the note.') && c, { what: 'the run to end' });
		v = await view();
		assert.match(v.summary, /^general subagent: Write the note · 2 steps · done$/);
		assert.deepEqual(v.steps.map((s) => s.status), ['done', 'done']);
		const task = chat.items.find((i) => i.toolCallId === 'c1');
		assert.equal(task.status, 'done');
		assert.match(task.output, /CHILD-ANSWER: note\.txt written/, "the task's result is the child's answer");
		assert.deepEqual(chat.items.filter((i) => i.kind === 'assistant').map((i) => i.text.trim()), ['The child wrote the note.'], "the child's messages are not the conversation's");
		assert.equal(fs.readFileSync(path.join(vs.dirs.workspace, 'note.txt'), 'utf8'), 'from the child\n');
		// The child's change is the run's: listed with Open diff and Undo.
		assert.deepEqual(chat.items.filter((i) => i.kind === 'changes').map((i) => i.files.map((x) => x.name)), [['note.txt']]);
		// Folded again by the person: the card alone, with its count.
		await f.evaluate((sel) => {
			document.querySelector(`${sel} details.subagent`).open = false;
			document.querySelector(sel).scrollIntoView({ block: 'start' });
		}, TASK);
		await vs.screenshot('vscode-subagents-done');
	});
});
