// :PidJobs in a real Neovim (tmux), checked on the screen as a person sees it (issue 36): a
// prompt starts a background job that prints a line a second; :PidJobs opens the list in a
// split with the job running; <CR> shows what it printed under the list; K kills it and the
// list says so; no process of the job is left (by /proc).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';
import { withNvim } from './lib/nvim.js';

const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });
const marker = `pid-e2e-ticker-${process.pid}`;
const command = `echo ready; i=0; while true; do i=$((i+1)); echo ${marker} $i; sleep 1; done`;

/** Reports whether a process of the job (its command line holds the marker) is left: /proc, read directly (no pgrep on a fresh machine). */
function jobAlive() {
	for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
		try {
			if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) && pid !== String(process.pid)) {
				return true;
			}
		} catch {
			// gone meanwhile
		}
	}
	return false;
}

test('Neovim: :PidJobs lists a running job, <CR> shows its output, K kills it', { timeout: 90000 }, async () => {
	const model = {
		provider: 'script',
		turns: [
			{ content: [call('b1', 'bash', { command, background: true, waitFor: '^ready', waitMs: 60000 })] },
			{ content: [{ type: 'text', text: 'The ticker runs.' }] },
		],
	};
	const session = { model, mode: 'auto', permissions: { default: 'allow' } };
	await withNvim({ name: 'nvim-jobs', session }, async (nv) => {
		await nv.sendKeys(':PidAsk start the ticker', 'Enter');
		await nv.waitFor((s) => s.includes('The ticker runs.'), { what: 'the run' });
		assert.ok(jobAlive(), 'the job runs');

		await nv.sendKeys(':PidJobs', 'Enter');
		let screen = await nv.waitFor((s) => /job-1 {2}running {13}echo ready;/.test(s), { what: "the jobs list with the running job" });
		await nv.saveScreen('nvim-jobs-list', screen);

		await nv.sendKeys('Enter');
		screen = await nv.waitFor((s) => s.includes(`${marker} 1`), { what: "the job's output under the list" });
		await nv.saveScreen('nvim-jobs-output', screen);

		await nv.sendKeys('K');
		screen = await nv.waitFor((s) => /job-1 {2}killed \(signal 15\)/.test(s), { what: 'the list to say the job was killed' });
		await nv.saveScreen('nvim-jobs-killed', screen);
		assert.equal(jobAlive(), false, 'no process of the job is left');
	});
});
