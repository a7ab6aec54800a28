// Leaving the sandbox, said out loud, in a real VS Code (code-server in headless Chromium), as a
// person sees it (issue 31): in auto mode a sandboxed bash call fails on a write next to the
// workspace; the model asks to run it outside with a justification; the chat shows a question of
// its own (the warning title, what running outside means, the justification, what the sandbox
// refused before, the command, always only for exactly this command), not "run a command";
// Allow runs it on the host, and the finished card says "ran outside the sandbox".

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';

const call = (id, args) => ({ type: 'toolCall', id, name: 'bash', arguments: args });
const card = (chat, id) => chat.items.find((i) => i.kind === 'tool' && i.toolCallId === id);

test('VS Code: the question to run outside the sandbox (title, meaning, justification, refusal, command, exact always), allowed; the card marked', { timeout: 120000 }, async () => {
	const command = 'touch ../outside.txt';
	const model = {
		provider: 'script',
		turns: [
			{ content: [call('s1', { command })] },
			{ content: [call('e1', { command, unsandboxed: true, justification: 'The file belongs next to the workspace.' })] },
			{ content: [{ type: 'text', text: 'Done outside.' }] },
		],
	};
	const settings = { 'pid.session': { mode: 'auto', toolExecution: 'sequential' } };
	await withVSCode({ name: 'vscode-escalation', model, settings }, async (vs) => {
		const outside = path.join(vs.dirs.tmp, 'outside.txt');
		await vs.openChat();
		await vs.sendInChat('write next to the workspace');
		let chat = await vs.waitForChat((c) => card(c, 'e1')?.approval?.state === 'pending' && c, { what: 'the escalation question' });
		const f = await vs.chatFrame();
		const q = await f.evaluate(() => {
			const a = document.querySelector('.item.tool[data-tool-call-id="e1"] .approval.escalation');
			return a && { title: a.querySelector('.escalation-title')?.textContent, means: a.querySelector('.escalation-means')?.textContent, text: a.innerText };
		});
		assert.ok(q, 'the question is an escalation of its own');
		await vs.screenshot('vscode-escalation-question');
		assert.equal(q.title, '⚠ Run outside the sandbox?');
		assert.match(q.means, /without its sandbox: with all your rights/);
		assert.match(q.text, /Why, in the model's words:[\s\S]*The file belongs next to the workspace\./);
		assert.match(q.text, /What the sandbox refused before:[\s\S]*cannot touch/);
		assert.ok(q.text.includes(`$ ${command}`), q.text);
		assert.equal(card(chat, 's1').status, 'failed', 'the sandboxed call failed');
		assert.ok(!fs.existsSync(outside), 'nothing ran outside before the answer');

		await vs.clickInChat('.item.tool[data-tool-call-id="e1"] .approval button', 'Allow once');
		chat = await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('Done outside.') && c, { what: 'the run to end' });
		await vs.screenshot('vscode-escalation-done');
		const e1 = card(chat, 'e1');
		assert.equal(e1.status, 'done');
		assert.match(e1.text, /ran outside the sandbox/);
		assert.ok(fs.existsSync(outside), 'the command ran on the host, outside the workspace');
	});
});
