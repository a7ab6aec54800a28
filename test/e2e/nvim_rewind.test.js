// :PidRewind in a real Neovim (tmux), checked on the screen as a person sees it: two prompts
// change greet.py (open in a buffer) and add util.py; :PidRewind lists them newest first
// (Neovim's own vim.ui.select: a numbered list with the prompt's text, when, how many files);
// the float shows the diff from before the first prompt to now, with the cursor in it, so `b`
// typed next answers it; both are rewound: util.py is removed, greet.py and its buffer are back
// (no W11 question), the chat shows the conversation without the two prompts and says what was
// restored and removed, and the next prompt goes on from there.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { panes, withNvim } from './lib/nvim.js';

const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

test('Neovim: :PidRewind lists the prompts, shows the diff, rewinds files and conversation; the buffer follows', { timeout: 60000 }, async () => {
	const original = "def greet(name):\n    return 'Hello, ' + name\n";
	const model = {
		provider: 'script',
		turns: [
			{ content: [call('r1', 'read', { path: 'greet.py' }), call('e1', 'edit', { path: 'greet.py', edits: [{ oldText: "'Hello, '", newText: "'Hi, '" }] }), call('w1', 'write', { path: 'util.py', content: 'X = 1\n' })] },
			{ content: [text('Greeting changed and util.py added.')] },
			{ content: [call('r2', 'read', { path: 'greet.py' }), call('e2', 'edit', { path: 'greet.py', edits: [{ oldText: "'Hi, '", newText: "'Hey, '" }] })] },
			{ content: [text('Changed again.')] },
			{ content: [text('Starting over, before the first change.')] },
		],
	};
	const session = { model, permissions: { default: 'allow' }, toolExecution: 'sequential' };
	await withNvim({ name: 'nvim-rewind', session, files: { 'greet.py': original }, file: 'greet.py' }, async (nv) => {
		const disk = (rel) => path.join(nv.dirs.workspace, rel);
		await nv.sendKeys(':PidAsk change the greeting', 'Enter');
		await nv.waitFor((s) => panes(s).right.includes('Greeting changed and util.py added.') && panes(s).right.includes('[done] stop'), { what: 'the first run' });
		await nv.sendKeys(':PidAsk change it again', 'Enter');
		let screen = await nv.waitFor((s) => panes(s).right.includes('Changed again.') && panes(s).left.some((r) => r.includes("return 'Hey, ' + name")), { what: 'the second run and the buffer' });
		assert.equal(fs.readFileSync(disk('greet.py'), 'utf8'), "def greet(name):\n    return 'Hey, ' + name\n");
		assert.ok(fs.existsSync(disk('util.py')), 'util.py was added');

		// The picker: Neovim's numbered list, newest first.
		await nv.sendKeys(':PidRewind', 'Enter');
		screen = await nv.waitFor((s) => s.includes('Rewind to before which prompt? (newest first)') && s.includes('Type number and <Enter>'), { what: 'the checkpoints' });
		await nv.saveScreen('nvim-rewind-picker', screen);
		assert.ok(screen.includes('1: "change it again" | just now | 1 file'), `the newest first:\n${screen}`);
		assert.ok(screen.includes('2: "change the greeting" | just now | 2 files'), `then the first prompt:\n${screen}`);
		await nv.sendKeys('2', 'Enter');

		// The float: what changed since, the diff, the keys; the cursor is in it.
		screen = await nv.waitFor((s) => s.includes('Rewind to before this prompt') && s.includes('[b] both'), { what: 'the diff float' });
		screen = await nv.waitFor((s) => s.includes("+    return 'Hey, ' + name"), { what: 'the diff' });
		await nv.saveScreen('nvim-rewind-diff', screen);
		for (const want of ['  change the greeting', 'Since then (2 files):', 'modified  greet.py', 'added     util.py', '[f] restore the files   [c] rewind the conversation   [b] both   [q] cancel', "-    return 'Hello, ' + name", '+X = 1']) {
			assert.ok(screen.includes(want), `the float shows ${JSON.stringify(want)}:\n${screen}`);
		}
		await nv.sendKeys('b');

		screen = await nv.waitFor((s) => panes(s).right.some((r) => r.startsWith('[rewind] undo: :PidRewind')) && panes(s).left.some((r) => r.includes("return 'Hello, ' + name")), { what: 'the rewind, its report and the buffer' });
		await nv.saveScreen('nvim-rewind-done', screen);
		const chat = panes(screen).right;
		for (const want of ['[rewind] the files and the conversation, back to before "change the greeting"', '[rewind] 1 restored, 1 removed, 0 skipped', '[rewind] restored greet.py', '[rewind] removed util.py', '[rewind] the conversation goes on from before that prompt']) {
			assert.ok(chat.includes(want), `the chat says ${JSON.stringify(want)}:\n${screen}`);
		}
		assert.ok(!chat.includes('>>> change the greeting') && !chat.includes('>>> change it again'), `the rewound prompts are gone from the chat:\n${screen}`);
		assert.ok(chat.some((r) => /^\[session\] rewound: \S+ \(0 messages\)$/.test(r)), `the chat shows the session as pid now has it:\n${screen}`);
		assert.ok(!screen.includes('Rewind to before this prompt'), `the float closed:\n${screen}`);
		assert.ok(!/W11|W12|changed since editing started|has changed since/.test(screen), `no W11/W12 question:\n${screen}`);
		assert.equal(fs.readFileSync(disk('greet.py'), 'utf8'), original, 'greet.py is back');
		assert.ok(!fs.existsSync(disk('util.py')), 'util.py is removed');
		const status = screen.split('\n').find((r) => r.includes('greet.py') && /\d+,\d+/.test(r));
		assert.ok(status && !status.includes('greet.py [+]'), `greet.py has nothing unsaved: ${status}`);

		// The next prompt goes on from before the first one.
		await nv.sendKeys(':PidAsk start over', 'Enter');
		screen = await nv.waitFor((s) => panes(s).right.includes('Starting over, before the first change.'), { what: 'the next answer' });
		await nv.saveScreen('nvim-rewind-next', screen);
	});
});
