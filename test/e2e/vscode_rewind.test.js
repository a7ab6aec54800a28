// Rewind in a real VS Code (code-server in headless Chromium), driven as a person would: two
// prompts each write a file (a scripted model, writes allowed by the session's permissions);
// each message shows "Rewind to here"; a click on the second one's shows the diff since (a
// diff document beside the chat) and asks files / conversation / both; "Files and
// conversation" puts the file back, redraws the chat without the message (it goes back into
// the prompt box) and says what was restored; then "Files only" on the first message removes
// the file that prompt created and keeps the conversation.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { waitFor } from './lib/util.js';

const model = {
	provider: 'script',
	turns: [
		{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'one\n' } }] },
		{ content: [{ type: 'text', text: 'Wrote one.' }] },
		{ content: [{ type: 'toolCall', id: 'w2', name: 'write', arguments: { path: 'a.txt', content: 'two\n' } }] },
		{ content: [{ type: 'text', text: 'Wrote two.' }] },
	],
};

const users = (chat) => chat.items.filter((i) => i.kind === 'user');

test('VS Code rewind: Rewind to here shows the diff, then files / conversation / both; the chat and the files go back', { timeout: 120000 }, async () => {
	await withVSCode({ name: 'vscode-rewind', model, settings: { 'pid.session': { permissions: { tools: { write: 'allow' } } } } }, async (vs) => {
		const file = path.join(vs.dirs.workspace, 'a.txt');
		await vs.openChat();
		await vs.sendInChat('write one');
		await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('Wrote one.'), { what: 'the first answer' });
		await vs.sendInChat('make it two');
		await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('Wrote two.'), { what: 'the second answer' });
		assert.equal(fs.readFileSync(file, 'utf8'), 'two\n');
		const f = await vs.chatFrame();
		const rewindButtons = () => f.evaluate(() => [...document.querySelectorAll('#log > .item.user')].map((u) => ({ id: u.id, button: u.querySelector('button.rewind')?.textContent ?? null })));
		const buttons = await waitFor(async () => { const b = await rewindButtons(); return b.length === 2 && b.every((x) => x.button === '↶ Rewind to here') && b; }, { what: 'Rewind to here on both messages' });
		await vs.screenshot('vscode-rewind-buttons');

		// The second message's: the diff first, then the choice.
		await vs.clickInChat(`#${buttons[1].id} button.rewind`);
		const ed = await vs.waitForEditor((e) => e?.title?.includes('Rewind to before make it two') && e.text.includes('+two') && e, { what: 'the diff since the message' });
		assert.match(ed.text, /# Rewind to before "make it two"/);
		assert.match(ed.text, /-one/);
		const q = await waitFor(async () => { const q = await vs.quickInput(); return q?.title?.includes('pid: Rewind to before "make it two"') && q.rows.length === 3 && q; }, { what: 'the choice of what to rewind' });
		assert.match(q.rows[0], /^Files and conversation/);
		assert.match(q.rows[1], /^Files only/);
		assert.match(q.rows[2], /^Conversation only/);
		await vs.screenshot('vscode-rewind-diff-and-choice');
		await vs.typeInQuickInput('Files and conversation', { title: 'pid: Rewind to before' });

		// The file is one again; the chat has the first exchange and says what happened; the message is back in the box.
		let chat = await vs.waitForChat((c) => c.status === 'idle' && users(c).length === 1 && c.text.includes('Rewound to before') && c, { what: 'the chat redrawn after the rewind' });
		assert.match(users(chat)[0].text, /write one/);
		assert.ok(!chat.text.includes('Wrote two.'), 'the rewound answer left the chat');
		assert.match(chat.items.find((i) => i.kind === 'notice' && i.text.includes('Rewound')).text, /Rewound to before "make it two": restored a\.txt; the conversation goes on from just before it\./);
		assert.equal(fs.readFileSync(file, 'utf8'), 'one\n');
		assert.equal(await waitFor(() => f.evaluate(() => document.getElementById('prompt').value || undefined), { what: 'the message back in the prompt box' }), 'make it two');
		await vs.screenshot('vscode-rewind-done');

		// Files only, to before the first message: a.txt (that prompt created it) goes; the conversation stays.
		await f.evaluate(() => {
			document.getElementById('prompt').value = '';
		});
		await vs.clickInChat('#log > .item.user button.rewind');
		await waitFor(async () => (await vs.quickInput())?.title?.includes('pid: Rewind to before "write one"'), { what: 'the choice for the first message' });
		await vs.typeInQuickInput('Files only', { title: 'pid: Rewind to before' });
		chat = await vs.waitForChat((c) => c.items.some((i) => i.kind === 'notice' && /Rewound to before "write one": removed a\.txt\./.test(i.text)) && c, { what: 'the files-only rewind reported' });
		assert.equal(users(chat).length, 1, 'the conversation stays');
		assert.ok(!fs.existsSync(file), 'the file the first prompt created is gone');
	});
});
