// Smoke tests of the VS Code harness and pid's commands: a real VS Code (code-server in
// headless Chromium) runs "pid: Ask" from the Command Palette with pid's extension built from
// editor/vscode, against bin/pid with a scripted model; the chat view shows the answer and the
// log (pid: Show Log, an output channel) the run. A denial with a reason, typed in the chat,
// reaches the model. The chat view's own tests are in vscode_chat.test.js.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { flat, pidBin } from './lib/util.js';

const answer = 'Hello from the scripted model: the VS Code harness works.';

test('VS Code: pid: Ask from the Command Palette shows the scripted answer in the chat view and the run in the pid log', { timeout: 180000 }, async () => {
	let seenPid = false;
	let vsRef;
	await withVSCode(
		{ name: 'vscode-ask', model: { provider: 'script', turns: [{ content: [{ type: 'text', text: answer }] }] } },
		async (vs) => {
			vsRef = vs;
			await vs.runCommand('pid: Ask');
			const asked = await vs.typeInQuickInput('say hello', { title: 'pid: Ask' });
			assert.match(asked.message + asked.placeholder, /What should pid do\?/, 'the input box asks what pid should do');

			// The chat view opens by itself (without taking the focus) and shows the run.
			const chat = await vs.waitForChat((c) => c.status === 'idle' && c.items.some((i) => i.kind === 'assistant') && c, { what: 'the answer in the chat' });
			assert.deepEqual(chat.items.map((i) => [i.kind, i.text.trim()]), [['user', 'say hello'], ['assistant', answer]]);
			seenPid = vs.processes().some((p) => p.cmd === pidBin());

			await vs.runCommand('pid: Show Log');
			const text = await vs.readOutputChannel('pid', { until: (t) => flat(t).includes('— done (stop) —') });
			const lines = text.split('\n');
			const prompt = lines.indexOf('> say hello');
			assert.ok(prompt >= 0, `the log shows the prompt line "> say hello":\n${text}`);
			// The built-in tools, and diagnostics: the extension answers editor/diagnostics.
			assert.match(flat(lines.slice(0, prompt).join('\n')), /^pid: started \S+ \(pid [^)]+\) pid: new session \S+ \(15 tools: read, write, edit, bash, grep, find, ls, job_output, job_kill, todo_write, skill, fetch, diagnostics, task, exit_plan_mode\)$/);
			const after = flat(lines.slice(prompt + 1).join('\n'));
			assert.equal(after, `${answer} — done (stop) —`, 'the answer, then the end of the run, follow the prompt');
			// The whole channel, as VS Code logged it, holds the same run line for line.
			assert.match(vs.readOutputLog('pid'), new RegExp(`^> say hello\\n\\n${answer.replace(/[.:]/g, '\\$&')}\\n\\n— done \\(stop\\) —$`, 'm'));
			await vs.screenshot('vscode-ask');
		},
	);
	assert.ok(seenPid, 'pid ran as a process under the harness while the prompt ran');
	assert.ok(vsRef.report.all.some((p) => p.cmd === pidBin()), 'the teardown knew the pid process');
	assert.deepEqual(vsRef.report.leftover, [], 'no process survived the teardown');
});

test('VS Code: Deny with a reason typed in the chat: nothing is written and the model is told why', { timeout: 180000 }, async () => {
	let workspace;
	await withVSCode(
		{
			name: 'vscode-deny',
			// The chat in a dark theme (its colors are the theme's).
			settings: { 'workbench.colorTheme': 'Default Dark Modern' },
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'notes.txt', content: 'hello\n' } }] },
					{ content: [{ type: 'text', text: 'The write was denied.' }] },
				],
			},
		},
		async (vs) => {
			workspace = vs.dirs.workspace;
			await vs.runCommand('pid: Cancel');
			assert.equal(await vs.waitForNotification('nothing to cancel'), 'pid: nothing to cancel.');

			await vs.openChat();
			await vs.sendInChat('write notes');
			let chat = await vs.waitForChat((c) => c.status === 'approval' && c.items.some((i) => i.approval?.state === 'pending') && c, { what: 'the approval' });
			const card = chat.items.find((i) => i.kind === 'tool');
			assert.equal(card.toolName, 'write');
			assert.match(card.approval.text, /pid wants to write notes\.txt[\s\S]*\+hello/, 'the new content as added lines');
			assert.deepEqual(card.approval.buttons, ['Allow', 'Allow always', 'Deny', 'Review']);
			assert.equal(card.approval.scope, 'Allow always covers: write calls on the path notes.txt in this workspace');
			assert.equal(await vs.dialog(), undefined, 'no modal dialog');

			await vs.screenshot('vscode-deny-asking');
			await vs.clickInChat('.approval input.reason');
			await vs.page.keyboard.type('use docs/ instead');
			await vs.clickInChat('.approval .buttons button', 'Deny');
			chat = await vs.waitForChat((c) => c.status === 'idle' && c.items.some((i) => i.kind === 'assistant') && c, { what: 'the run to end' });
			const denied = chat.items.find((i) => i.kind === 'tool');
			assert.equal(denied.status, 'denied');
			assert.match(denied.approval.text, /^Denied: use docs\/ instead$/);
			assert.ok(!fs.existsSync(path.join(workspace, 'notes.txt')), 'the denied write did not happen');
			// The model got the reason as the call's result.
			assert.match(vs.readOutputLog('pid'), /\[w1\] write failed: The user denied this call of write: use docs\/ instead/);
			await vs.screenshot('vscode-deny');
		},
	);
});
