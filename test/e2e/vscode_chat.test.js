// pid's chat view in a real VS Code (code-server in headless Chromium), driven as a person
// would: typing into the chat's prompt box and the editor, clicking the chat's buttons. Each
// test starts its own VS Code with the extension built from editor/vscode and the real bin/pid:
// - an answer streamed by a model server the test controls (an OpenAI-compatible stub on
//   loopback: each piece is sent only once the previous one is seen in the chat), rendered as
//   markdown with the model's HTML escaped, and a message steered into the run while it goes;
//   then the editor's selection (+ Selection), a file picked with "@" and a file's problems
//   (+ Problems) sent with a message;
// - an approval shown in the chat while the keyboard focus stays in the editor: keys typed
//   there (Enter, space) land in the file and answer nothing; a click on Allow does;
// - an edit of a file with unsaved changes: pid reads the editor's text (fs/read_text_file),
//   Review opens the diff editor, the edit lands in the buffer and is saved, no conflict; the
//   changed file's Undo puts back what it held before the run;
// - pid killed: the chat says so with Resume, which starts pid again and loads the same session.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { pidBin, waitFor } from './lib/util.js';

const text = (t) => ({ content: [{ type: 'text', text: t }] });

/**
 * fakeOpenAI serves an OpenAI-compatible /v1/chat/completions on a free loopback port. Each
 * request is kept (its body and an open event stream) until the test sends the pieces of its
 * answer with send() and ends it with end(): the test decides when each piece goes.
 */
async function fakeOpenAI() {
	const requests = [];
	const server = http.createServer((req, res) => {
		let body = '';
		req.on('data', (d) => (body += d));
		req.on('end', () => {
			res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
			res.flushHeaders();
			requests.push({ url: req.url, body: JSON.parse(body), res });
		});
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	const chunk = (res, delta, finish = null) =>
		res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'stub', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
	return {
		requests,
		model: { provider: 'openai', id: 'stub', baseUrl: `http://127.0.0.1:${server.address().port}/v1` },
		/** request waits for the n-th request (0-based) and returns it. */
		request: (n) => waitFor(() => requests[n], { timeout: 30000, what: `request ${n + 1} to the model` }),
		send: (r, content) => chunk(r.res, { role: 'assistant', content }),
		end: (r) => {
			chunk(r.res, {}, 'stop');
			r.res.end('data: [DONE]\n\n');
		},
		close: () => {
			for (const r of requests) {
				r.res.destroy();
			}
			server.closeAllConnections();
			return new Promise((resolve) => server.close(resolve));
		},
	};
}

/** userTexts returns the text of each user message of a chat/completions request. */
function userTexts(body) {
	return body.messages
		.filter((m) => m.role === 'user')
		.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((c) => c.text ?? '').join('')));
}

const answers = (chat) => chat.items.filter((i) => i.kind === 'assistant');
const tool = (chat, name) => chat.items.find((i) => i.kind === 'tool' && i.toolName === name);

