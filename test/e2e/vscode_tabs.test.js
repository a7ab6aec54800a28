// Several conversations at once in a real VS Code (issue 38), as a person uses them: the chat
// view's first tab asks to run a tool; pid: New Chat Tab opens a second tab, which gets its
// own session and its own mode (Accept edits, by Shift+Tab) and runs to its end (its own
// question answered there) while the first one's question waits; a notification names the
// tab that asks, and its Show Chat shows that tab, its question there; allowed, the first run
// ends; each tab kept its own mode and session. Then what the prompt box holds unsent
// outlives a reload of the window.
// (The tool is a scripted one: two sessions writing the same file would meet pid's rule that
// a file another wrote since must be read before it is changed.)

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { waitFor } from './lib/util.js';

// Each tab's session runs this script from its start: a tool that asks in every mode, then
// an answer.
const model = {
	provider: 'script',
	turns: [
		{ content: [{ type: 'toolCall', id: 'w1', name: 'deploy', arguments: { target: 'staging' } }] },
		{ content: [{ type: 'text', text: 'Deployed.' }] },
	],
};
const session = {
	scriptedTools: [{ name: 'deploy', description: 'Deploys the app.', requiresApproval: true, steps: [{ result: { content: [{ type: 'text', text: 'deployed' }] } }] }],
};

const card = (chat, id) => chat.items.find((i) => i.kind === 'tool' && i.toolCallId === id);

test('VS Code tabs: two conversations, each its own session and mode; the question of the tab not shown is named, Show Chat shows it and it is answered there; the other tab ran meanwhile; the prompt box outlives a window reload', { timeout: 240000 }, async () => {
	await withVSCode({ name: 'vscode-tabs', model, settings: { 'pid.session': session } }, async (vs) => {
		await vs.openChat();
		const f = () => vs.chatFrame();
		/** The tab bar as shown: [{name, shown, status}]. */
		const tabs = async () => (await f()).evaluate(() => [...document.querySelectorAll('#tabs .tab')].map((t) => ({
			name: t.querySelector('.tab-name')?.textContent ?? '',
			shown: t.classList.contains('shown'),
			status: (t.className.match(/status-(\w+)/) ?? [])[1],
		})));
		const modeText = async () => (await f()).evaluate(() => document.getElementById('mode').textContent);

		// Tab 1: its call waits for an answer.
		await vs.sendInChat('deploy it');
		let chat = await vs.waitForChat((c) => card(c, 'w1')?.approval?.state === 'pending' && c, { what: "the first tab's question" });
		const session1 = chat.sessionId;
		assert.ok(session1, 'the first tab has a session');
		assert.deepEqual(await tabs(), [], 'one conversation: no tab bar');

		// pid: New Chat Tab (with one conversation there is no tab bar yet, so no +): a second
		// tab, shown, empty, in Default mode until Shift+Tab makes it Accept edits.
		await vs.runCommand('pid: New Chat Tab');
		await waitFor(async () => (await tabs()).length === 2, { what: 'the tab bar with two tabs' });
		chat = await vs.waitForChat((c) => c.items.length === 0 && c, { what: 'the second tab, empty' });
		await vs.clickInChat('#prompt');
		await vs.page.keyboard.down('Shift');
		await vs.page.keyboard.press('Tab');
		await vs.page.keyboard.up('Shift');
		await waitFor(async () => (await modeText()) === 'Accept edits mode ▾', { what: 'Shift+Tab to switch the second tab to Accept edits' });

		// The first tab's question, in a tab not shown: a notification names it.
		const said = await vs.waitForNotification('pid is waiting for your approval in the chat "deploy it"');
		assert.match(said, /\(Ctrl\+Alt\+Y allows, Ctrl\+Alt\+Shift\+N denies\)/);
		const t = await tabs();
		assert.deepEqual(t.map((x) => [x.name, x.shown, x.status]), [['● deploy it', false, 'approval'], ['Chat 2', true, 'idle']]);

		// The second tab runs meanwhile, its own question answered on its card, to its end.
		await vs.sendInChat('deploy again');
		chat = await vs.waitForChat((c) => card(c, 'w1')?.approval?.state === 'pending' && c, { what: "the second tab's own question" });
		const session2 = chat.sessionId;
		assert.ok(session2 && session2 !== session1, `two sessions: ${session1}, ${session2}`);
		await vs.clickInChat('.item.tool[data-tool-call-id="w1"] .approval button', 'Allow');
		chat = await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('Deployed.') && c, { what: "the second tab's run to end" });
		assert.equal(card(chat, 'w1').status, 'done');
		assert.equal(await modeText(), 'Accept edits mode ▾');
		assert.deepEqual((await tabs()).map((x) => [x.name, x.status]), [['● deploy it', 'approval'], ['deploy again', 'idle']], 'the first tab still waits');
		await vs.screenshot('vscode-tabs-waiting');

		// The notification's Show Chat shows the tab that asks, its question there.
		const show = await waitFor(async () => {
			for (const b of await vs.page.$$('.notifications-toasts .notification-toast')) {
				if ((await b.evaluate((n) => n.textContent)).includes('"deploy it"')) {
					const buttons = await b.$$('.monaco-button');
					for (const x of buttons) {
						if ((await x.evaluate((n) => n.textContent)) === 'Show Chat') {
							return x;
						}
					}
				}
			}
			return undefined;
		}, { what: "the notification's Show Chat" });
		await show.click();
		chat = await vs.waitForChat((c) => c.sessionId === session1 && card(c, 'w1')?.approval?.state === 'pending' && c, { what: 'the first tab shown, its question waiting' });
		assert.equal(await modeText(), 'Default mode ▾', 'the first tab kept its mode');
		assert.deepEqual((await tabs()).map((x) => x.shown), [true, false]);

		// Allowed on its card: the first run goes on to its end.
		await vs.clickInChat('.item.tool[data-tool-call-id="w1"] .approval button', 'Allow');
		chat = await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('Deployed.') && c, { what: "the first tab's run to end" });
		assert.equal(card(chat, 'w1').status, 'done');
		assert.match(card(chat, 'w1').approval?.text ?? '', /Allowed once\./);
		assert.deepEqual((await tabs()).map((x) => [x.name, x.shown, x.status]), [['deploy it', true, 'idle'], ['deploy again', false, 'idle']]);

		// The second tab again: its own chat and mode.
		await vs.clickInChat('#tabs .tab-name', 'deploy again');
		chat = await vs.waitForChat((c) => c.sessionId === session2 && c, { what: 'the second tab shown again' });
		assert.equal(await modeText(), 'Accept edits mode ▾', 'the second tab kept its mode');
		assert.match(chat.text, /deploy again/);
		assert.doesNotMatch(chat.text, /deploy it/);
		await vs.screenshot('vscode-tabs-second');

		// Typed, not sent; the window reloads: the prompt box holds it again.
		await vs.clickInChat('#prompt');
		await vs.page.keyboard.type('half a thought');
		await waitFor(async () => (await (await f()).evaluate(() => document.getElementById('prompt').value)) === 'half a thought', { what: 'the prompt box to hold the text' });
		await vs.reloadWindow();
		const kept = await waitFor(async () => {
			try {
				const v = await (await f()).evaluate(() => document.getElementById('prompt').value);
				return v === 'half a thought' && v;
			} catch {
				return undefined; // the page reloading
			}
		}, { timeout: 60000, what: 'the prompt box to hold the text typed before the reload' });
		assert.equal(kept, 'half a thought');
		await vs.screenshot('vscode-tabs-reloaded');
	});
});
