// Working in the open (issue 24): the model's plan as a checklist card, the context meter and
// the cost, the prompt box's `/` commands and their output, and what a compaction kept; the
// pure parts, then the controller against the real pid with a scripted model.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { BUILTIN_COMMANDS, ChatModel, commandViews, usageText, viewOf, type ChatItem } from '../chat';
import { start, until } from './harness';

const T = { timeout: 60_000 };

test('usageText is the meter in words; commandViews keeps the hint', () => {
	assert.equal(usageText({ used: 48210, size: 200000, cost: { amount: 0.1873, currency: 'USD' } }), '48.2k / 200k tokens (24%) · $0.19');
	assert.equal(usageText({ used: 900, size: 5000 }), '900 / 5k tokens (18%)');
	assert.equal(usageText({ used: 1_500_000, size: 2_000_000, cost: { amount: 0.004, currency: 'EUR' } }), '1.5M / 2M tokens (75%) · EUR 0.0040');
	assert.deepEqual(commandViews([{ name: 'review', description: 'Review', input: { hint: 'base' } }, { name: 'help', description: 'List' }, { name: '', description: 'x' }]), [
		{ name: 'review', description: 'Review', hint: 'base' },
		{ name: 'help', description: 'List' },
	]);
});

test('the chat: a plan card moves to the end when it changes and goes with an empty plan; a compaction says what it kept', () => {
	const chat = new ChatModel();
	chat.folder = '/w';
	assert.deepEqual(chat.state.commands, BUILTIN_COMMANDS, 'before a session lists its own');
	chat.handle('planUpdate', { sessionId: 's', entries: [{ content: 'Read', status: 'completed', priority: 'high' }, { content: 'Fix', status: 'bogus' }] });
	const first = chat.planCard();
	assert.deepEqual(first?.entries, [
		{ content: 'Read', status: 'completed', priority: 'high' },
		{ content: 'Fix', status: 'pending', priority: 'medium' },
	]);
	chat.notice('info', 'between');
	chat.handle('planUpdate', { sessionId: 's', entries: [{ content: 'Fix', status: 'in_progress', priority: 'medium' }] });
	const kinds = chat.all().map((i) => i.kind);
	assert.deepEqual(kinds, ['notice', 'plan'], 'one plan card, after what came since');
	assert.notEqual(chat.planCard()?.id, first?.id);
	chat.handle('planUpdate', { sessionId: 's', entries: [] });
	assert.equal(chat.planCard(), undefined);
	assert.deepEqual(chat.all().map((i) => i.kind), ['notice']);

	chat.handle('compactionStart', { sessionId: 's', reason: 'manual' });
	const running = chat.all().find((i) => i.kind === 'compaction');
	assert.equal(running?.kind === 'compaction' && running.state, 'running');
	chat.handle('compactionEnd', { sessionId: 's', reason: 'manual', summary: 'SUM', tokensBefore: 900, kept: { userMessage: true, planEntries: 2, files: ['/w/a.txt', 'b.txt'] } });
	const done = chat.get(running?.id ?? '');
	assert.deepEqual(done, { kind: 'compaction', id: running?.id, state: 'done', reason: 'manual', summary: 'SUM', tokensBefore: 900, kept: { userMessage: true, planEntries: 2, files: ['a.txt', 'b.txt'] } });
	chat.handle('compactionStart', { sessionId: 's', reason: 'threshold' });
	chat.handle('compactionEnd', { sessionId: 's', reason: 'threshold', error: 'nothing to compact' });
	const failed = chat.all().filter((i) => i.kind === 'compaction')[1];
	assert.equal(failed.kind === 'compaction' && failed.state, 'failed');
	assert.equal(failed.kind === 'compaction' && failed.error, 'nothing to compact');
});