test('VS Code chat: an answer streams in pieces as rendered markdown; a message steered in while it streams is taken next; a selection, an @file and a file\'s problems go with the next message', { timeout: 240000 }, async () => {
	const model = await fakeOpenAI();
	try {
		await withVSCode({ name: 'vscode-chat-stream', model: model.model, files: { 'calc.py': 'def add(a, b):\n    return a - b\n\nprint(add(1, 2))\n', 'conf.json': '{"a": 1,,}\n' } }, async (vs) => {
			await vs.openChat();
			await vs.screenshot('vscode-chat-empty');
			await vs.sendInChat('explain streaming');

			const first = await model.request(0);
			assert.deepEqual(userTexts(first.body), ['explain streaming']);
			assert.equal(first.body.stream, true);

			// The first piece: shown while the answer still streams, the rest not there yet.
			model.send(first, 'Streaming **works** in');
			let chat = await vs.waitForChat((c) => answers(c).some((a) => a.text.includes('Streaming works in')) && c, { what: 'the first piece in the chat' });
			let a = answers(chat).at(-1);
			assert.equal(a.streaming, true, 'the answer is marked as streaming');
			assert.match(a.html, /<strong>works<\/strong>/, 'markdown is rendered as it streams');
			assert.ok(!a.text.includes('pieces'), 'the second piece has not been sent');
			assert.equal(chat.status, 'working');
			assert.match(chat.statusLine, /pid is working/);

			// While it runs, Enter in the prompt box steers: the message waits, marked queued.
			await vs.sendInChat('also mention tests');
			chat = await vs.waitForChat((c) => c.queue.length === 1 && c, { what: 'the steered message in the queue' });
			assert.match(chat.queue[0], /queued: pid reads it after the current step\s+also mention tests/);
			await vs.screenshot('vscode-chat-streaming');

			// The second piece, with a code block holding HTML the model wrote.
			model.send(first, ' pieces.\n\n```js\nconst tag = "<b>not bold</b>";\n```\n\n<img src=x onerror=alert(1)>');
			chat = await vs.waitForChat((c) => answers(c).some((x) => x.text.includes('const tag')) && c, { what: 'the second piece' });
			a = answers(chat).at(-1);
			assert.match(a.html, /<code class="language-js">const tag = "&lt;b&gt;not bold&lt;\/b&gt;";\n<\/code>/, 'the code block shows the HTML as text');
			assert.match(a.html, /&lt;img src=x onerror=alert\(1\)&gt;/, "the model's own HTML is shown as text");
			const f = await vs.chatFrame();
			assert.equal(await f.evaluate(() => document.querySelectorAll('#log img, #log b, #log script').length), 0, 'no element of the model\'s HTML');
			assert.equal(await f.evaluate(() => document.querySelectorAll('#log .code-block button.copy').length), 1, 'the code block has a Copy button');
			model.end(first);

			// pid takes the steered message after this turn: the model's next request has it.
			const second = await model.request(1);
			assert.deepEqual(userTexts(second.body), ['explain streaming', 'also mention tests']);
			chat = await vs.waitForChat((c) => c.queue.length === 0 && c.items.some((i) => i.kind === 'user' && i.text.includes('also mention tests')) && c, { what: 'the steered message in the conversation' });
			model.send(second, 'Tests: `npm test`.');
			model.end(second);
			chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((x) => x.text.includes('Tests: npm test.')) && c, { what: 'the second answer and the end of the run' });
			assert.deepEqual(
				chat.items.map((i) => i.kind),
				['user', 'assistant', 'user', 'assistant'],
				'question, answer, steered message, answer: in that order',
			);
			assert.ok(answers(chat).every((x) => !x.streaming), 'no answer is still marked streaming');
			await vs.screenshot('vscode-chat-answer');

			// Context: the editor's selection (+ Selection) and a file picked with "@".
			await vs.openFile('calc.py');
			await vs.page.keyboard.down('Control');
			await vs.page.keyboard.press('Home');
			await vs.page.keyboard.up('Control');
			await vs.page.keyboard.down('Shift');
			await vs.page.keyboard.press('ArrowDown');
			await vs.page.keyboard.press('ArrowDown');
			await vs.page.keyboard.up('Shift');
			await vs.clickInChat('#add-selection');
			await vs.waitForChat((c) => c.chips.join() === 'calc.py:1-2', { what: 'the selection as a chip' });
			await vs.clickInChat('#prompt');
			await vs.page.keyboard.type('@');
			await vs.typeInQuickInput('calc.py', { title: 'pid: Add File to Chat' });
			chat = await vs.waitForChat((c) => c.chips.length === 2 && c, { what: 'the file as a chip' });
			assert.deepEqual(chat.chips, ['calc.py:1-2', 'calc.py']);
			assert.equal(await f.evaluate(() => document.getElementById('prompt').value), '', 'the "@" made a chip, not text');
			// The problems VS Code's JSON support reports in a broken file (+ Problems).
			await vs.openFile('conf.json');
			await waitFor(() => vs.page.evaluate(() => document.querySelector('.part.editor .squiggly-error') !== null), { timeout: 20000, what: 'VS Code to report the JSON error' });
			await vs.clickInChat('#add-problems');
			chat = await vs.waitForChat((c) => c.chips.length === 3 && c, { what: 'the problems as a chip' });
			assert.match(chat.chips[2], /^Problems in conf\.json \(\d+\)$/);
			await vs.screenshot('vscode-chat-context');
			await vs.sendInChat('why does add subtract?');
			const third = await model.request(2);
			const asked = userTexts(third.body).at(-1);
			assert.ok(asked.startsWith('why does add subtract?'), asked);
			assert.match(asked, /calc\.py \(lines 1-2\)[\s\S]*def add\(a, b\):\n {4}return a - b/, 'the selection, with its file and lines');
			assert.match(asked, /VS Code reports \d+ problems? in conf\.json:\n- line 1, column \d+: error: /, 'the problems, each with where and what');
			model.send(third, 'It uses `-`: make it `a + b`.');
			model.end(third);
			chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).length === 3 && c, { what: 'the answer about the context' });
			assert.deepEqual(chat.chips, [], 'the context went with the message');
			const sent = chat.items.filter((i) => i.kind === 'user').at(-1);
			assert.match(sent.text, /why does add subtract\?\s+calc\.py:1-2\s+calc\.py\s+Problems in conf\.json/, 'the message shows its context');
		});
	} finally {
		await model.close();
	}
});

