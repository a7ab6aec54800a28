// Working in the open (issue 24) in a real VS Code (code-server in headless Chromium), as a
// person sees it: the model's plan as a checklist card in the chat, the context meter (used of
// the window, and the cost: the model has a price), `/` in the prompt box completing the
// session's commands (Enter sends one that takes nothing, Tab fills in one that takes text),
// /plan's output shown in the chat, and /compact's card saying what the compaction kept.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { waitFor } from './lib/util.js';

const todos = [
	{ content: 'Read the notes', status: 'completed', priority: 'high' },
	{ content: 'Fix the typo', status: 'in_progress' },
	{ content: 'Run the tests', status: 'pending', priority: 'low' },
];

const model = {
	provider: 'script',
	contextWindow: 10000,
	price: { input: 3, output: 15 },
	compaction: { keepRecentTokens: 1 },
	turns: [
		{ content: [{ type: 'toolCall', id: 't1', name: 'todo_write', arguments: { todos } }], usage: { input: 1000, output: 200 } },
		{ content: [{ type: 'text', text: 'Working on it.' }], usage: { input: 1500, output: 100 } },
	],
	summaries: [{ content: [{ type: 'text', text: 'SUMMARY-MARK of the work so far' }] }],
};

test('VS Code: the plan as a checklist, the context meter with the cost, / completion of commands, /plan\'s output, what /compact kept', { timeout: 120000 }, async () => {
	await withVSCode({ name: 'vscode-plan', model, files: { 'notes.md': 'teh notes\n' } }, async (vs) => {
		await vs.openChat();
		const f = await vs.chatFrame();
		await vs.sendInChat('fix the typo in notes.md');
		await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('Working on it.') && c, { what: 'the first run to end' });

		// The plan: one checklist card after its todo_write, each step with its state.
		const plan = await f.evaluate(() => {
			const p = document.querySelector('#log > .item.plan');
			return p && {
				title: p.querySelector('.plan-title')?.textContent,
				entries: [...p.querySelectorAll('.plan-entry')].map((e) => ({ cls: e.className, text: e.innerText.replace(/\s+/g, ' ').trim() })),
				afterTool: p.previousElementSibling?.dataset.toolCallId === 't1' || [...document.querySelectorAll('#log > .item')].indexOf(p) > [...document.querySelectorAll('#log > .item')].findIndex((n) => n.dataset.toolCallId === 't1'),
			};
		});
		assert.ok(plan, 'a plan card');
		assert.equal(plan.title, 'Plan · 1/3 done');
		assert.deepEqual(plan.entries, [
			{ cls: 'plan-entry status-completed', text: '☑ Read the notes high' },
			{ cls: 'plan-entry status-in_progress', text: '◐ Fix the typo' },
			{ cls: 'plan-entry status-pending', text: '☐ Run the tests low' },
		]);
		assert.ok(plan.afterTool, 'after the todo_write card');

		// The meter: the last call's usage of the 10k window, and what both calls cost.
		const meter = () => f.evaluate(() => {
			const m = document.getElementById('meter');
			return { hidden: m.hidden, text: m.querySelector('.meter-text')?.textContent, width: m.querySelector('.meter-fill')?.style.width };
		});
		assert.deepEqual(await meter(), { hidden: false, text: '1.6k / 10k tokens (16%) · $0.01', width: '16%' });
		await vs.screenshot('vscode-plan-checklist');

		// `/` completion: /pl offers /plan; Enter sends it (it takes nothing).
		await vs.clickInChat('#prompt');
		await vs.page.keyboard.type('/pl');
		const rows = await waitFor(async () => {
			const r = await f.evaluate(() => (document.getElementById('completions').hidden ? null : [...document.querySelectorAll('#completions .completion')].map((n) => n.innerText.replace(/\s+/g, ' ').trim())));
			return r && r.length > 0 && r;
		}, { what: 'the completion of /pl' });
		assert.equal(rows.length, 1, JSON.stringify(rows));
		assert.match(rows[0], /^\/plan\s*Show/, 'the name and what it does');
		await vs.screenshot('vscode-plan-completion');
		await vs.page.keyboard.press('Enter');
		let chat = await vs.waitForChat((c) => c.status === 'idle' && c.items.some((i) => i.kind === 'command') && c, { what: "/plan's output" });
		const out = chat.items.filter((i) => i.kind === 'command').pop();
		assert.match(out.text, /^\/plan\n/);
		assert.match(out.text, /Fix the typo/);
		assert.ok(chat.items.some((i) => i.kind === 'user' && i.text.trim() === '/plan'), 'the command typed is shown as the message');

		// Every listed command: / alone lists the built-in ones first.
		await vs.page.keyboard.type('/');
		const all = await waitFor(async () => {
			const r = await f.evaluate(() => [...document.querySelectorAll('#completions .completion')].map((n) => n.dataset.name));
			return r.length >= 9 && r;
		}, { what: 'the whole list after /' });
		for (const n of ['compact', 'init', 'review', 'plan', 'mode', 'model', 'mcp', 'rewind', 'help']) {
			assert.ok(all.includes(n), `${n} in ${all.join(', ')}`);
		}
		// Tab fills in /compact (it takes a focus), Enter then sends it.
		await vs.page.keyboard.type('comp');
		await waitFor(() => f.evaluate(() => document.querySelector('#completions .completion.selected')?.dataset.name === 'compact'), { what: '/compact selected' });
		await vs.page.keyboard.press('Tab');
		assert.equal(await f.evaluate(() => document.getElementById('prompt').value), '/compact ');
		await vs.page.keyboard.press('Enter');
		chat = await vs.waitForChat((c) => c.status === 'idle' && c.items.some((i) => i.kind === 'compaction' && /compacted/.test(i.text)) && c, { what: 'the compaction to end' });
		const comp = chat.items.find((i) => i.kind === 'compaction');
		assert.match(comp.text, /The conversation was compacted \(as asked\)/);
		assert.match(comp.text, /Kept with the summary: .*the plan \(3 steps\)/);
		const summary = await f.evaluate(() => {
			const d = document.querySelector('#log > .item.compaction details');
			d.open = true;
			return d.querySelector('pre').textContent;
		});
		assert.match(summary, /SUMMARY-MARK/);
		assert.match(summary, /Fix the typo/, 'the plan is in what the model now sees');
		const after = await meter();
		assert.notEqual(after.text, '1.6k / 10k tokens (16%) · $0.01', 'the meter follows the compaction');
		await f.evaluate(() => document.querySelector('#log > .item.compaction').scrollIntoView({ block: 'start' }));
		await vs.screenshot('vscode-plan-compacted');
	});
});
