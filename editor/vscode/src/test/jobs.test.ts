// Background jobs under the chat (issue 36): jobViews keeps jobs/list's running jobs; against
// the real pid and its sandbox, a job the model starts shows under the chat (jobUpdate, then
// jobs/list), Show output gets what it printed (jobs/output), Stop ends it (jobs/kill) and
// takes it off the list.

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { jobViews } from '../chat';
import { start, until, type Harness } from './harness';

const T = { timeout: 60_000 };

test('jobViews keeps the running jobs in the view\'s shape', () => {
	assert.deepEqual(jobViews([
		{ jobId: 'job-1', command: 'npm run dev', startedAt: '2026-12-06T10:00:00.000Z', running: true, outputBytes: 12 },
		{ jobId: 'job-2', command: 'make', startedAt: '2026-12-06T10:00:01.000Z', running: false, exitCode: 0, outputBytes: 3 },
		{ command: 'no id', running: true },
		'nonsense',
	]), [{ jobId: 'job-1', command: 'npm run dev', startedAt: '2026-12-06T10:00:00.000Z', outputBytes: 12 }]);
	assert.deepEqual(jobViews(undefined), []);
});

/** jobSession starts pid on a workspace with a scripted model whose one tool call starts command as a background job (bash, waiting for waitFor in its output) and then says the job runs. */
function jobSession(t: TestContext, command: string, waitFor: string): Harness {
	return start(t, {
		workspace: true,
		session: {
			mode: 'auto',
			permissions: { default: 'allow' },
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'b1', name: 'bash', arguments: { command, background: true, waitFor, waitMs: 60000 } }] },
					{ content: [{ type: 'text', text: 'The job runs.' }] },
				],
			},
		},
	});
}

test('against pid: a running job under the chat, its output, Stop', T, async (t) => {
	const h = jobSession(t, 'echo ready-from-the-job; exec sleep 1000', '^ready');
	const chat = h.c.chat;
	const run = await h.c.ask('start a job');
	assert.equal(run?.state, 'done');
	await until(() => chat.state.jobs?.length === 1, 'the job under the chat');
	const j = chat.state.jobs?.[0];
	assert.equal(j?.jobId, 'job-1');
	assert.equal(j?.command, 'echo ready-from-the-job; exec sleep 1000');
	assert.ok(!Number.isNaN(Date.parse(j?.startedAt ?? '')), `startedAt ${j?.startedAt}`);
	// Its last lines come with it (jobs/output, tail 3).
	await until(() => chat.state.jobs?.[0]?.last === 'ready-from-the-job', `its last line under the chat: ${JSON.stringify(chat.state.jobs)}`);

	const out = await h.c.jobOutput('job-1');
	assert.match(out, /^job-1: echo ready-from-the-job; exec sleep 1000 \(running\)\n\nready-from-the-job/);

	await h.c.stopJob('job-1');
	await until(() => chat.state.jobs?.length === 0, 'the stopped job off the list');
});

test('against pid: the last lines of a running job are looked at again while it runs (every 2 s)', T, async (t) => {
	const h = jobSession(t, 'echo one; sleep 1; echo two; sleep 1; echo three; sleep 1; echo four; exec sleep 1000', '^one');
	const chat = h.c.chat;
	await h.c.ask('start a job');
	await until(() => chat.state.jobs?.[0]?.last === 'two\nthree\nfour', `the last three lines, later: ${JSON.stringify(chat.state.jobs)}`, 20_000);
	await h.c.stopJob('job-1');
	await until(() => chat.state.jobs?.length === 0, 'the stopped job off the list');
});
