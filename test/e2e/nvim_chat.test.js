// The Neovim chat for real: Debian's Neovim in tmux with pid's plugin, against bin/pid with
// scripted models, driven by keys as a person types them and checked on the screen:
// - an edit of a buffer with unsaved changes: the agent reads the unsaved text, the answer
//   streams into the chat while the approval float waits (it shows the diff and does not take
//   the cursor), `x = 1<Enter>` typed in insert mode in another buffer does not answer it (the
//   edit does not run, the float stays), `a` in the float (after :PidApproval) does; the edit
//   lands in the buffer and on disk, with no W11 question;
// - :'<,'>PidAsk sends the selected lines with the question (no E481);
// - pid killed: the chat says the session was saved, :PidResume continues it;
// - pid killed while a tool runs: its card does not stay "running", and :PidResume shows the
//   conversation once (in place of what the chat showed of it), not a second time below.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { panes, withNvim } from './lib/nvim.js';
import { pidBin } from './lib/util.js';

const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

/** filesUnder returns the text of every file under dir (recursively), joined. */
function filesUnder(dir) {
	let out = '';
	if (!fs.existsSync(dir)) {
		return out;
	}
	for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, e.name);
		out += e.isDirectory() ? filesUnder(p) : `${fs.readFileSync(p, 'utf8')}\n`;
	}
	return out;
}

