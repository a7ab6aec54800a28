// The editor's problems for the agent (issue 26) in a real VS Code (code-server in headless
// Chromium): the model breaks a .json file with edit; VS Code's own JSON language service
// reports it; pid asked the editor (editor/diagnostics), so the edit's result, which the model
// reads next, names the problem, and the edit's card shows it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';

const model = {
	provider: 'script',
	turns: [
		{ content: [{ type: 'toolCall', id: 'r1', name: 'read', arguments: { path: 'conf.json' } }] },
		// A missing comma: JSON's language service says so.
		{ content: [{ type: 'toolCall', id: 'e1', name: 'edit', arguments: { path: 'conf.json', edits: [{ oldText: '"b": 2', newText: '"b": 2\n  "c": 3' }] } }] },
		{ content: [{ type: 'text', text: 'Added c.' }] },
	],
};

test("VS Code diagnostics: an edit that breaks a .json file gets VS Code's JSON error in its result, shown on its card", { timeout: 120000 }, async () => {
	await withVSCode({
		name: 'vscode-diagnostics',
		model,
		files: { 'conf.json': '{\n  "a": 1,\n  "b": 2\n}\n' },
		// The first JSON check of the window starts its language server: a slow machine may take seconds. The answer comes as soon as it reported.
		settings: { 'pid.session': { diagnostics: { waitMs: 15000 }, permissions: { default: 'allow' } } },
	}, async (vs) => {
		// The person has the file open, as they would.
		await vs.openFile('conf.json');
		await vs.openChat();
		await vs.sendInChat('add c to conf.json');
		const chat = await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('Added c.') && c, { what: 'the run to end', timeout: 60000 });
		const e1 = chat.items.find((i) => i.toolCallId === 'e1');
		assert.equal(e1.status, 'done');
		// The result the model reads next: the tool's text, then the editor's problems.
		assert.match(e1.output, /Problems the editor reports in conf\.json after this change:\nL4:3 .*(comma|Expected).* \(json\)/, e1.output);
		const f = await vs.chatFrame();
		const problems = await f.evaluate(() => [...document.querySelectorAll('.item.tool[data-tool-call-id="e1"] > .problems > div')].map((n) => n.textContent));
		assert.match(problems[0], /^⚠ The editor reports \d+ problems? after this change \(\d+ errors?, told to the model\):$/);
		assert.ok(problems.some((p) => /^conf\.json L4:3 error: .* \(json\)$/.test(p)), JSON.stringify(problems));
		// The wait ended on the JSON service's report, not at waitMs (15 s).
		await vs.runCommand('pid: Show Log');
		const log = await vs.readOutputChannel('pid', { until: (t) => /the editor's problems of 1 file after \d+ ms/.test(t) });
		const ms = Number(/the editor's problems of 1 file after (\d+) ms: \d+ problems?, [1-9]\d* errors?/.exec(log)?.[1]);
		assert.ok(ms >= 0 && ms < 15000, `the answer came with the report: ${log}`);
		console.log(`# editor/diagnostics answered ${ms} ms after pid asked`);
		await f.evaluate(() => document.querySelector('.item.tool[data-tool-call-id="e1"]').scrollIntoView({ block: 'start' }));
		await vs.screenshot('vscode-diagnostics');
	});
});
