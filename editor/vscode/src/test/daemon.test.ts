// The extension's modules (client, run model, approvals, controller) against the real pid
// binary, with scripted models and tools so that every order is fixed without timing.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ALWAYS_ALLOW, DENY } from '../approval';
import { BusyError } from '../controller';
import type { ToolResultMessage } from '../protocol';
import type { Entry, Run } from '../run';
import { STEP_TIMEOUT_MS, ask, start, text, until, within } from './harness';

const T = { timeout: 60_000 };

// A parallel batch of two calls: a (slow) reports progress twice and finishes only after b's
// toolEnd was sent; b (fast) needs approval. So toolEnd comes b then a, while the results
// stay in source order a then b.
const parallelSession = () => ({
	model: {
		provider: 'script',
		turns: [
			{ content: [
				{ type: 'toolCall', id: 'a', name: 'slow', arguments: {} },
				{ type: 'toolCall', id: 'b', name: 'fast', arguments: { path: 'x.txt' } },
			] },
			{ content: text('done') },
		],
	},
	scriptedTools: [
		{ name: 'slow', steps: [
			// Each ends its last word: pid holds an unfinished one back (it may be a secret's start).
			{ update: { content: text('half\n') } },
			{ update: { content: text('three quarters\n') } },
			{ waitForEnd: 'b' },
			{ result: { content: text('slow ok') } },
		] },
		{ name: 'fast', requiresApproval: true, steps: [
			{ result: { content: text('fast ok') } },
		] },
	],
});

const at = (run: Run, pred: (e: Entry) => boolean, what: string): number => {
	const i = run.entries.findIndex(pred);
	assert.notEqual(i, -1, `the run log has no ${what}:\n${run.lines().join('\n')}`);
	return i;
};
const is = (kind: Entry['kind'], id?: string) => (e: Entry) => e.kind === kind && (id === undefined || e.toolCallId === id);
const resultsOf = (run: Run) => (run.result?.messages ?? []).filter((m): m is ToolResultMessage => m.role === 'toolResult');

test('a parallel batch with an approval: tool ends in completion order, results in source order, the answer', T, async (t) => {
	const h = start(t, { session: parallelSession(), answer: () => 'Allow' });
	const run = await ask(h, 'go');

	assert.equal(run.state, 'done');
	assert.equal(run.stopReason, 'stop');
	assert.equal(run.answer, 'done');

	// The approval: asked once, for b, while the run log already showed both starts (live).
	assert.equal(h.ui.asked.length, 1, 'one approval question');
	const { q, linesThen } = h.ui.asked[0];
	assert.equal(q.toolCallId, 'b');
	assert.equal(q.toolName, 'fast');
	assert.deepEqual(q.choices, ['Allow', 'Always allow', 'Deny']);
	assert.match(q.title, /fast/);
	assert.match(q.detail, /"path": "x.txt"/, 'the detail shows the arguments');
	assert.ok(linesThen.includes('[a] slow started'), `the UI showed a's start before the question: ${linesThen.join(' | ')}`);
	assert.ok(linesThen.includes('[b] fast started path="x.txt"'), `the UI showed b's start before the question: ${linesThen.join(' | ')}`);

	// The log, in arrival order.
	const startA = at(run, is('toolStart', 'a'), 'toolStart a');
	const startB = at(run, is('toolStart', 'b'), 'toolStart b');
	const askedB = at(run, is('approvalAsked', 'b'), 'approval asked for b');
	const allowedB = at(run, is('approvalAnswered', 'b'), 'approval answered for b');
	const endA = at(run, is('toolEnd', 'a'), 'toolEnd a');
	const endB = at(run, is('toolEnd', 'b'), 'toolEnd b');
	const answer = at(run, is('answer'), 'the answer');
	assert.ok(startA < startB, 'toolStart in source order');
	assert.ok(startB < askedB && askedB < allowedB && allowedB < endB, 'b: started, asked, allowed, ended');
	assert.ok(endB < endA, `toolEnd b (#${endB}) before toolEnd a (#${endA}): completion order`);
	assert.ok(endA < answer, 'the answer comes after the tools');
	assert.equal(run.entries.at(-1)?.kind, 'end');
	assert.equal(run.entries.filter(is('toolEnd')).length, 2, 'one toolEnd per call');

	// Progress: both updates of a, in order, before a's end.
	const updates = run.entries.map((e, i) => ({ e, i })).filter(({ e }) => e.kind === 'toolUpdate');
	assert.deepEqual(updates.map(({ e }) => [e.toolCallId, e.text]), [['a', 'half\n'], ['a', 'three quarters\n']]);
	for (const { i } of updates) {
		assert.ok(i < endA, `progress #${i} before a's end #${endA}`);
	}

	// What the output channel shows for them.
	const lines = run.lines();
	for (const want of ['> go', '[a] slow started', '[a] slow … half', '[a] slow … three quarters', '[b] fast waits for approval: pid wants to run fast on x.txt', '[b] fast allowed', '[b] fast done: fast ok', '[a] slow done: slow ok', '\ndone\n', '— done (stop) —']) {
		assert.ok(lines.includes(want), `the log shows ${JSON.stringify(want)}:\n${lines.join('\n')}`);
	}
	// The UI received the run's lines as they came, in the same order.
	const first = h.ui.lines.indexOf('> go');
	assert.deepEqual(h.ui.lines.slice(first), lines, 'the UI shows the run log in order');

	// Tool states, and the results as the model sees them: source order.
	assert.deepEqual([...run.tools.values()].map((x) => [x.toolCallId, x.status, x.updates, x.output]), [
		['a', 'ok', ['half\n', 'three quarters\n'], 'slow ok'],
		['b', 'ok', [], 'fast ok'],
	]);
	assert.deepEqual(run.results.map((m) => m.toolCallId), ['a', 'b'], 'result messages announced in source order');
	assert.deepEqual(resultsOf(run).map((m) => [m.toolCallId, m.isError, m.content]), [
		['a', false, text('slow ok')],
		['b', false, text('fast ok')],
	]);
	assert.deepEqual(run.result?.messages.map((m) => m.role), ['user', 'assistant', 'toolResult', 'toolResult', 'assistant']);

	await h.shutdown();
});

