// Session modes in a real VS Code (code-server in headless Chromium), driven as a person
// would: the chat's mode button shows the mode; Shift+Tab in the prompt box goes to the next
// one (the focus stays in the box); the session starts in the mode picked; the model in plan
// mode calls exit_plan_mode (a scripted model), and the chat shows the plan whole, rendered as
// markdown, with its choices: Keep planning (with what to change, which the model reads),
// then Approve, Accept edits, after which the button says Accept edits and the model's write
// runs without asking; "pid: Set Mode" picks another mode.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { waitFor } from './lib/util.js';

/** A plan longer than the 400 characters pid's fallback question keeps, ending in a line to look for. */
const PLAN = `# Tidy the notes\n\n${Array.from({ length: 12 }, (_, i) => `${i + 1}. Rewrite section ${i + 1} of \`notes.md\` so that it says what it means.`).join('\n')}\n\nThen **stop** and report.`;

const model = {
	provider: 'script',
	turns: [
		{ content: [{ type: 'toolCall', id: 'p1', name: 'exit_plan_mode', arguments: { plan: '1. Tidy the notes.' } }] },
		{ content: [{ type: 'toolCall', id: 'p2', name: 'exit_plan_mode', arguments: { plan: PLAN } }] },
		{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'tidy.md', content: 'tidy\n' } }] },
		{ content: [{ type: 'text', text: 'Done as planned.' }] },
	],
};

const card = (chat, id) => chat.items.find((i) => i.kind === 'tool' && i.toolCallId === id);

test('VS Code modes: the mode button, Shift+Tab in the prompt box, a plan shown whole with its choices, approved into Accept edits; pid: Set Mode', { timeout: 120000 }, async () => {
	await withVSCode({ name: 'vscode-modes', model, files: { 'notes.md': 'old notes\n' } }, async (vs) => {
		await vs.openChat();
		const f = await vs.chatFrame();
		const modeButton = () => f.evaluate(() => {
			const b = document.getElementById('mode');
			return { text: b.textContent, hidden: b.hidden, title: b.title, mode: document.body.dataset.mode, focus: document.activeElement?.id };
		});
		let m = await modeButton();
		assert.equal(m.hidden, false);
		assert.equal(m.text, 'Default mode ▾');

		// Shift+Tab twice in the prompt box: Accept edits, then Plan; the cursor stays in the box.
		await vs.clickInChat('#prompt');
		await vs.page.keyboard.down('Shift');
		await vs.page.keyboard.press('Tab');
		await vs.page.keyboard.up('Shift');
		await waitFor(async () => (await modeButton()).text === 'Accept edits mode ▾', { what: 'Shift+Tab to switch to Accept edits' });
		await vs.page.keyboard.down('Shift');
		await vs.page.keyboard.press('Tab');
		await vs.page.keyboard.up('Shift');
		m = await waitFor(async () => { const b = await modeButton(); return b.text === 'Plan mode ▾' && b; }, { what: 'Shift+Tab to switch to Plan' });
		assert.equal(m.focus, 'prompt', 'the focus stays in the prompt box');
		assert.match(m.title, /Nothing changes files/);
		assert.match(await f.evaluate(() => document.getElementById('prompt').placeholder), /^Plan mode:/);
		await vs.screenshot('vscode-modes-plan');

		// The session starts in plan mode: the model proposes a plan; keep planning, with what to change.
		await vs.sendInChat('tidy my notes');
		let chat = await vs.waitForChat((c) => card(c, 'p1')?.approval?.state === 'pending' && c, { what: 'the first plan with its choices' });
		assert.deepEqual(card(chat, 'p1').approval.buttons, ['Approve', 'Approve, Accept edits', 'Approve, Auto', 'Keep planning']);
		await vs.clickInChat(`.item.tool[data-tool-call-id="p1"] input.reason`);
		await vs.page.keyboard.type('Say what each section becomes.');
		await vs.clickInChat(`.item.tool[data-tool-call-id="p1"] .approval button`, 'Keep planning');

		// The second plan: whole (past 400 characters), rendered as markdown.
		chat = await vs.waitForChat((c) => card(c, 'p2')?.approval?.state === 'pending' && c, { what: 'the second plan' });
		const p1 = card(chat, 'p1');
		assert.equal(p1.status, 'denied');
		assert.match(p1.approval.text, /Kept planning: Say what each section becomes\./);
		assert.match(p1.output ?? '', /did not approve the plan: Say what each section becomes\. Keep planning/, 'the model read the reason');
		const plan = await f.evaluate(() => {
			const p = document.querySelector('.item.tool[data-tool-call-id="p2"] .plan');
			return { h1: p?.querySelector('h1')?.textContent, items: p?.querySelectorAll('ol > li').length, code: p?.querySelectorAll('code').length, text: p?.innerText ?? '' };
		});
		assert.ok(PLAN.length > 400, 'the plan is longer than the fallback question keeps');
		assert.equal(plan.h1, 'Tidy the notes');
		assert.equal(plan.items, 12, 'every step is there');
		assert.equal(plan.code, 12, 'code spans are rendered');
		assert.match(plan.text, /Then stop and report\.$/, 'to its last line');
		assert.equal((await modeButton()).text, 'Plan mode ▾', 'still planning');
		// What a person sees: the plan's top, then its end with the choices.
		await f.evaluate(() => document.querySelector('.item.tool[data-tool-call-id="p2"]').scrollIntoView({ block: 'start' }));
		await vs.screenshot('vscode-modes-plan-top');
		await f.evaluate(() => document.querySelector('.item.tool[data-tool-call-id="p2"] .approval').scrollIntoView({ block: 'end' }));
		await vs.screenshot('vscode-modes-plan-choices');

		// Approve, Accept edits: the button says so, and the write runs without a question.
		await vs.clickInChat(`.item.tool[data-tool-call-id="p2"] .approval button`, 'Approve, Accept edits');
		chat = await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('Done as planned.') && c, { what: 'the run to end' });
		assert.match(card(chat, 'p2').approval.text, /Approved: pid carries the plan out in Accept edits mode\./);
		const w1 = card(chat, 'w1');
		assert.equal(w1.status, 'done');
		assert.equal(w1.approval, undefined, 'the write was not asked about');
		assert.equal((await modeButton()).text, 'Accept edits mode ▾');
		assert.equal(fs.readFileSync(path.join(vs.dirs.workspace, 'tidy.md'), 'utf8'), 'tidy\n');
		await vs.screenshot('vscode-modes-approved');

		// pid: Set Mode: the picker lists the modes with what they let run, the current one marked.
		await vs.runCommand('pid: Set Mode');
		const q = await waitFor(async () => { const q = await vs.quickInput(); return q?.title?.includes('pid: Set Mode') && q.rows.length >= 4 && q; }, { what: 'the mode picker' });
		assert.ok(q.rows.some((r) => /Accept edits/.test(r) && /current/.test(r)), JSON.stringify(q.rows));
		await vs.typeInQuickInput('Auto', { title: 'pid: Set Mode' });
		await waitFor(async () => (await modeButton()).text === 'Auto mode ▾', { what: 'the picker to switch to Auto' });
	});
});