test('VS Code chat: an approval waits in the chat while keys typed in the editor go to the file; a click on Allow answers it', { timeout: 240000 }, async () => {
	let workspace;
	await withVSCode(
		{
			name: 'vscode-chat-approval',
			files: { 'main.py': 'print("hi")\n' },
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'b1', name: 'bash', arguments: { command: 'touch ran.txt' } }] },
					text('Created ran.txt.'),
				],
			},
		},
		async (vs) => {
			workspace = vs.dirs.workspace;
			await vs.openChat();
			await vs.openFile('main.py');
			// Asked from the Command Palette: the focus goes back to the editor.
			await vs.runCommand('pid: Ask');
			await vs.typeInQuickInput('touch a file', { title: 'pid: Ask' });

			let chat = await vs.waitForChat((c) => tool(c, 'bash')?.approval?.state === 'pending' && c.status === 'approval' && c, { what: 'the approval in the chat' });
			const card = tool(chat, 'bash');
			assert.equal(card.title, '$ touch ran.txt');
			assert.equal(card.status, 'waiting');
			assert.match(card.approval.text, /pid wants to run/);
			assert.deepEqual(card.approval.buttons.filter((b) => b !== 'Allow always'), ['Allow', 'Deny']);
			if (card.approval.buttons.includes('Allow always')) {
				assert.match(card.approval.scope, /^Allow always covers: bash commands starting with touch in this workspace$/);
			} else {
				assert.match(card.approval.scope, /Allow always is not offered/);
			}
			assert.match(await vs.page.evaluate(() => document.querySelector('.part.statusbar').innerText), /pid: waiting for approval/);
			assert.equal(await vs.dialog(), undefined, 'no modal dialog');

			// The focus is still in the editor: what is typed goes into the file, Enter and space included.
			const ed = await vs.activeEditor();
			assert.equal(ed.focused, true, `the editor kept the focus: ${JSON.stringify(ed)}`);
			await vs.page.keyboard.type('x = 1');
			await vs.page.keyboard.press('Enter');
			await vs.page.keyboard.press('Space');
			await vs.page.keyboard.press('Enter');
			await vs.waitForEditor((e) => e.dirty && /^x = 1\n \n\s*print\("hi"\)/.test(e.text), { what: 'the keys in the file' });

			// ... and answered nothing: the question still waits, the command did not run.
			chat = await vs.chat();
			assert.equal(tool(chat, 'bash').approval.state, 'pending');
			assert.equal(tool(chat, 'bash').status, 'waiting');
			assert.ok(!fs.existsSync(path.join(workspace, 'ran.txt')), 'the command did not run');
			await vs.screenshot('vscode-chat-approval-pending');

			await vs.clickInChat('.approval .buttons button', 'Allow');
			chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('Created ran.txt.')) && c, { what: 'the run to end' });
			assert.equal(tool(chat, 'bash').status, 'done');
			assert.equal(tool(chat, 'bash').approval.state, 'allowed');
			assert.match(tool(chat, 'bash').approval.text, /Allowed once/);
			assert.ok(fs.existsSync(path.join(workspace, 'ran.txt')), 'the command ran once allowed');
			await vs.screenshot('vscode-chat-approval-allowed');
		},
	);
});