test('an approval the editor fails to ask is answered with an error, not a denial: the model reads that the editor failed, never that the user denied', T, async (t) => {
	const h = start(t, {
		session: parallelSession(),
		answer: () => {
			throw new Error('the question could not be shown');
		},
	});
	const run = await ask(h, 'go');
	assert.equal(run.state, 'done');
	const rb = resultsOf(run).find((m) => m.toolCallId === 'b');
	assert.ok(rb);
	assert.equal(rb.isError, true);
	const said = rb.content[0].type === 'text' ? rb.content[0].text : '';
	assert.match(said, /^Tool fast was not run: the editor answered the approval request with an error \(-32603: The editor could not ask the user: the question could not be shown\)\.$/);
	assert.doesNotMatch(said, /denied/);
	assert.equal(h.c.chat.tool('b')?.approval?.state, 'withdrawn', 'the card does not say the person answered');
	await h.shutdown();
});

test('a dismissed approval denies: the model gets an error result and goes on', T, async (t) => {
	const h = start(t, { session: parallelSession(), answer: () => undefined });
	const run = await ask(h, 'go');

	assert.equal(run.state, 'done');
	assert.equal(run.answer, 'done');
	assert.equal(h.ui.asked.length, 1);
	const endA = at(run, is('toolEnd', 'a'), 'toolEnd a');
	const endB = at(run, is('toolEnd', 'b'), 'toolEnd b');
	assert.ok(endB < endA, 'the denied call ends first (a waits for it)');
	assert.equal(run.entries[endB].isError, true, 'the denied call ends with an error');
	assert.equal(run.entries[endA].isError, false);
	assert.ok(run.lines().includes('[b] fast denied'), run.lines().join('\n'));
	// The reason says what happened; pid frames it (or, before it did, sends it bare): once.
	assert.deepEqual(run.entries.find((e) => e.kind === 'approvalAnswered' && e.toolCallId === 'b')?.answer, { decision: 'deny', reason: 'the question was dismissed without an answer' });
	assert.match(run.entries[endB].line, /^\[b\] fast failed: (The user denied this call of fast: )?the question was dismissed without an answer\.?$/);
	assert.equal(run.tools.get('b')?.status, 'error');

	const [ra, rb] = resultsOf(run);
	assert.deepEqual([ra.toolCallId, ra.isError], ['a', false]);
	assert.deepEqual([rb.toolCallId, rb.isError], ['b', true], 'the model gets an error result for b');
	assert.match(rb.content[0].type === 'text' ? rb.content[0].text : '', /dismissed/, 'the model reads why');
	assert.ok(!JSON.stringify(rb).includes('fast ok'), 'b did not run');

	await h.shutdown();
});

