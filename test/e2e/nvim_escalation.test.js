// Leaving the sandbox, said out loud, in a real Neovim (tmux), as a person sees it (issue 31):
// in auto mode a sandboxed bash call fails on a write next to the workspace; the model asks to
// run it outside the sandbox with a justification; the float is a question of its own (the
// warning title, what running outside means, the justification quoted, what the sandbox refused
// before, the command, "always" only for exactly this command), answered with `a` after
// :PidApproval; the command runs on the host, and its card says "ran outside the sandbox".

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { panes, withNvim } from './lib/nvim.js';

const text = (t) => ({ type: 'text', text: t });
const call = (id, args) => ({ type: 'toolCall', id, name: 'bash', arguments: args });

test('Neovim: the question to run outside the sandbox (title, meaning, justification, refusal, command, exact always), answered; the card marked', { timeout: 60000 }, async () => {
	const command = 'touch ../outside.txt';
	const model = {
		provider: 'script',
		turns: [
			{ content: [call('s1', { command })] },
			{ content: [call('e1', { command, unsandboxed: true, justification: 'The file belongs next to the workspace.' })] },
			{ content: [text('Done outside.')] },
		],
	};
	await withNvim({ name: 'nvim-escalation', session: { mode: 'auto', toolExecution: 'sequential', model } }, async (nv) => {
		const outside = path.join(nv.dirs.tmp, 'outside.txt');
		await nv.sendKeys(':PidAsk write next to the workspace', 'Enter');
		let screen = await nv.waitFor((s) => s.includes('Run outside the sandbox?') && s.includes('[d] deny'), { what: 'the escalation float' });
		await nv.saveScreen('nvim-escalation-question', screen);
		for (const want of [
			'pid asks to run this command WITHOUT its sandbox',
			"Why, in the model's words:",
			'> The file belongs next to the workspace.',
			`What the sandbox refused before ($ ${command}):`,
			`$ ${command}`,
			'[a] allow once   [A] always: this command, this session   [d] deny',
		]) {
			assert.ok(screen.includes(want), `the float shows ${JSON.stringify(want)}:\n${screen}`);
		}
		assert.ok(!screen.includes('pid wants to run'), `not the ordinary question:\n${screen}`);
		assert.ok(!fs.existsSync(outside), 'nothing ran outside before the answer');

		await nv.sendKeys(':PidApproval', 'Enter', 'a');
		screen = await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the run to end' });
		await nv.saveScreen('nvim-escalation-done', screen);
		const chat = panes(screen).right;
		assert.ok(chat.some((r) => r.startsWith(`[tool] bash $ ${command}`) && r.includes('error')), `the sandboxed call failed:\n${screen}`);
		assert.ok(chat.some((r) => r.startsWith(`[tool] bash $ ${command}`) && r.includes('ok · ran outside the sandbox')), `the card says it ran outside:\n${screen}`);
		assert.ok(chat.includes('[approval] bash (e1): allow (once, outside the sandbox)'), `the answer is said:\n${screen}`);
		assert.ok(!screen.includes('Run outside the sandbox?'), `the float closed:\n${screen}`);
		assert.ok(fs.existsSync(outside), 'the command ran on the host, outside the workspace');
	});
});
