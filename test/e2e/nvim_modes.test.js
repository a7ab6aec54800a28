// Modes in a real Neovim (tmux), checked on the screen as a person sees it:
// - a session that starts in plan mode: the chat window's status line says "mode: Plan";
// - the model calls exit_plan_mode with a plan longer than the float: the float shows the
//   choices above the plan, as markdown; keys typed in another buffer (insert mode) answer
//   nothing; in the float (after :PidApproval) G reaches the plan's last line (not cut short),
//   `p` asks why on the command line (Escape there answers nothing) and sends the plan back
//   with that reason;
// - the second plan approved with `e`: the status line says "mode: Accept edits", and the write
//   after it runs without asking;
// - :PidMode's picker (Neovim's own vim.ui.select: a numbered list with the descriptions), then
//   :PidMode with a completed id, Shift-Tab in the prompt window; pid killed: the mode stays, said to be of a stopped pid, and
//   :PidResume brings it back from the saved session.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { panes, withNvim } from './lib/nvim.js';
import { pidBin } from './lib/util.js';

const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

/** statusRow returns the screen's row that holds the chat window's status line. */
function statusRow(screen) {
	return screen.split('\n').find((r) => r.includes('pid://chat') && r.includes('mode: ')) ?? '';
}

test('Neovim: plan mode, the plan in the float, keep planning with a reason, approve into acceptEdits; :PidMode; the mode after a kill', { timeout: 60000 }, async () => {
	const steps = [];
	for (let i = 1; i <= 45; i++) {
		steps.push(`${i}. Step ${i}: look at part ${i} of the code.`);
	}
	const longPlan = `# Plan\n\n${steps.join('\n')}\n\nThe end of the plan.`;
	const model = {
		provider: 'script',
		turns: [
			{ content: [text('Here is my plan.'), call('p1', 'exit_plan_mode', { plan: longPlan })] },
			{ content: [text('A shorter plan.'), call('p2', 'exit_plan_mode', { plan: '## Plan\n\n1. Write **a.txt** with `a`.\n2. Done.' })] },
			{ content: [call('w1', 'write', { path: 'a.txt', content: 'a\n' })] },
			{ content: [text('Planned and done.')] },
			{ content: [text('Still here after the restart.')] },
		],
	};
	await withNvim({ name: 'nvim-modes', session: { mode: 'plan', model } }, async (nv) => {
		await nv.sendKeys(':PidAsk plan it, then do it', 'Enter');
		let screen = await nv.waitFor('pid has a plan and asks to leave plan mode', { what: 'the plan float' });
		screen = await nv.waitFor((s) => s.includes('1. Step 1: look at part 1') && statusRow(s).includes('mode: Plan'), { what: 'the plan and the mode' });
		await nv.saveScreen('nvim-modes-plan', screen);
		for (const want of ['`a` approve; edits ask first (default mode)', '`e` approve; accept edits', '`A` approve; auto', '`p` keep planning (you may say why)', '`q` dismiss (keep planning)', ':PidApproval goes here to answer']) {
			assert.ok(screen.includes(want), `the float shows ${JSON.stringify(want)}:\n${screen}`);
		}
		assert.ok(!screen.includes('The end of the plan.'), `the plan is longer than the float:\n${screen}`);
		assert.ok(panes(screen).right.some((r) => /^\[tool\] exit_plan_mode \(a plan of 49 lines\)\s+waiting/.test(r)), `the card waits:\n${screen}`);

		// Keys of the float typed for something else: a new buffer, insert mode.
		await nv.sendKeys(':new', 'Enter');
		await nv.sendKeys('i', 'p e a A q', 'Enter', 'done typing', 'Escape');
		screen = await nv.waitFor((s) => s.includes('done typing'), { what: 'the typed lines in the new buffer' });
		assert.ok(screen.includes('pid has a plan and asks to leave plan mode'), `the float is still up after the stray keys:\n${screen}`);
		assert.ok(statusRow(screen).includes('mode: Plan'), `still in plan mode:\n${screen}`);

		// Into the float: G shows the plan's end; p asks why.
		await nv.sendKeys(':PidApproval', 'Enter', 'G');
		screen = await nv.waitFor('The end of the plan.', { what: "the plan's last line" });
		await nv.saveScreen('nvim-modes-plan-end', screen);
		// p, then Escape on the reason's prompt: nothing is answered, the float stays.
		await nv.sendKeys('p');
		await nv.waitFor('Keep planning; tell the model why', { what: 'the reason prompt' });
		await nv.sendKeys('Escape');
		screen = await nv.waitFor((s) => !s.includes('Keep planning; tell the model why'), { what: 'the prompt to go' });
		assert.ok(screen.includes('pid has a plan and asks to leave plan mode') || screen.includes('The end of the plan.'), `the float is still up after Escape:\n${screen}`);
		assert.ok(panes(screen).right.some((r) => /^\[tool\] exit_plan_mode \(a plan of 49 lines\)\s+waiting/.test(r)), `the plan still waits:\n${screen}`);
		await nv.sendKeys('p');
		await nv.waitFor('Keep planning; tell the model why', { what: 'the reason prompt' });
		await nv.sendKeys('Say what a.txt holds.', 'Enter');

		// The second plan: approve, accept edits.
		screen = await nv.waitFor((s) => s.includes('1. Write **a.txt** with `a`.'), { what: 'the second plan' });
		await nv.saveScreen('nvim-modes-plan2', screen);
		assert.ok(panes(screen).right.includes('[plan] exit_plan_mode (p1): keep planning: Say what a.txt holds.'), `the chat says the plan went back, with why:\n${screen}`);
		await nv.sendKeys(':PidApproval', 'Enter', 'e');
		screen = await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the run to end' });
		await nv.saveScreen('nvim-modes-accept-edits', screen);
		assert.ok(statusRow(screen).includes('mode: Accept edits'), `the status line says the new mode:\n${screen}`);
		const chat = panes(screen).right;
		assert.ok(chat.includes('[plan] exit_plan_mode (p2): approved, then Accept edits'), `the chat says the plan was approved:\n${screen}`);
		assert.ok(chat.some((r) => r.startsWith('[mode] Accept edits (acceptEdits): Writes and edits inside the workspace run')), `the mode change in the chat:\n${screen}`);
		assert.ok(chat.some((r) => /^\[tool\] write a\.txt\s+ok/.test(r)), `the write ran:\n${screen}`);
		assert.ok(!screen.includes('pid wants to run'), `the write did not ask:\n${screen}`);
		assert.equal(fs.readFileSync(path.join(nv.dirs.workspace, 'a.txt'), 'utf8'), 'a\n');
		assert.ok(panes(screen).left.includes('p e a A q'), 'the stray keys stayed text in the other buffer');

		// :PidMode: Neovim's vim.ui.select lists the modes with their descriptions; 3 is plan.
		await nv.sendKeys(':PidMode', 'Enter');
		screen = await nv.waitFor((s) => s.includes('Mode (now: Accept edits)') && s.includes('Type number and <Enter>'), { what: 'the mode picker' });
		await nv.saveScreen('nvim-modes-picker', screen);
		for (const want of ['1: Default (default): Changing files and running commands ask first', '2: Accept edits (acceptEdits), the current mode: Writes and edits', '3: Plan (plan): Nothing changes files', '4: Auto (auto): Edits inside the workspace and sandboxed commands']) {
			assert.ok(screen.includes(want), `the picker shows ${JSON.stringify(want)}:\n${screen}`);
		}
		await nv.sendKeys('3', 'Enter');
		screen = await nv.waitFor((s) => statusRow(s).includes('mode: Plan'), { what: 'plan mode' });
		// :PidMode au<Tab>: completed to auto.
		await nv.sendKeys(':PidMode au', 'Tab');
		await nv.waitFor(':PidMode auto', { what: 'the completed id' });
		await nv.sendKeys('Enter');
		screen = await nv.waitFor((s) => statusRow(s).includes('mode: Auto'), { what: 'auto mode' });
		assert.ok(panes(screen).right.some((r) => r.startsWith('[mode] Auto (auto): ')), `the chat says it:\n${screen}`);
		// Shift-Tab in the prompt window: the next modes (auto -> default -> acceptEdits).
		await nv.sendKeys(':PidChat', 'Enter');
		await nv.waitFor((s) => s.includes('pid>') && s.includes('-- INSERT --'), { what: 'the prompt window, in insert mode' });
		await nv.sendKeys('BTab');
		await nv.waitFor((s) => statusRow(s).includes('mode: Default'), { what: 'default mode after Shift-Tab' });
		await nv.sendKeys('BTab');
		screen = await nv.waitFor((s) => statusRow(s).includes('mode: Accept edits'), { what: 'acceptEdits after a second Shift-Tab' });
		await nv.saveScreen('nvim-modes-shift-tab', screen);
		await nv.sendKeys('Escape');

		// pid killed: the mode stays (of a stopped pid); :PidResume brings it back from the saved session.
		const first = nv.processes().find((p) => p.cmd === pidBin());
		assert.ok(first, 'pid runs');
		process.kill(first.pid, 'SIGKILL');
		screen = await nv.waitFor((s) => statusRow(s).includes('mode: Accept edits (pid stopped)'), { what: 'the mode of a stopped pid' });
		await nv.sendKeys(':PidResume', 'Enter');
		screen = await nv.waitFor((s) => panes(s).right.some((r) => r.startsWith('[session] end of the saved transcript')) && statusRow(s).includes('mode: Accept edits') && !statusRow(s).includes('stopped'), { what: 'the resumed session in acceptEdits' });
		await nv.saveScreen('nvim-modes-resumed', screen);
	});
});