test('Neovim: an edit of a buffer with unsaved changes, approved in the float; stray keys do not answer', { timeout: 90000 }, async () => {
	const model = {
		provider: 'script',
		turns: [
			{ content: [text('I will read notes.txt first.'), call('r1', 'read', { path: 'notes.txt' })] },
			{ content: [text('Line 2 has an unsaved change; I will finish it.'), call('e1', 'edit', { path: 'notes.txt', edits: [{ oldText: 'two (unsaved)', newText: 'two (edited by pid)' }] })] },
			{ content: [text('Done: line 2 of notes.txt now reads "two (edited by pid)".')] },
		],
	};
	await withNvim({ name: 'nvim-chat-edit', session: { model }, files: { 'notes.txt': 'one\ntwo\nthree\n' }, file: 'notes.txt' }, async (nv) => {
		const disk = path.join(nv.dirs.workspace, 'notes.txt');
		// An unsaved change: line 2 becomes "two (unsaved)".
		await nv.sendKeys('j', 'A', ' (unsaved)', 'Escape');
		await nv.waitFor('two (unsaved)');
		await nv.sendKeys(':PidAsk finish line 2 of notes.txt', 'Enter');

		// The float: the diff against the buffer (the unsaved line), its keys; the chat beside it
		// already shows the streamed answer, and the run is not over.
		let screen = await nv.waitFor('pid wants to run edit notes.txt', { what: 'the approval float' });
		screen = await nv.waitFor((s) => s.includes('[a] allow') && panes(s).right.some((r) => r.startsWith('Line 2 has an unsaved change')), { what: 'the float and the streamed text' });
		await nv.saveScreen('nvim-chat-approval', screen);
		for (const want of ['-two (unsaved)', '+two (edited by pid)', '[a] allow   [A] always allow   [d] deny   [q] dismiss (deny)', 'A always allows edit calls on the path `notes.txt` in this workspace', ':PidApproval goes here to answer']) {
			assert.ok(screen.includes(want), `the float shows ${JSON.stringify(want)}:\n${screen}`);
		}
		const chat = panes(screen).right;
		assert.ok(chat.includes('>>> finish line 2 of notes.txt'), `the chat shows the prompt:\n${screen}`);
		assert.ok(chat.some((r) => /^\[tool\] read notes\.txt\s+ok/.test(r)), `the read card is done:\n${screen}`);
		assert.ok(chat.some((r) => /^\[tool\] edit notes\.txt\s+waiting · waiting for your answer: :PidApproval/.test(r)), `the edit card waits:\n${screen}`);
		assert.ok(!chat.some((r) => r.startsWith('[done]')), `the run is not over:\n${screen}`);

		// Keys typed for something else: a new buffer, insert mode, x = 1<Enter>y = 2.
		await nv.sendKeys(':new', 'Enter');
		await nv.sendKeys('i', 'x = 1', 'Enter', 'y = 2', 'Escape');
		screen = await nv.waitFor((s) => panes(s).left.includes('x = 1') && panes(s).left.includes('y = 2'), { what: 'the typed lines in the new buffer' });
		await nv.saveScreen('nvim-chat-stray-keys', screen);
		assert.ok(screen.includes('pid wants to run edit notes.txt'), `the float is still up after the stray keys:\n${screen}`);
		assert.ok(panes(screen).right.some((r) => /^\[tool\] edit notes\.txt\s+waiting/.test(r)), `the edit still waits:\n${screen}`);
		assert.equal(fs.readFileSync(disk, 'utf8'), 'one\ntwo\nthree\n', 'the edit did not run');

		// Now the person answers: into the float, `a`.
		await nv.sendKeys(':PidApproval', 'Enter');
		await nv.sendKeys('a');
		screen = await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the run to end' });
		await nv.saveScreen('nvim-chat-edited', screen);
		assert.ok(!screen.includes('pid wants to run'), `the float closed:\n${screen}`);
		assert.equal(fs.readFileSync(disk, 'utf8'), 'one\ntwo (edited by pid)\nthree\n', 'the edit (with the unsaved line it finished) is on disk');
		assert.ok(panes(screen).left.some((r) => r.startsWith('two (edited by pid)')), `the buffer shows the edit:\n${screen}`);
		assert.ok(!/W11|W12|changed since editing started|has changed since/.test(screen), `no W11/W12 question:\n${screen}`);
		const status = screen.split('\n').find((r) => r.includes('notes.txt') && /\d+,\d+/.test(r));
		assert.ok(status && !status.includes('notes.txt [+]'), `notes.txt has nothing unsaved: ${status}`);
		assert.ok(panes(screen).right.some((r) => r.startsWith('Done: line 2 of notes.txt now reads')), `the final answer:\n${screen}`);
		assert.ok(panes(screen).right.includes('[approval] edit (e1): allow'), `the chat records the answer:\n${screen}`);
		// The agent saw the unsaved line: the read's result, as saved in the session file.
		const saved = filesUnder(path.join(nv.dirs.pidXdg, 'state', 'pid', 'sessions')).split('\n');
		const readResult = saved.find((l) => l.includes('"toolResult"') && l.includes('"toolCallId":"r1"'));
		assert.ok(readResult && readResult.includes('two (unsaved)'), `the read returned the buffer's text: ${readResult}`);
		// The new buffer kept what was typed into it.
		assert.ok(panes(screen).left.includes('x = 1'), 'x = 1 is still in the other buffer');
	});
});

test("Neovim: :'<,'>PidAsk sends the selection with the question", { timeout: 60000 }, async () => {
	const model = { provider: 'script', turns: [{ content: [text('It returns the sum of a and b.')] }] };
	const files = { 'calc.py': 'import math\n\ndef add(a, b):\n    return a + b\n\nprint(add(1, 2))\n' };
	await withNvim({ name: 'nvim-chat-range', session: { model }, files, file: 'calc.py' }, async (nv) => {
		await nv.waitFor('def add(a, b):');
		await nv.sendKeys('3G', 'V', 'j', ':');
		await nv.waitFor(":'<,'>", { what: 'the range on the command line' });
		await nv.sendKeys('PidAsk what does this do?', 'Enter');
		const screen = await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the run to end' });
		await nv.saveScreen('nvim-chat-range', screen);
		assert.ok(!screen.includes('E481'), `no E481 (the command takes a range):\n${screen}`);
		const chat = panes(screen).right;
		const at = chat.indexOf('>>> what does this do?');
		assert.ok(at >= 0, `the chat shows the question:\n${screen}`);
		assert.deepEqual(chat.slice(at, at + 4), ['>>> what does this do?', '[context] calc.py lines 3-4', 'It returns the sum of a and b.', '[done] stop']);
		// What the model got is in the saved session: the question, then the two lines.
		const saved = filesUnder(path.join(nv.dirs.pidXdg, 'state', 'pid', 'sessions')); // not checkpoints/: its blobs hold the whole workspace
		assert.ok(saved.includes('def add(a, b):\\n    return a + b'), 'the selected lines were sent');
		assert.ok(!saved.includes('import math'), 'only the selected lines');
	});
});

