// Smoke test of the VS Code harness: a real VS Code (code-server in headless Chromium) runs
// "pid: Ask" from the Command Palette with pid's extension built from editor/vscode, against
// bin/pid with a scripted model; the output panel shows the run as a person sees it.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { flat, pidBin } from './lib/util.js';

const answer = 'Hello from the scripted model: the VS Code harness works.';

test('VS Code: pid: Ask from the Command Palette shows the scripted answer in the pid output', { timeout: 180000 }, async () => {
	let seenPid = false;
	let vsRef;
	await withVSCode(
		{ name: 'vscode-ask', model: { provider: 'script', turns: [{ content: [{ type: 'text', text: answer }] }] } },
		async (vs) => {
			vsRef = vs;
			await vs.runCommand('pid: Ask');
			const asked = await vs.typeInQuickInput('say hello', { title: 'pid: Ask' });
			assert.match(asked.message + asked.placeholder, /What should pid do\?/, 'the input box asks what pid should do');

			const text = await vs.readOutputChannel('pid', { until: (t) => flat(t).includes('— done (stop) —') });
			const lines = text.split('\n');
			const prompt = lines.indexOf('> say hello');
			assert.ok(prompt >= 0, `the output shows the prompt line "> say hello":\n${text}`);
			assert.match(flat(lines.slice(0, prompt).join('\n')), /^pid: started \S+ \(pid [^)]+\) pid: new session \S+ \(7 tools: read, write, edit, bash, grep, find, ls\)$/);
			const after = flat(lines.slice(prompt + 1).join('\n'));
			assert.equal(after, `${answer} — done (stop) —`, 'the answer, then the end of the run, follow the prompt');
			// The whole channel, as VS Code logged it, holds the same run line for line.
			assert.match(vs.readOutputLog('pid'), new RegExp(`^> say hello\\n\\n${answer.replace(/[.:]/g, '\\$&')}\\n\\n— done \\(stop\\) —$`, 'm'));

			seenPid = vs.processes().some((p) => p.cmd === pidBin());
			await vs.screenshot('vscode-ask');
		},
	);
	assert.ok(seenPid, 'pid ran as a process under the harness while the prompt ran');
	assert.ok(vsRef.report.all.some((p) => p.cmd === pidBin()), 'the teardown knew the pid process');
	assert.deepEqual(vsRef.report.leftover, [], 'no process survived the teardown');
});

test('VS Code: the harness reads notifications and answers pid\'s approval dialog (Deny)', { timeout: 180000 }, async () => {
	let workspace;
	await withVSCode(
		{
			name: 'vscode-approval',
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

			await vs.runCommand('pid: Ask');
			await vs.typeInQuickInput('write notes', { title: 'pid: Ask' });
			const d = await vs.waitForDialog('pid wants to write notes.txt');
			assert.deepEqual([...d.buttons].sort(), ['Allow', 'Always allow', 'Cancel', 'Deny']);
			assert.match(d.detail, /^\+hello$/m, 'the dialog shows the new content as added lines');
			await vs.screenshot('vscode-approval-dialog');
			await vs.clickDialogButton('Deny');

			const text = flat(await vs.readOutputChannel('pid', { until: (t) => flat(t).includes('— done (stop) —') }));
			assert.match(
				text,
				/\[w1\] write waits for approval: pid wants to write notes\.txt \[w1\] write denied \[w1\] write failed: The user denied this call of write\. The write was denied\. — done \(stop\) —$/,
			);
			assert.ok(!fs.existsSync(path.join(workspace, 'notes.txt')), 'the denied write did not happen');
			await vs.screenshot('vscode-approval-denied');
		},
	);
});