test('against pid: the plan as a checklist after its todo_write, the meter with the cost, the session\'s commands, /plan\'s output, /compact\'s kept; the plan again after a resume', T, async (t) => {
	const todos = [
		{ content: 'Read the notes', status: 'completed', priority: 'high' },
		{ content: 'Fix the typo', status: 'in_progress' },
		{ content: 'Run the tests', status: 'pending', priority: 'low' },
	];
	const h = start(t, {
		session: {
			model: {
				provider: 'script',
				contextWindow: 10000,
				price: { input: 3, output: 15 },
				compaction: { keepRecentTokens: 1 },
				turns: [
					{ content: [{ type: 'toolCall', id: 't1', name: 'todo_write', arguments: { todos } }], usage: { input: 1000, output: 200 } },
					{ content: [{ type: 'text', text: 'Working on it.' }], usage: { input: 1500, output: 100 } },
				],
				summaries: [{ content: [{ type: 'text', text: 'SUMMARY-MARK of the work' }] }],
			},
		},
	});
	// The person's own command: listed with its hint after the built-in ones.
	const cmds = path.join(h.xdg, 'config', 'pid', 'commands');
	fs.mkdirSync(cmds, { recursive: true });
	fs.writeFileSync(path.join(cmds, 'fixit.md'), '---\ndescription: Fix the thing\nargument-hint: what\n---\nFix $ARGUMENTS now.\n');
	const chat = h.c.chat;

	const run = await h.c.ask('fix the typo');
	assert.equal(run?.state, 'done');
	const items = chat.all();
	const toolAt = items.findIndex((i) => i.kind === 'tool' && i.toolCallId === 't1');
	const planAt = items.findIndex((i) => i.kind === 'plan');
	assert.ok(toolAt >= 0 && planAt > toolAt, `the plan card follows its todo_write: ${items.map((i) => i.kind).join(', ')}`);
	assert.deepEqual(chat.planCard()?.entries, [
		{ content: 'Read the notes', status: 'completed', priority: 'high' },
		{ content: 'Fix the typo', status: 'in_progress', priority: 'medium' },
		{ content: 'Run the tests', status: 'pending', priority: 'low' },
	]);
	const tool = items[toolAt];
	assert.equal(tool.kind === 'tool' && tool.title, 'the plan: 3 steps');

	// The meter: the last call's whole usage of the window; the cost of both calls at the price.
	const u = chat.state.usage;
	assert.ok(u, 'usageUpdate reached the chat');
	assert.equal(u.used, 1600);
	assert.equal(u.size, 10000);
	assert.equal(u.cost?.currency, 'USD');
	assert.ok(Math.abs((u.cost?.amount ?? 0) - (1000 * 3 + 200 * 15 + 1500 * 3 + 100 * 15) / 1e6) < 1e-9, JSON.stringify(u));
	assert.equal(usageText(u), '1.6k / 10k tokens (16%) · $0.01');

	// The session's commands, as commands/list gives them: the built-in ones and the person's.
	await until(() => (chat.state.commands ?? []).some((c) => c.name === 'fixit'), 'the session\'s commands in the completion');
	const names = (chat.state.commands ?? []).map((c) => c.name);
	for (const n of ['compact', 'plan', 'help', 'review']) {
		assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);
	}
	assert.deepEqual((chat.state.commands ?? []).find((c) => c.name === 'fixit'), { name: 'fixit', description: 'Fix the thing', hint: 'what' });

	// /plan answers by itself: its output is a card; the model is not called (its turns are spent).
	const before = chat.all().length;
	const planRun = await h.c.ask('/plan');
	assert.equal(planRun?.state, 'done');
	const added = chat.all().slice(before);
	assert.deepEqual(added.map((i) => i.kind), ['user', 'command'], 'the message, then the command\'s output');
	const out = added[1] as Extract<ChatItem, { kind: 'command' }>;
	assert.equal(out.name, 'plan');
	assert.equal(out.isError, false);
	assert.match(out.text, /Fix the typo/);

	// /compact: the compaction's card says what it kept word for word, and the meter shrinks.
	await h.c.ask('/compact');
	const comp = chat.all().find((i) => i.kind === 'compaction');
	assert.ok(comp && comp.kind === 'compaction', 'a compaction card');
	assert.equal(comp.state, 'done', JSON.stringify(comp));
	assert.equal(comp.reason, 'manual');
	assert.match(comp.summary ?? '', /SUMMARY-MARK/);
	assert.match(comp.summary ?? '', /Fix the typo/, 'the plan is in what the model now sees');
	assert.equal(comp.kept?.planEntries, 3);
	assert.equal(typeof comp.kept?.userMessage, 'boolean');
	assert.ok((chat.state.usage?.used ?? Infinity) < 1600, `the meter after the compaction: ${JSON.stringify(chat.state.usage)}`);
	const compactOut = chat.all().filter((i) => i.kind === 'command').pop();
	assert.equal(compactOut?.kind === 'command' && compactOut.name, 'compact');

	// A resumed session shows its plan again (pid sends planUpdate after session/load's answer).
	const sessionId = h.c.currentSession as string;
	h.c.newSession();
	assert.equal(chat.planCard(), undefined);
	assert.equal(chat.state.usage, undefined);
	await h.c.resume(sessionId);
	await until(() => chat.planCard()?.entries.length === 3, 'the plan after the resume');
	assert.equal(chat.all().filter((i) => i.kind === 'plan').length, 1, 'one plan card');
	await h.shutdown();
});

test('against pid: /help\'s output is rendered as Markdown on its card (its `code` as code, never raw backticks)', { timeout: 60_000 }, async (t) => {
	const h = start(t, { session: { model: { provider: 'script', turns: [] } } });
	const run = await h.c.ask('/help');
	assert.equal(run?.state, 'done');
	const out = h.c.chat.all().find((i) => i.kind === 'command');
	assert.ok(out && out.kind === 'command' && out.name === 'help', JSON.stringify(h.c.chat.all()));
	assert.ok(out.text.includes('`'), `pid's /help has code spans: ${out.text}`);
	const html = viewOf(out).html ?? '';
	assert.match(html, /<code>\/compact( \[focus\])?<\/code>|<code>[^<]*compact[^<]*<\/code>/, html);
	assert.ok(!/`/.test(html.replace(/<code>[^<]*<\/code>/g, '')), `no raw backtick outside code: ${html}`);
	await h.shutdown();
});
