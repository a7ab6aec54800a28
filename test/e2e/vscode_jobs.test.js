// A background job in a real VS Code (code-server in headless Chromium), as a person sees it
// (issue 36): a scripted model starts a job that prints a line a second; under the chat the
// job shows its command, how long it runs (the time ticks) and its last lines (they follow
// what it prints); Show output opens its output channel; Stop ends it and it leaves the list.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { waitFor } from './lib/util.js';

const command = 'echo ready; i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done';
const model = {
	provider: 'script',
	turns: [
		{ content: [{ type: 'toolCall', id: 'b1', name: 'bash', arguments: { command, background: true, waitFor: '^ready', waitMs: 60000 } }] },
		{ content: [{ type: 'text', text: 'The ticker runs.' }] },
	],
};

test('VS Code jobs: a running job under the chat with its ticking time and last lines; Show output; Stop ends it', { timeout: 150000 }, async () => {
	const settings = { 'pid.session': { permissions: { tools: { bash: 'allow' } } } };
	await withVSCode({ name: 'vscode-jobs', model, settings }, async (vs) => {
		await vs.openChat();
		await vs.sendInChat('start the ticker');
		await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('The ticker runs.'), { what: 'the answer' });
		const f = await vs.chatFrame();
		const jobs = () =>
			f.evaluate(() => {
				const bar = document.getElementById('jobs');
				return {
					hidden: bar.hidden,
					rows: [...bar.querySelectorAll('.job')].map((r) => ({
						label: r.querySelector('.job-label')?.textContent ?? '',
						last: r.querySelector('.job-last')?.textContent ?? '',
						buttons: [...r.querySelectorAll('button')].map((b) => b.textContent),
					})),
				};
			});
		const tick = (s) => Number((/tick (\d+)\s*$/.exec(s) ?? [])[1] ?? -1);
		const secs = (s) => Number((/^job-1 · (\d+)s · /.exec(s) ?? [])[1] ?? -1);
		const first = await waitFor(async () => {
			const j = await jobs();
			return !j.hidden && j.rows.length === 1 && tick(j.rows[0].last) >= 1 && secs(j.rows[0].label) >= 0 && j;
		}, { what: 'the job under the chat with its last lines', describe: async () => JSON.stringify(await jobs()) });
		const row = first.rows[0];
		assert.ok(row.label.endsWith(` · ${command}`), row.label);
		assert.deepEqual(row.buttons, ['Show output', 'Stop']);
		assert.ok(row.last.split('\n').length <= 3, `at most three lines: ${JSON.stringify(row.last)}`);
		// Later: the time has ticked on and the lines followed the job.
		const later = await waitFor(async () => {
			const j = await jobs();
			const r = j.rows[0];
			return r && secs(r.label) > secs(row.label) && tick(r.last) > tick(row.last) && j;
		}, { timeout: 20000, what: 'the time and the last lines to move on', describe: async () => JSON.stringify(await jobs()) });
		await vs.screenshot('vscode-jobs-running');
		assert.ok(later.rows[0].last.includes('tick'), JSON.stringify(later));

		await vs.clickInChat('.job-output', 'Show output');
		await vs.readOutputChannel('pid: job-1', { until: (t) => t.includes('job-1: ' + command + ' (running)') && t.includes('tick 1') });

		await vs.clickInChat('.job-stop', 'Stop');
		await waitFor(async () => (await jobs()).hidden, { timeout: 15000, what: 'the stopped job to leave the list', describe: async () => JSON.stringify(await jobs()) });
		await vs.screenshot('vscode-jobs-stopped');
	});
});