test('VS Code chat: an edit of a file with unsaved changes sees them, lands in the buffer, is saved with no conflict, and Undo puts back the text before the run', { timeout: 240000 }, async () => {
	let workspace;
	await withVSCode(
		{
			name: 'vscode-chat-unsaved',
			files: { 'notes.md': '# Notes\n\nsaved line\n' },
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'r1', name: 'read', arguments: { path: 'notes.md' } }] },
					// The text to replace is only in the editor: on disk the edit would fail.
					{ content: [{ type: 'toolCall', id: 'e1', name: 'edit', arguments: { path: 'notes.md', edits: [{ oldText: 'unsaved line', newText: 'edited by pid' }] } }] },
					text('Edited notes.md.'),
				],
			},
		},
		async (vs) => {
			workspace = vs.dirs.workspace;
			const file = path.join(workspace, 'notes.md');
			await vs.openChat();
			await vs.openFile('notes.md');
			await vs.page.keyboard.down('Control');
			await vs.page.keyboard.press('End');
			await vs.page.keyboard.up('Control');
			await vs.page.keyboard.type('unsaved line');
			await vs.waitForEditor((e) => e.dirty && e.text.includes('unsaved line'), { what: 'the unsaved change' });
			assert.equal(fs.readFileSync(file, 'utf8'), '# Notes\n\nsaved line\n', 'the disk does not have it');

			await vs.sendInChat('tidy my notes');
			let chat = await vs.waitForChat((c) => tool(c, 'edit')?.approval?.state === 'pending' && c, { what: 'the edit to ask' });
			assert.equal(tool(chat, 'read').status, 'done');
			assert.match(tool(chat, 'read').output, /saved line\n.*unsaved line/s, 'pid read the editor\'s text, unsaved change included');
			assert.match(tool(chat, 'edit').approval.text, /-unsaved line\n\+edited by pid/);
			assert.ok(tool(chat, 'edit').approval.buttons.includes('Review'));

			// Review: VS Code's diff editor, the file now (unsaved text) against what pid proposes.
			await vs.clickInChat('.approval .buttons button', 'Review');
			const diff = await waitFor(
				() =>
					vs.page.evaluate(() => {
						const tab = document.querySelector('.part.editor .tab.active');
						const d = document.querySelector('.part.editor .monaco-diff-editor');
						const text = d.innerText.replace(/\u00a0/g, ' ');
						return tab && text.includes('edited by pid') && { title: tab.innerText, text };
					}),
				{ timeout: 20000, what: 'the diff editor', describe: () => vs.describe() },
			);
			assert.match(diff.title, /notes\.md: now ↔ proposed by pid \(edit\)/);
			assert.ok(await vs.page.evaluate(() => [...document.querySelectorAll('.part.editor .tab')].some((t) => (t.getAttribute('aria-label') ?? '').includes('proposed by pid'))), 'the diff\'s tab');
			assert.match(diff.text, /edited by pid/);
			await vs.screenshot('vscode-chat-review');
			// Back to the file's own tab (a click, as a person would).
			const tabs = await vs.page.$$('.part.editor .tab');
			for (const t of tabs) {
				const label = await t.evaluate((e) => e.getAttribute('aria-label') ?? '');
				if (label.startsWith('notes.md') && !label.includes('↔')) {
					await t.click();
				}
			}
			await vs.waitForEditor((e) => e.title === 'notes.md' && e.dirty && e.text.includes('unsaved line'), { what: 'the file\'s editor again' });

			await vs.clickInChat('.approval .buttons button', 'Allow');
			chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('Edited notes.md.')) && c, { what: 'the run to end' });
			assert.equal(tool(chat, 'edit').status, 'done', JSON.stringify(tool(chat, 'edit')));
			// On disk, saved by the editor: the unsaved change and pid's edit of it.
			assert.equal(fs.readFileSync(file, 'utf8'), '# Notes\n\nsaved line\nedited by pid');
			const ed = await vs.waitForEditor((e) => !e.dirty && e.text.includes('edited by pid'), { what: 'the edit in the buffer, saved' });
			// The Review diff, stale once answered, was closed.
			await waitFor(() => vs.page.evaluate(() => ![...document.querySelectorAll('.part.editor .tab')].some((t) => (t.getAttribute('aria-label') ?? '').includes('proposed by pid'))), {
				timeout: 10000,
				what: 'the Review diff to close',
			});
			assert.ok(!ed.text.includes('unsaved line'), ed.text);
			assert.deepEqual(await vs.notifications(), [], 'no conflict or error notification');
			assert.equal(await vs.dialog(), undefined, 'no dialog');

			const changes = chat.items.find((i) => i.kind === 'changes');
			assert.ok(changes, 'the changed files of the run are listed');
			assert.deepEqual(changes.files.map((f) => [f.name, f.buttons]), [['notes.md', ['Open diff', 'Undo']]]);
			await vs.screenshot('vscode-chat-edited');

			await vs.clickInChat('.changes button', 'Undo');
			await vs.waitForChat((c) => c.items.find((i) => i.kind === 'changes')?.files[0]?.text.includes('undone'), { what: 'the file marked undone' });
			await vs.waitForEditor((e) => !e.dirty && e.text.includes('unsaved line') && !e.text.includes('edited by pid'), { what: 'the text before the run back in the editor' });
			assert.equal(fs.readFileSync(file, 'utf8'), '# Notes\n\nsaved line\nunsaved line');
		},
	);
});