test('"Always allow" is remembered: the second call of the tool is not asked', T, async (t) => {
	const h = start(t, {
		answer: () => ALWAYS_ALLOW,
		session: {
			model: { provider: 'script', turns: [
				{ content: [{ type: 'toolCall', id: 'b1', name: 'fast', arguments: {} }] },
				{ content: text('one') },
				{ content: [{ type: 'toolCall', id: 'b2', name: 'fast', arguments: {} }] },
				{ content: text('two') },
			] },
			scriptedTools: [{ name: 'fast', requiresApproval: true, steps: [{ result: { content: text('fast ok') } }] }],
		},
	});
	const r1 = await ask(h, 'first');
	assert.equal(r1.answer, 'one');
	// With what it covers: pid's description of the scope (the whole tool, for a scripted one).
	assert.ok(r1.lines().some((l) => /^\[b1\] fast always allowed: .*\bfast\b/.test(l)), r1.lines().join('\n'));
	const r2 = await ask(h, 'second');
	assert.equal(r2.answer, 'two');
	assert.equal(h.ui.asked.length, 1, 'asked once in all');
	assert.equal(r2.entries.filter(is('approvalAsked')).length, 0);
	assert.equal(r2.tools.get('b2')?.status, 'ok');
	await h.shutdown();
});

test('cancel while a tool runs: stopReason aborted, the call ends with an error, the session goes on', T, async (t) => {
	const h = start(t, {
		session: {
			model: { provider: 'script', turns: [
				{ content: [{ type: 'toolCall', id: 'z', name: 'sleepy', arguments: {} }] },
				{ content: text('after the cancel') },
			] },
			scriptedTools: [{ name: 'sleepy', steps: [
				{ update: { content: text('sleeping') } },
				{ sleepMs: 30_000 },
				{ result: { content: text('woke up') } },
			] }],
		},
	});
	const started = Date.now();
	const pending = h.c.ask('sleep');
	await until(() => h.c.run?.entries.some(is('toolUpdate', 'z')) ?? false, "the sleeping tool's progress");
	assert.equal(h.c.busy, true);
	await assert.rejects(h.c.ask('another'), BusyError, 'a second prompt while one runs is refused');
	assert.equal(h.c.cancel(), true, 'cancel finds the running prompt');

	const run = await within(pending, 'the cancelled prompt to answer', STEP_TIMEOUT_MS);
	assert.ok(run);
	const elapsed = Date.now() - started;
	assert.ok(elapsed < 10_000, `the cancelled prompt answered in ${elapsed} ms, not after the tool's 30 s`);
	assert.equal(run.stopReason, 'aborted');
	assert.equal(run.state, 'aborted');
	assert.equal(run.entries.filter(is('toolEnd', 'z')).length, 1, 'one toolEnd for the cancelled call');
	assert.equal(run.entries.find(is('toolEnd', 'z'))?.isError, true);
	assert.equal(run.lines().at(-1), '— cancelled (aborted) —');
	assert.deepEqual(resultsOf(run).map((m) => [m.toolCallId, m.isError]), [['z', true]]);
	assert.ok(h.ui.lines.includes('pid: cancelling…'));
	assert.equal(h.c.busy, false);
	assert.equal(h.c.cancel(), false, 'nothing left to cancel');

	const next = await ask(h, 'again');
	assert.equal(next.answer, 'after the cancel', 'the session is usable after the cancel');
	await h.shutdown();
});

test('cancel while an approval is pending withdraws the question', T, async (t) => {
	const h = start(t, {
		// Never answers, like a person who has not decided yet.
		answer: () => new Promise<string | undefined>(() => {}),
		session: {
			model: { provider: 'script', turns: [{ content: [{ type: 'toolCall', id: 'w', name: 'fast', arguments: {} }] }] },
			scriptedTools: [{ name: 'fast', requiresApproval: true, steps: [{ result: { content: text('ran') } }] }],
		},
	});
	const pending = h.c.ask('go');
	await until(() => h.ui.asked.length === 1, 'the approval question');
	h.c.cancel();
	const run = await within(pending, 'the cancelled prompt to answer', STEP_TIMEOUT_MS);
	assert.ok(run);
	assert.equal(run.stopReason, 'aborted');
	await until(() => h.ui.asked[0].token.isCancellationRequested, "pid's $/cancelRequest for the question");
	assert.ok(run.lines().includes('[w] fast approval withdrawn (the prompt was cancelled)'), run.lines().join('\n'));
	assert.deepEqual(resultsOf(run).map((m) => [m.toolCallId, m.isError]), [['w', true]]);
	assert.ok(!JSON.stringify(run.result).includes('"ran"'), 'the call did not run');
	await h.shutdown();
});