test('Neovim: pid killed; the chat says the session was saved, :PidResume continues it', { timeout: 60000 }, async () => {
	const model = {
		provider: 'script',
		turns: [{ content: [text('I will remember: the code word is plum.')] }, { content: [text('The code word was plum.')] }],
	};
	await withNvim({ name: 'nvim-chat-resume', session: { model } }, async (nv) => {
		await nv.sendKeys(':PidAsk the code word is plum', 'Enter');
		await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the first run to end' });
		const first = nv.processes().find((p) => p.cmd === pidBin());
		assert.ok(first, 'pid runs');
		process.kill(first.pid, 'SIGKILL');
		let screen = await nv.waitFor('pid stopped; the session was saved', { what: 'the crash message' });
		await nv.saveScreen('nvim-chat-crashed', screen);
		assert.ok(panes(screen).right.some((r) => r.startsWith('[exit] pid stopped; the session was saved: :PidResume')), `the chat says what to do:\n${screen}`);

		await nv.sendKeys(':PidResume', 'Enter');
		screen = await nv.waitFor((s) => panes(s).right.some((r) => r.startsWith('[session] end of the saved transcript')), { what: 'the resumed transcript' });
		assert.ok(panes(screen).right.some((r) => r.startsWith('[session] resumed ')), `resumed:\n${screen}`);
		await nv.sendKeys(':PidAsk what was the code word?', 'Enter');
		screen = await nv.waitFor((s) => panes(s).right.includes('The code word was plum.'), { what: 'the answer of the same conversation' });
		await nv.saveScreen('nvim-chat-resumed', screen);
		const second = nv.processes().find((p) => p.cmd === pidBin());
		assert.ok(second && second.pid !== first.pid, 'a new pid process');
		// One session: the saved sessions folder holds one session file.
		const dir = path.join(nv.dirs.pidXdg, 'state', 'pid', 'sessions');
		const count = (d) => fs.readdirSync(d, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? count(path.join(d, e.name)) : e.name.endsWith('.jsonl') ? 1 : 0), 0);
		assert.equal(count(dir), 1, 'the conversation went on in the same session');
	});
});

