// The editor's problems for the agent (issue 26) in a real VS Code (code-server in headless
// Chromium): the model breaks a .json file with edit; VS Code's own JSON language service
// reports it; pid asked the editor (editor/diagnostics), so the edit's result, which the model
// reads next, names the problem, and the edit's card shows it; the same for a file no editor
// shows, which the extension opens in a preview tab (the focus kept) for the language service.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { waitFor } from './lib/util.js';

const model = {
	provider: 'script',
	turns: [
		{ content: [{ type: 'toolCall', id: 'r1', name: 'read', arguments: { path: 'conf.json' } }] },
		// A missing comma: JSON's language service says so.
		{ content: [{ type: 'toolCall', id: 'e1', name: 'edit', arguments: { path: 'conf.json', edits: [{ oldText: '"b": 2', newText: '"b": 2\n  "c": 3' }] } }] },
		// A file no editor shows: the extension opens it in a preview tab for the JSON service.
		{ content: [{ type: 'toolCall', id: 'r2', name: 'read', arguments: { path: 'other.json' } }] },
		{ content: [{ type: 'toolCall', id: 'e2', name: 'edit', arguments: { path: 'other.json', edits: [{ oldText: '"x": true', newText: '"x": tru' }] } }] },
		{ content: [{ type: 'text', text: 'Added c.' }] },
	],
};

test("VS Code diagnostics: an edit that breaks a .json file gets VS Code's JSON error in its result, shown on its card", { timeout: 120000 }, async () => {
	await withVSCode({
		name: 'vscode-diagnostics',
		model,
		files: { 'conf.json': '{\n  "a": 1,\n  "b": 2\n}\n', 'other.json': '{\n  "x": true\n}\n' },
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
		const e2 = chat.items.find((i) => i.toolCallId === 'e2');
		assert.match(e2.output, /Problems the editor reports in other\.json after this change:\nL2:\d+ .* \(json\)/, e2.output);
		const f = await vs.chatFrame();
		const problems = await f.evaluate(() => [...document.querySelectorAll('.item.tool[data-tool-call-id="e1"] > .problems > div')].map((n) => n.textContent));
		assert.match(problems[0], /^⚠ The editor reports \d+ problems? after this change \(\d+ errors?, told to the model\):$/);
		assert.ok(problems.some((p) => /^conf\.json L4:3 error: .* \(json\)$/.test(p)), JSON.stringify(problems));
		// The wait ended on the JSON service's report, not at waitMs (15 s).
		await vs.runCommand('pid: Show Log');
		await vs.readOutputChannel('pid', { until: (t) => t.includes('Added c.') });
		// The whole log, as VS Code keeps it (the panel shows its end only).
		const log = await waitFor(() => {
			const t = vs.readOutputLog('pid');
			return (t.match(/the editor's problems of 1 file after \d+ ms/g) ?? []).length >= 2 && t;
		}, { what: "the log's two editor/diagnostics lines" });
		const waits = [...log.matchAll(/the editor's problems of 1 file after (\d+) ms: \d+ problems?, [1-9]\d* errors?/g)].map((m) => Number(m[1]));
		assert.equal(waits.length, 2, log);
		assert.ok(waits.every((ms) => ms < 15000), `the answers came with the reports: ${log}`);
		console.log(`# editor/diagnostics answered ${waits[0]} ms (open file) and ${waits[1]} ms (unopened file) after pid asked`);
		await f.evaluate(() => document.querySelector('.item.tool[data-tool-call-id="e1"]').scrollIntoView({ block: 'start' }));
		await vs.screenshot('vscode-diagnostics');
	});
});