test('built-in write in the workspace folder: the approval shows the new content as a diff', T, async (t) => {
	const h = start(t, {
		answer: () => 'Allow',
		// No cwd: the session's folder is the first workspace folder sent in initialize.
		workspace: true,
		session: {
			model: { provider: 'script', turns: [
				{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'notes/hello.txt', content: 'hello\nworld\n' } }] },
				{ content: text('written') },
			] },
		},
	});
	const ws = h.ws;
	const run = await ask(h, 'write it');
	assert.equal(run.state, 'done');
	assert.equal(h.ui.asked.length, 1, 'the built-in write asks by default');
	const { q } = h.ui.asked[0];
	assert.equal(q.title, 'pid wants to write notes/hello.txt');
	assert.equal(q.diff, '+++ notes/hello.txt (whole new content, 2 lines)\n+hello\n+world');
	assert.ok(q.detail.includes(q.diff as string), 'the detail holds the diff');
	assert.equal(run.tools.get('w1')?.status, 'ok', run.lines().join('\n'));
	assert.equal(fs.readFileSync(path.join(ws, 'notes', 'hello.txt'), 'utf8'), 'hello\nworld\n', 'the file was written in the workspace folder');
	await h.shutdown();
});

test('built-in edit: the approval shows old and new text as a diff; Deny keeps the file, Allow edits it', T, async (t) => {
	const answers = [DENY, 'Allow'];
	const h = start(t, {
		answer: () => answers.shift(),
		workspace: true,
		session: {
			model: { provider: 'script', turns: [
				{ content: [{ type: 'toolCall', id: 'r', name: 'read', arguments: { path: 'a.txt' } }] },
				{ content: [{ type: 'toolCall', id: 'e1', name: 'edit', arguments: { path: 'a.txt', edits: [{ oldText: 'two\n', newText: 'TWO\n2\n' }] } }] },
				{ content: [{ type: 'toolCall', id: 'e2', name: 'edit', arguments: { path: 'a.txt', edits: [{ oldText: 'two\n', newText: 'TWO\n2\n' }, { oldText: 'four', newText: '' }] } }] },
				{ content: text('edited') },
			] },
		},
	});
	const ws = h.ws;
	fs.writeFileSync(path.join(ws, 'a.txt'), 'one\ntwo\nthree\nfour\n');

	const run = await ask(h, 'edit it');
	assert.equal(run.state, 'done', run.lines().join('\n'));
	assert.equal(run.answer, 'edited');
	assert.equal(run.tools.get('r')?.status, 'ok', 'read runs without asking');
	assert.deepEqual(h.ui.asked.map((a) => a.q.toolCallId), ['e1', 'e2'], 'only the edits are asked');

	const [q1, q2] = h.ui.asked.map((a) => a.q);
	assert.equal(q1.title, 'pid wants to edit a.txt');
	assert.equal(q1.diff, '--- a.txt\n+++ a.txt\n@@ edit 1 of 1 @@\n-two\n+TWO\n+2');
	assert.ok(q1.detail.includes(q1.diff as string));
	assert.equal(q2.diff, '--- a.txt\n+++ a.txt\n@@ edit 1 of 2 @@\n-two\n+TWO\n+2\n@@ edit 2 of 2 @@\n-four');

	// e1 denied: an error result for the model, the file unchanged at that point; e2 allowed.
	assert.equal(run.tools.get('e1')?.status, 'error');
	assert.match(run.tools.get('e1')?.output ?? '', /denied/);
	assert.equal(run.tools.get('e2')?.status, 'ok', run.lines().join('\n'));
	assert.deepEqual(resultsOf(run).map((m) => [m.toolCallId, m.isError]), [['r', false], ['e1', true], ['e2', false]]);
	assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'one\nTWO\n2\nthree\n\n');
	await h.shutdown();
});

test('a pid binary that does not exist: ask fails saying so, and nothing hangs', T, async (t) => {
	const h = start(t, { command: path.join(__dirname, 'no-such-pid') });
	await assert.rejects(within(h.c.ask('hi'), 'ask to fail', STEP_TIMEOUT_MS), /could not be started: no such file \(set pid\.path/);
	assert.equal(h.c.busy, false);
	await within(h.c.dispose(), 'dispose', STEP_TIMEOUT_MS);
	h.pass();
});
