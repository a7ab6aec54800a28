// Smoke test of the Neovim harness: a real Neovim in tmux runs `:PidAsk hello` with pid's
// plugin from editor/nvim, against bin/pid with a scripted model; the chat shows the run.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { panes, withNvim } from './lib/nvim.js';
import { pidBin } from './lib/util.js';

const answer = 'Hello from the scripted model: the Neovim harness works.';

test('Neovim: :PidAsk hello shows the scripted answer in the chat', { timeout: 60000 }, async () => {
	let nvRef;
	let seenPid = false;
	await withNvim(
		{ name: 'nvim-ask', session: { model: { provider: 'script', turns: [{ content: [{ type: 'text', text: answer }] }] } } },
		async (nv) => {
			nvRef = nv;
			const before = await nv.capture();
			assert.doesNotMatch(before, /pid:\/\/chat/, 'no chat before the first prompt');
			await nv.sendKeys(':PidAsk hello', 'Enter');
			const screen = await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the run to end with [done] stop' });
			const rows = panes(screen).right;
			const start = rows.indexOf('>>> hello');
			assert.ok(start >= 0, `the chat shows the prompt:\n${screen}`);
			assert.deepEqual(rows.slice(start, start + 3), ['>>> hello', answer, '[done] stop'], 'prompt, answer, end, in that order');
			assert.ok(screen.split('\n').some((r) => /\spid:\/\/chat\s/.test(r)), 'the chat\'s window is named pid://chat in its status line');
			seenPid = nv.processes().some((p) => p.cmd === pidBin());
			await nv.saveScreen('nvim-ask', screen);
		},
	);
	assert.ok(seenPid, 'pid ran as a process under Neovim while the prompt ran');
	assert.ok(nvRef.report.all.some((p) => p.cmd === pidBin()), 'the teardown knew the pid process');
	assert.deepEqual(nvRef.report.afterGentle, [], 'Neovim and pid exited when tmux hung up on them (pid exits with Neovim)');
	assert.deepEqual(nvRef.report.leftover, [], 'no process survived the teardown');
});