test('Neovim: pid killed while a tool runs; the card is not left running, :PidResume shows the conversation once', { timeout: 60000 }, async () => {
	const model = {
		provider: 'script',
		turns: [{ content: [text('I will build it.'), call('b1', 'build', {})] }, { content: [text('Built after the restart.')] }],
	};
	// A tool that says what it does, then takes its time: pid is killed while it runs.
	const scriptedTools = [{ name: 'build', steps: [{ update: { content: [text('compiling')] } }, { sleepMs: 600000 }, { result: { content: [text('built')] } }] }];
	await withNvim({ name: 'nvim-chat-killed-tool', session: { model, scriptedTools } }, async (nv) => {
		await nv.sendKeys(':PidAsk build it', 'Enter');
		let screen = await nv.waitFor((s) => panes(s).right.some((r) => /^\[tool\] build \{\}\s+running/.test(r)), { what: 'the card running' });
		const first = nv.processes().find((p) => p.cmd === pidBin());
		assert.ok(first, 'pid runs');
		process.kill(first.pid, 'SIGKILL');
		screen = await nv.waitFor('pid stopped; the session was saved', { what: 'the crash message' });
		await nv.saveScreen('nvim-chat-killed-tool', screen);
		const card = panes(screen).right.find((r) => r.startsWith('[tool] build'));
		assert.ok(card && !/\s(running|queued|waiting)\b/.test(card), `the card is not left running: ${card}\n${screen}`);
		assert.match(card, /cancelled · pid stopped before it ended/, `the card says what happened:\n${screen}`);

		await nv.sendKeys(':PidResume', 'Enter');
		screen = await nv.waitFor((s) => panes(s).right.some((r) => r.startsWith('[session] end of the saved transcript')), { what: 'the resumed transcript' });
		await nv.saveScreen('nvim-chat-killed-tool-resumed', screen);
		const chat = panes(screen).right;
		assert.equal(chat.filter((r) => r === '>>> build it').length, 1, `the prompt is shown once:\n${screen}`);
		assert.equal(chat.filter((r) => r === 'I will build it.').length, 1, `the answer is shown once:\n${screen}`);
		assert.equal(chat.filter((r) => r.startsWith('[tool] build')).length, 1, `one card for the call:\n${screen}`);
		assert.ok(!chat.some((r) => /^\[tool\] build.*\s(running|queued|waiting)\b/.test(r)), `the card is not running after the resume:\n${screen}`);
		assert.ok(chat.some((r) => r.startsWith('[session] resumed ')), `resumed:\n${screen}`);
	});
});

test('Neovim: a command typed in the prompt window; its card shows the latest output line, then the last', { timeout: 60000 }, async () => {
	// The command prints two lines, then waits for the test to create `gate`, then prints the
	// result: the card must show "running 3 tests" (the latest line, not the first), then "3
	// passed".
	const command = "echo compiling; echo 'running 3 tests'; while [ ! -f gate ]; do sleep 0.05; done; echo '3 passed'";
	const model = {
		provider: 'script',
		turns: [
			{ content: [text('Running the tests.'), call('t1', 'bash', { command })] },
			{ content: [text('All 3 tests pass.')] },
		],
	};
	await withNvim({ name: 'nvim-chat-progress', session: { model } }, async (nv) => {
		await nv.sendKeys(':PidChat', 'Enter');
		await nv.waitFor((s) => s.includes('pid>') && s.includes('-- INSERT --'), { what: 'the prompt window, in insert mode' });
		await nv.sendKeys('run the tests', 'Enter');
		let screen = await nv.waitFor('[a] allow', { what: 'the approval float' });
		assert.ok(screen.includes(`$ ${command}`), `the float shows the whole command:\n${screen}`);
		assert.ok(!screen.includes('[A] always allow'), `no "always" for a loop pid cannot scope as narrowly as the call:\n${screen}`);
		// From the prompt window (insert mode): Escape, :PidApproval, a.
		await nv.sendKeys('Escape', ':PidApproval', 'Enter', 'a');
		screen = await nv.waitFor((s) => s.includes('running · running 3 tests'), { what: 'the card with the latest output line' });
		await nv.saveScreen('nvim-chat-progress-running', screen);
		assert.ok(!screen.includes('running · compiling'), 'not the first line');
		fs.writeFileSync(path.join(nv.dirs.workspace, 'gate'), '');
		screen = await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the run to end' });
		await nv.saveScreen('nvim-chat-progress-done', screen);
		const chat = panes(screen).right;
		assert.ok(chat.includes('>>> run the tests'), `the prompt from the prompt window:\n${screen}`);
		// The card's line is longer than the chat is wide: it wraps, its status on the next row.
		assert.match(chat.join(' ').replace(/\s+/g, ' '), /\[tool\] bash \$ echo compiling; echo 'running 3 tests'; while \[ ! -f gate \];\.\.\. ok · 3 passed \[approval\]/, `the card (its command cut) ends with the last line:\n${screen}`);
		assert.ok(chat.includes('All 3 tests pass.'), `the answer:\n${screen}`);
	});
});
