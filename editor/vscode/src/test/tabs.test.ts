// Several conversations at once (issue 38): the chat view's tabs, each its own pid session
// through the window's one pid (PidDaemon shared), against the real pid: two prompts run at
// the same time, each tab's chat shows its own session only, an approval asks on the card of
// the tab whose session asked, each tab keeps its own mode, showing another tab keeps a run
// going, the approval keys never answer a tab not shown, and closing a tab closes its
// session in pid.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { ChatModel } from '../chat';
import { PidController } from '../controller';
import { PidDaemon } from '../daemon';
import type { SessionNewParams } from '../protocol';
import { ChatTabs, tabName } from '../tabs';
import { PID_BIN, STEP_TIMEOUT_MS, text, until, within } from './harness';

test('tabs: two conversations run at once through one pid, each showing its own session; an approval asks in the tab that asked; modes stay per tab; the keys never answer a tab not shown; a closed tab closes its session', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-tabs-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const lines: string[] = [];
	const daemon = new PidDaemon({
		command: PID_BIN,
		env: { ...process.env, XDG_CONFIG_HOME: path.join(tmp, 'xdg', 'config'), XDG_STATE_HOME: path.join(tmp, 'xdg', 'state') },
		workspaceFolders: [{ uri: pathToFileURL(ws).href, name: 'ws' }],
		clientInfo: { name: 'pid-vscode tests', version: '0' },
		ui: { appendLine: (l) => lines.push(l) },
	});
	// Tab 1 asks to run a tool that needs approval; tab 2 answers at once.
	const sessions: SessionNewParams[] = [
		{
			model: { provider: 'script', turns: [{ content: [{ type: 'toolCall', id: 'c1', name: 'deploy', arguments: {} }] }, { content: text('deployed') }] },
			scriptedTools: [{ name: 'deploy', requiresApproval: true, steps: [{ result: { content: text('ok') } }] }],
		},
		{ model: { provider: 'script', turns: [{ content: text('two') }] } },
	];
	let made = 0;
	const make = (chat: ChatModel) => new PidController({ ...daemon.opts, daemon, chat, session: sessions[made++] ?? sessions[1] });
	const tabs = new ChatTabs(make);
	t.after(async () => {
		await within(daemon.dispose(), 'pid to stop', STEP_TIMEOUT_MS).catch(() => daemon.client?.kill());
		fs.rmSync(tmp, { recursive: true, force: true });
	});
	const one = tabs.shown;
	const two = tabs.add();
	assert.equal(tabs.shown, one, 'a tab added is not shown until asked');
	assert.deepEqual(tabs.views().map((v) => [v.name, v.shown]), [['Chat 1', true], ['Chat 2', false]]);

	// Tab 2 in plan mode before its session: tab 1 stays in default.
	await two.controller.setMode('plan');

	// Tab 1's prompt waits for its approval; tab 2 is shown meanwhile and runs to its end.
	const first = one.controller.ask('deploy it');
	await until(() => one.chat.firstPendingApproval() !== undefined, "tab 1's approval");
	assert.ok(tabs.show(two.id));
	const second = await within(two.controller.ask('say two'), "tab 2's prompt", STEP_TIMEOUT_MS);
	assert.equal(second?.state, 'done');
	assert.equal(one.controller.busy, true, 'showing tab 2 kept tab 1 running');
	assert.notEqual(one.controller.currentSession, two.controller.currentSession, 'each tab its own session');
	assert.equal(two.chat.firstPendingApproval(), undefined, "tab 1's question is not on tab 2's cards");
	assert.deepEqual(two.chat.all().filter((i) => i.kind === 'assistant').map((i) => (i.kind === 'assistant' ? i.text : '')), ['two']);
	assert.equal(two.chat.state.mode?.id, 'plan');
	assert.equal(one.chat.state.mode?.id, 'default');
	assert.deepEqual(tabs.views().map((v) => [v.name, v.status]), [['deploy it', 'approval'], ['say two', 'idle']], 'the tab bar says which tab waits');

	// The keys' question is in tab 1, not shown: said as elsewhere, never answered unseen.
	const p = tabs.pending();
	assert.equal(p?.tab, one);
	assert.equal(p?.elsewhere, true);
	tabs.show(one.id);
	assert.equal(tabs.pending()?.elsewhere, false);
	assert.equal(one.chat.answerApproval(p.card.toolCallId, 'Allow'), true);
	const run = await within(first, "tab 1's prompt", STEP_TIMEOUT_MS);
	assert.equal(run?.state, 'done');
	assert.deepEqual(one.chat.all().filter((i) => i.kind === 'assistant').map((i) => (i.kind === 'assistant' ? i.text : '')), ['deployed']);
	assert.ok(!one.chat.all().some((i) => i.kind === 'assistant' && i.text === 'two'), "tab 2's answer is not in tab 1");

	// Closing tab 2 closes its session in pid (no longer live: tools/list refuses it); its
	// file stays and loads again.
	const closed = two.controller.currentSession as string;
	const client = daemon.client;
	assert.ok(client);
	assert.ok((await client.listTools(closed)).length > 0, 'live before the close');
	await tabs.close(two.id);
	assert.deepEqual(tabs.all(), [one]);
	assert.equal(tabs.shown, one);
	await assert.rejects(client.listTools(closed), /unknown session|-32602|session/i);
	assert.equal((await client.loadSession(closed)).sessionId, closed);
	assert.equal(tabName(one), 'deploy it');
});