test('VS Code chat: pid killed, the chat says the session was saved; Resume starts pid again on the same session, which the next message continues', { timeout: 240000 }, async () => {
	await withVSCode(
		{ name: 'vscode-chat-resume', model: { provider: 'script', turns: [text('First answer.'), text('Second answer, same session.')] } },
		async (vs) => {
			// Ctrl+Alt+P (pid: Focus Chat) opens the chat with the cursor in its prompt box.
			await vs.waitForReady();
			await waitFor(
				async () => {
					await vs.page.keyboard.down('Control');
					await vs.page.keyboard.down('Alt');
					await vs.page.keyboard.press('p');
					await vs.page.keyboard.up('Alt');
					await vs.page.keyboard.up('Control');
					const f = await vs.chatFrame({ timeout: 2000 }).catch(() => undefined);
					return f && (await f.evaluate(() => document.hasFocus() && document.activeElement?.id === 'prompt'));
				},
				{ timeout: 30000, interval: 500, what: 'Ctrl+Alt+P to focus the chat\'s prompt box' },
			);
			await vs.sendInChat('first question');
			let chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('First answer.')) && c, { what: 'the first answer' });
			const sessionId = chat.sessionId;
			assert.ok(sessionId, 'the chat knows its session');

			const pids = vs.processes().filter((p) => p.cmd === pidBin());
			assert.equal(pids.length, 1, `one pid runs: ${JSON.stringify(vs.processes())}`);
			process.kill(pids[0].pid, 'SIGKILL');

			chat = await vs.waitForChat((c) => c.status === 'stopped' && c.items.some((i) => i.kind === 'notice' && i.buttons.includes('Resume')) && c, { what: 'the crash notice' });
			const notice = chat.items.filter((i) => i.kind === 'notice').at(-1);
			assert.match(notice.text, /^pid stopped \(killed by SIGKILL\); the session was saved\./);
			assert.match(await vs.page.evaluate(() => document.querySelector('.part.statusbar').innerText), /pid stopped/);
			await vs.screenshot('vscode-chat-crashed');

			await vs.clickInChat('.notice button', 'Resume');
			chat = await vs.waitForChat((c) => c.status === 'idle' && c.items.some((i) => i.kind === 'notice' && /saved session was loaded/.test(i.text)) && c, { what: 'the session loaded again' });
			assert.equal(chat.sessionId, sessionId, 'the same session');
			assert.ok(chat.text.includes('first question') && chat.text.includes('First answer.'), 'its conversation is shown');
			const again = vs.processes().filter((p) => p.cmd === pidBin());
			assert.equal(again.length, 1);
			assert.notEqual(again[0].pid, pids[0].pid, 'a new pid');

			await vs.sendInChat('second question');
			chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('Second answer, same session.')) && c, { what: 'the second answer' });
			assert.equal(chat.sessionId, sessionId);
			const saved = fs.readdirSync(path.join(vs.xdg.XDG_STATE_HOME, 'pid', 'sessions'), { recursive: true }).filter((f) => String(f).endsWith('.jsonl'));
			assert.equal(saved.length, 1, `one saved session: ${saved}`);
			await vs.screenshot('vscode-chat-resumed');
		},
	);
});

