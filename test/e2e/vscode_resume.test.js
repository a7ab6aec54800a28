// pid's chat view in a real VS Code (code-server in headless Chromium) where a person comes
// back to it and works without the mouse (issue 19):
// - the window reloaded: the empty chat offers the folder's last session, naming it, and its
//   Resume button loads that session, which the next message continues;
// - pid: Focus Chat, then typing at once while the chat view first loads: nothing typed is lost;
// - an approval answered with its keys (Ctrl+Alt+Shift+N denies, Ctrl+Alt+Y allows) while the
//   keyboard focus stays in the editor, whose text gets none of those keys.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { waitFor } from './lib/util.js';

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const answers = (chat) => chat.items.filter((i) => i.kind === 'assistant');
const tool = (chat, id) => chat.items.find((i) => i.kind === 'tool' && i.toolCallId === id);

/** chord presses Ctrl+Alt(+Shift)+key as a person does. */
async function chord(page, key, { shift = false } = {}) {
	const mods = ['Control', 'Alt', ...(shift ? ['Shift'] : [])];
	for (const m of mods) {
		await page.keyboard.down(m);
	}
	await page.keyboard.press(key);
	for (const m of mods.reverse()) {
		await page.keyboard.up(m);
	}
}

test('VS Code chat: after the window reloads, the empty chat offers the folder\'s last session by name; Resume loads it and the next message continues it', { timeout: 240000 }, async () => {
	await withVSCode(
		{ name: 'vscode-resume-offer', model: { provider: 'script', turns: [text('First answer.'), text('Second answer, same session.')] } },
		async (vs) => {
			await vs.openChat();
			await vs.sendInChat('plan the refactor');
			let chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('First answer.')) && c, { what: 'the first answer' });
			const sessionId = chat.sessionId;
			assert.ok(sessionId);

			// Developer: Reload Window, as a person does after installing something. The sidebar
			// comes back with pid's chat in it (not the explorer waitForReady looks for).
			await vs.reloadWindow();
			chat = await vs.waitForChat((c) => c.items.some((i) => i.kind === 'notice' && i.buttons.some((b) => b.startsWith('Resume'))) && c, { timeout: 60000, what: 'the offer to resume in the reloaded chat' });
			assert.equal(chat.items.length, 1, `only the offer: ${JSON.stringify(chat.items)}`);
			const offer = chat.items[0];
			assert.match(offer.text, /^Your last session in this folder: "plan the refactor" \((just now|\d+ minutes? ago), 2 messages\)\. Resume continues it; a new message starts a new session\./);
			assert.deepEqual(offer.buttons, ['Resume "plan the refactor"']);
			assert.equal(chat.sessionId, undefined, 'nothing loaded before the click');
			await vs.screenshot('vscode-resume-offer');

			await vs.clickInChat('.notice button', 'Resume "plan the refactor"');
			chat = await vs.waitForChat((c) => c.status === 'idle' && c.sessionId === sessionId && c.items.some((i) => i.kind === 'notice' && i.text.startsWith('Resumed "plan the refactor"')) && c, { timeout: 30000, what: 'the session loaded' });
			assert.ok(chat.text.includes('plan the refactor') && chat.text.includes('First answer.'), 'its conversation is shown');
			assert.ok(!chat.items.some((i) => i.kind === 'notice' && i.buttons.some((b) => b.startsWith('Resume'))), 'the offer is gone');

			await vs.sendInChat('go on');
			chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('Second answer, same session.')) && c, { what: 'the next answer' });
			assert.equal(chat.sessionId, sessionId, 'the same session');
			await vs.screenshot('vscode-resume-offer-resumed');
		},
	);
});