test('VS Code chat: Allow always and Remembered Answers, the model picker, New Session and Session History, as a person uses them', { timeout: 240000 }, async () => {
	await withVSCode(
		{
			name: 'vscode-chat-sessions',
			model: {
				provider: 'script',
				turns: [{ content: [{ type: 'toolCall', id: 'b1', name: 'bash', arguments: { command: 'echo hi' } }] }, text('Said hi.')],
			},
		},
		async (vs) => {
			// The settings' models list, which the model picker offers (pid reads it when it starts).
			fs.mkdirSync(path.join(vs.xdg.XDG_CONFIG_HOME, 'pid'), { recursive: true });
			fs.writeFileSync(
				path.join(vs.xdg.XDG_CONFIG_HOME, 'pid', 'settings.json'),
				JSON.stringify({ models: [{ provider: 'script', id: 'second', name: 'Second model', turns: [text('From the second model.')] }] }),
			);
			await vs.openChat();
			await vs.sendInChat('say hi');
			let chat = await vs.waitForChat((c) => tool(c, 'bash')?.approval?.state === 'pending' && c, { what: 'the approval' });
			assert.equal(tool(chat, 'bash').approval.scope, 'Allow always covers: bash commands starting with echo hi in this workspace');
			await vs.clickInChat('.approval .buttons button', 'Allow always');
			chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('Said hi.')) && c, { what: 'the run to end' });
			assert.equal(tool(chat, 'bash').approval.text, 'Allowed always: bash commands starting with echo hi in this workspace');
			const sessionId = chat.sessionId;

			// The remembered answer, listed with what it covers; picked, it is forgotten.
			await vs.runCommand('pid: Remembered Answers');
			const remembered = await vs.typeInQuickInput('echo', { title: 'pid: Remembered Answers', enter: false });
			assert.match(remembered.rows.join('\n'), /Allowed: bash commands starting with "echo hi"/);
			await vs.page.keyboard.press('Enter');
			assert.match(await vs.waitForNotification('forgotten'), /^pid: forgotten: Allowed: bash commands starting with "echo hi"\. The next such call asks again\.$/);

			// The model picker (the chat's Model button): the session's next call uses the pick.
			await vs.clickInChat('#model');
			const picker = await vs.typeInQuickInput('Second', { title: 'pid: Pick Model', enter: false });
			assert.match(picker.rows.join('\n'), /Second model/);
			await vs.page.keyboard.press('Enter');
			await vs.waitForChat((c) => c.text !== undefined, { what: 'the chat' });
			const f = await vs.chatFrame();
			await waitFor(() => f.evaluate(() => document.getElementById('model').textContent === 'Second model ▾'), { timeout: 10000, what: 'the Model button to name the pick' });
			await vs.sendInChat('and now?');
			chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('From the second model.')) && c, { what: 'the picked model\'s answer' });
			assert.equal(chat.sessionId, sessionId, 'the same session');

			// New Session empties the chat; Session History brings the conversation back.
			await vs.runCommand('pid: New Session');
			chat = await vs.waitForChat((c) => c.items.length === 0 && !c.sessionId && c, { what: 'an empty chat' });
			assert.equal(await f.evaluate(() => document.getElementById('model').textContent), 'Model ▾', 'no model claimed for the new session');
			await vs.runCommand('pid: Session History');
			await vs.typeInQuickInput('say hi', { title: 'pid: Session History', enter: false });
			await waitFor(async () => (await vs.quickInput())?.rows.some((r) => r.includes('say hi')), { timeout: 15000, what: 'the saved session in the list' });
			await vs.screenshot('vscode-chat-history');
			await vs.page.keyboard.press('Enter');
			chat = await vs.waitForChat((c) => c.sessionId === sessionId && c.items.some((i) => i.kind === 'notice' && /^Resumed "say hi"/.test(i.text)) && c, { what: 'the session loaded' });
			assert.deepEqual(
				chat.items.filter((i) => i.kind === 'user' || i.kind === 'assistant').map((i) => i.text.trim()),
				['say hi', 'Said hi.', 'and now?', 'From the second model.'],
			);
			assert.equal(tool(chat, 'bash').status, 'done');
			await waitFor(() => f.evaluate(() => document.getElementById('model').textContent === 'Second model ▾'), { timeout: 10000, what: 'the Model button to name the loaded session\'s model' });
			await vs.screenshot('vscode-chat-loaded');
		},
	);
});