test('VS Code chat: pid: Focus Chat, then typing at once while the chat view first loads: every key lands in the prompt box', { timeout: 240000 }, async () => {
	await withVSCode({ name: 'vscode-type-early', model: { provider: 'script', turns: [text('Heard you.')] } }, async (vs) => {
		const typed = 'fix the flaky test in parser.go';
		// The window has been used a while (the extension is active: a pid command ran); the
		// chat was never opened in it. The palette closes and the keys follow at once, as fast
		// as a person types after Enter, while the chat view loads for a second or more.
		await vs.runCommand('pid: Cancel');
		await vs.waitForNotification('pid: nothing to cancel.');
		await vs.runCommand('pid: Focus Chat');
		// The sidebar shows pid's view at once; its page takes a second or more to load.
		await waitFor(() => vs.page.evaluate(() => /pid/i.test(document.querySelector('.part.sidebar .composite.title')?.textContent ?? '')), { timeout: 10000, what: "the sidebar to show pid's view" });
		const loading = await vs.chatFrame({ timeout: 1 }).then(() => false, () => true);
		await vs.page.keyboard.type(typed, { delay: 15 });
		const bridged = await vs.quickInput();
		const f = await vs.chatFrame();
		const state = await waitFor(
			() => f.evaluate((t) => {
				const p = document.getElementById('prompt');
				return p.value.length >= t.length && { value: p.value, focused: document.activeElement === p };
			}, typed),
			{ timeout: 10000, what: 'the typed text in the prompt box', describe: async () => `-- the prompt box holds ${JSON.stringify(await f.evaluate(() => document.getElementById('prompt').value))}` },
		);
		assert.equal(loading, true, 'the keys were typed while the chat view loaded');
		assert.equal(state.value, typed, 'nothing typed was lost or doubled');
		assert.equal(state.focused, true, 'the cursor is in the prompt box');
		// While the page loaded, the keys went to pid's input box (unless the page was quicker).
		if (bridged) {
			assert.equal(bridged.title, 'pid: Chat');
			assert.match(bridged.message, /The chat is opening: what you type here moves into its prompt box/);
		}
		await waitFor(async () => !(await vs.quickInput()), { timeout: 10000, what: 'the input box to close' });
		await vs.screenshot('vscode-type-early');
		await vs.page.keyboard.press('Enter');
		const chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('Heard you.')) && c, { what: 'the answer' });
		assert.ok(chat.items.some((i) => i.kind === 'user' && i.text.includes(typed)), JSON.stringify(chat.items));
	});
});

test('VS Code chat: the pending approval is answered with its keys from the editor (Ctrl+Alt+Shift+N denies, Ctrl+Alt+Y allows); the card shows them and the file gets none of them', { timeout: 240000 }, async () => {
	let workspace;
	await withVSCode(
		{
			name: 'vscode-approval-keys',
			files: { 'main.py': 'print("hi")\n' },
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'b1', name: 'bash', arguments: { command: 'touch denied.txt' } }] },
					{ content: [{ type: 'toolCall', id: 'b2', name: 'bash', arguments: { command: 'touch ran.txt' } }] },
					text('Done.'),
				],
			},
		},
		async (vs) => {
			workspace = vs.dirs.workspace;
			await vs.openChat();
			await vs.openFile('main.py');
			await vs.runCommand('pid: Ask');
			await vs.typeInQuickInput('touch two files', { title: 'pid: Ask' });

			let chat = await vs.waitForChat((c) => tool(c, 'b1')?.approval?.state === 'pending' && c, { what: 'the first approval' });
			assert.match(tool(chat, 'b1').approval.text, /Keys \(from anywhere in VS Code\): Ctrl\+Alt\+Y allow · (Ctrl\+Alt\+Shift\+Y allow always · )?Ctrl\+Alt\+Shift\+N deny/);
			const ed = await vs.activeEditor();
			assert.equal(ed.focused, true, 'the focus stayed in the editor');
			await vs.screenshot('vscode-approval-keys-pending');

			await chord(vs.page, 'N', { shift: true });
			chat = await vs.waitForChat((c) => tool(c, 'b1')?.approval?.state === 'denied' && tool(c, 'b2')?.approval?.state === 'pending' && c, { what: 'b1 denied by its key, b2 asked' });
			assert.equal(tool(chat, 'b1').status, 'denied');
			assert.ok(!fs.existsSync(path.join(workspace, 'denied.txt')), 'the denied command did not run');

			await chord(vs.page, 'y');
			chat = await vs.waitForChat((c) => c.status === 'idle' && answers(c).some((a) => a.text.includes('Done.')) && c, { what: 'the run to end' });
			assert.equal(tool(chat, 'b2').approval.state, 'allowed');
			assert.equal(tool(chat, 'b2').status, 'done');
			assert.ok(fs.existsSync(path.join(workspace, 'ran.txt')), 'the allowed command ran');

			const after = await vs.activeEditor();
			assert.equal(after.dirty, false, `the keys typed nothing into the file: ${JSON.stringify(after)}`);
			assert.match(after.text, /^print\("hi"\)/);
			await vs.screenshot('vscode-approval-keys-answered');
		},
	);
});
