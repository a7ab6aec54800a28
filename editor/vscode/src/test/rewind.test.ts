// Rewind: which checkpoint each of the person's messages goes back to (one per prompt, oldest
// first, a rewound branch's and a rewind's own still listed), the diff document and the report;
// then against the real pid: the messages get their checkpoints, the diff since one, a rewind
// of files and conversation (the chat redrawn from session/load, the files back), the same
// text asked again mapped to its own new checkpoint, and a file changed by hand left as it is
// (with why) until forced.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ChatModel } from '../chat';
import type { Checkpoint } from '../protocol';
import { SAFETY_PREFIX, diffDocument, mapCheckpoints, promptMatches, rewindReport, skipReason, skipped, timeOf } from '../rewind';
import { STEP_TIMEOUT_MS, start, text, within } from './harness';

const T = { timeout: 60_000 };

const cp = (id: string, prompt: string, ms: number, extra: Partial<Checkpoint> = {}): Checkpoint => ({ id, prompt, timestamp: new Date(ms).toISOString().replace('Z', '123456Z'), files: [], ...extra });

test('promptMatches: the same text (cut at 200 characters as pid cuts it), or the text followed by its context', () => {
	assert.equal(promptMatches('fix it', 'fix it'), true);
	assert.equal(promptMatches('fix it', 'fix it now'), false);
	assert.equal(promptMatches('explain this\nfile:///w/a.py#L1-L2 ...', 'explain this'), true, 'context after a newline');
	assert.equal(promptMatches('explain', 'explain this'), false);
	const long = 'é'.repeat(250);
	assert.equal(promptMatches('é'.repeat(200), long), true, 'cut in characters, not bytes');
	assert.equal(timeOf('2026-12-02T01:00:00.123456789Z'), Date.UTC(2026, 11, 2, 1, 0, 0, 123));
	assert.equal(timeOf(42), 42);
	assert.equal(timeOf('not a time'), undefined);
});

test('mapCheckpoints: newest first, a rewound branch and a rewind\'s own skipped, steered messages without one, the same text told apart by time', () => {
	// Prompts a (t=1000), b (t=2000, rewound with its follow-up c), a rewind (t=3000), b again (t=4000).
	const cps = [cp('A', 'a', 1000), cp('B1', 'b', 2000), cp('C', 'c', 2500), cp('S', `${SAFETY_PREFIX}b`, 3000), cp('B2', 'b', 4000)];
	// The chat: a, a steered message, b asked again.
	const ids = mapCheckpoints([{ text: 'a', at: 999 }, { text: 'also this', at: 1500 }, { text: 'b', at: 4001 }], cps).map((c) => c?.id);
	assert.deepEqual(ids, ['A', undefined, 'B2']);
	// Without times (a live chat before pid echoed them): by order from the newest.
	assert.deepEqual(mapCheckpoints([{ text: 'a' }, { text: 'b' }], cps).map((c) => c?.id), ['A', 'B2']);
	// The same text twice, the second rewound away: the kept one is the checkpoint nearest its
	// time (pid's message time may be a little before or after its checkpoint's).
	const twice = [cp('G1', 'go', 1000), cp('G2', 'go', 2000), cp('S', `${SAFETY_PREFIX}go`, 3000)];
	assert.deepEqual(mapCheckpoints([{ text: 'go', at: 999 }], twice).map((c) => c?.id), ['G1']);
	assert.deepEqual(mapCheckpoints([{ text: 'go', at: 1001 }], twice).map((c) => c?.id), ['G1']);
	// Two messages with the same text, both kept.
	assert.deepEqual(mapCheckpoints([{ text: 'go', at: 1001 }, { text: 'go', at: 1999 }], twice).map((c) => c?.id), ['G1', 'G2']);
	// A checkpoint far from the message's time is not its own (its own is gone).
	assert.deepEqual(mapCheckpoints([{ text: 'go', at: 1000 + 10 * 60_000 }], twice).map((c) => c?.id), [undefined]);
	// No checkpoints (off): none.
	assert.deepEqual(mapCheckpoints([{ text: 'a' }], []), [undefined]);
});

test('a rewind of the files turns the changed-files card\'s Undo off (its snapshots are out of date)', () => {
	const chat = new ChatModel();
	chat.setChanges(1, [{ path: '/w/a.txt', before: 'one\n', state: 'changed' }]);
	assert.equal(chat.changesItem()?.current, true);
	chat.retireChanges();
	assert.equal(chat.changesItem(), undefined);
	assert.deepEqual(chat.all().map((i) => i.kind === 'changes' && i.current), [false]);
});

test('the diff document and the report say what a rewind takes back, what it did and what it left (with why)', () => {
	const c = cp('X', 'tidy the notes', 0, { incomplete: true, reason: 'bash changed files pid could not keep' });
	const doc = diffDocument(c, [{ path: '/w/a.txt', change: 'modified', diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n' }, { path: '/w/new.txt', change: 'added', diff: '' }], '/w');
	assert.match(doc, /^# Rewind to before "tidy the notes"\n/);
	assert.match(doc, /# Some changes since cannot be taken back: bash changed files pid could not keep/);
	assert.match(doc, /#   modified a\.txt\n#   added new\.txt\n/);
	assert.match(doc, /\n-one\n\+two\n/);
	assert.match(diffDocument(cp('Y', 'p', 0), []), /No file has changed since this message/);
	const r = rewindReport('tidy the notes', 'both', { restored: ['/w/a.txt'], removed: ['/w/new.txt'], skipped: [{ path: '/w/b.txt', reason: 'it changed since pid last wrote it (pass force to restore it anyway)' }], safetyCheckpointId: 'S' }, '/w');
	assert.equal(r.level, 'warning');
	assert.equal(r.text, 'Rewound to before "tidy the notes": restored a.txt; removed new.txt; the conversation goes on from just before it. Left as it is: b.txt (it changed since pid last wrote it).');
	assert.equal(skipReason('it changed since pid last wrote it (pass force to restore it anyway)'), 'it changed since pid last wrote it');
	assert.equal(rewindReport('p', 'files', { restored: [], removed: [], skipped: [], safetyCheckpointId: 'S' }).text, 'Rewound to before "p": no file needed restoring.');
});

test('against pid: each prompt\'s message gets its checkpoint; the diff since one; a rewind of both redraws the chat and puts the file back; the same text asked again maps to its new checkpoint; a file changed by hand is left until forced', T, async (t) => {
	const h = start(t, {
		workspace: true,
		session: {
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'one\n' } }] },
					{ content: text('wrote one') },
					{ content: [{ type: 'toolCall', id: 'w2', name: 'write', arguments: { path: 'a.txt', content: 'two\n' } }] },
					{ content: text('wrote two') },
					{ content: [{ type: 'toolCall', id: 'w3', name: 'write', arguments: { path: 'b.txt', content: 'three\n' } }] },
					{ content: text('wrote three') },
				],
			},
		},
	});
	const file = path.join(h.ws, 'a.txt');
	const fileB = path.join(h.ws, 'b.txt');
	const ask = async (p: string) => assert.equal((await within(h.c.ask(p), `the prompt "${p}"`, STEP_TIMEOUT_MS))?.state, 'done', h.ui.lines.join('\n'));
	await ask('write one');
	await ask('make it two');
	const users = () => h.c.chat.userItems();
	assert.deepEqual(users().map((u) => u.text), ['write one', 'make it two']);
	const [first, second] = users();
	assert.ok(first.checkpointId && second.checkpointId && first.checkpointId !== second.checkpointId, `each message has its own checkpoint: ${JSON.stringify(users())}`);
	assert.equal(typeof second.at, 'number', 'pid\'s timestamp of the message is kept');

	// The diff since before "make it two": a.txt from one to two.
	const plan = await h.c.rewindPlan(second.id);
	assert.equal(plan.checkpoint.id, second.checkpointId);
	assert.equal(plan.checkpoint.prompt, 'make it two');
	assert.deepEqual(plan.files.map((f) => [path.basename(f.path), f.change]), [['a.txt', 'modified']]);
	assert.match(plan.files[0].diff, /-one\n\+two/);

	// Both: the file is one again, the chat has only the first exchange, and says what happened.
	const r = await h.c.rewind(plan, 'both');
	assert.deepEqual(r.restored.map((p) => path.basename(p)), ['a.txt']);
	assert.deepEqual(r.skipped, []);
	assert.equal(fs.readFileSync(file, 'utf8'), 'one\n');
	assert.deepEqual(users().map((u) => u.text), ['write one'], 'the chat was redrawn from session/load');
	assert.equal(users()[0].checkpointId, first.checkpointId, 'the kept message keeps its checkpoint');
	const notices = h.c.chat.all().filter((i) => i.kind === 'notice').map((i) => (i.kind === 'notice' ? i.text : ''));
	assert.ok(notices.includes('Rewound to before "make it two": restored a.txt; the conversation goes on from just before it.'), notices.join('\n'));
	assert.ok(!h.c.chat.all().some((i) => i.kind === 'assistant' && i.text === 'wrote two'), 'the rewound answer left the chat');

	// The same text again: its own, new checkpoint (not the rewound one).
	await ask('make it two');
	const again = users()[1];
	assert.ok(again.checkpointId && again.checkpointId !== second.checkpointId, `the new message maps to its new checkpoint: ${again.checkpointId} vs ${second.checkpointId}`);
	assert.equal(fs.readFileSync(fileB, 'utf8'), 'three\n');

	// A change by hand after pid's write: a rewind of the files leaves it, saying why; forced, it goes (pid added it).
	fs.writeFileSync(fileB, 'by hand\n');
	const plan2 = await h.c.rewindPlan(again.id);
	assert.deepEqual(plan2.files.map((f) => [path.basename(f.path), f.change]), [['b.txt', 'added']]);
	const r2 = await h.c.rewind(plan2, 'files');
	assert.deepEqual(r2.skipped.map((s) => path.basename(s.path)), ['b.txt']);
	assert.match(r2.skipped[0].reason, /changed since pid last wrote it/);
	assert.equal(fs.readFileSync(fileB, 'utf8'), 'by hand\n');
	assert.ok(h.c.chat.all().some((i) => i.kind === 'notice' && i.level === 'warning' && /Left as it is: b\.txt \(it changed since pid last wrote it\)\./.test(i.text)), JSON.stringify(h.c.chat.all().filter((i) => i.kind === 'notice')));
	assert.equal(users().length, 2, 'a rewind of the files keeps the conversation');
	const r3 = await h.c.rewind(plan2, 'files', true);
	assert.deepEqual(r3.skipped, []);
	assert.deepEqual(r3.removed.map((p) => path.basename(p)), ['b.txt']);
	assert.ok(!fs.existsSync(fileB));
	assert.equal(fs.readFileSync(file, 'utf8'), 'one\n');
	await h.shutdown();
});

test('against pid: a command template typed as `/greet bob` is one message shown as typed, with its checkpoint; redrawn after a rewind, and in the rewind\'s words, it is still `/greet bob`', T, async (t) => {
	const h = start(t, {
		workspace: true,
		session: {
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'hi.txt', content: 'hello bob\n' } }] },
					{ content: text('greeted') },
					{ content: text('second answer') },
				],
			},
		},
	});
	fs.mkdirSync(path.join(h.xdg, 'config', 'pid', 'commands'), { recursive: true });
	fs.writeFileSync(path.join(h.xdg, 'config', 'pid', 'commands', 'greet.md'), '---\ndescription: Greet someone\n---\nWrite a greeting for $ARGUMENTS into hi.txt.\n');
	const ask = async (p: string) => assert.equal((await within(h.c.ask(p), `the prompt "${p}"`, STEP_TIMEOUT_MS))?.state, 'done', h.ui.lines.join('\n'));
	await ask('/greet bob');
	const users = () => h.c.chat.userItems();
	assert.deepEqual(users().map((u) => [u.text, u.sent]), [['/greet bob', 'Write a greeting for bob into hi.txt.']], 'one message, as typed (pid\'s prompt made of it kept apart)');
	assert.ok(users()[0].checkpointId, 'it has its checkpoint (which names the prompt pid made of it)');
	await ask('and then?');
	const plan = await h.c.rewindPlan(users()[1].id);
	await h.c.rewind(plan, 'conversation');
	assert.deepEqual(users().map((u) => u.text), ['/greet bob'], 'redrawn from session/load: still as typed');
	const first = await h.c.rewindPlan(users()[0].id);
	await h.c.rewind(first, 'files');
	const notices = h.c.chat.all().filter((i) => i.kind === 'notice').map((i) => (i.kind === 'notice' ? i.text : ''));
	assert.ok(notices.some((n) => n.startsWith('Rewound to before "/greet bob": removed hi.txt')), notices.join('\n'));
	await h.shutdown();
});

test('against pid: a file changed by hand since pid wrote it is said before the choice (the plan\'s skip, the diff document), and the chat\'s report offers "Restore them anyway", which puts it back', T, async (t) => {
	const h = start(t, {
		workspace: true,
		session: {
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'pid a\n' } }, { type: 'toolCall', id: 'w2', name: 'write', arguments: { path: 'b.txt', content: 'pid b\n' } }] },
					{ content: text('wrote both') },
				],
			},
		},
	});
	assert.equal((await within(h.c.ask('write both'), 'the prompt', STEP_TIMEOUT_MS))?.state, 'done', h.ui.lines.join('\n'));
	fs.writeFileSync(path.join(h.ws, 'b.txt'), 'by hand\n');
	const plan = await h.c.rewindPlan(h.c.chat.userItems()[0].id);
	const skips = Object.fromEntries(plan.files.map((f) => [path.basename(f.path), f.skip]));
	assert.deepEqual(skips, { 'a.txt': undefined, 'b.txt': 'it changed since pid last wrote it (pass force to restore it anyway)' });
	assert.equal(skipped(plan.files, h.ws), 'Left as it is: b.txt (it changed since pid last wrote it)');
	assert.match(diffDocument(plan.checkpoint, plan.files, h.ws), /#   added b\.txt: LEFT AS IT IS \(it changed since pid last wrote it; "Restore them anyway" in the chat's report puts it back too\)/);

	await h.c.rewind(plan, 'files');
	assert.ok(!fs.existsSync(path.join(h.ws, 'a.txt')), 'a.txt, only pid\'s, removed');
	assert.equal(fs.readFileSync(path.join(h.ws, 'b.txt'), 'utf8'), 'by hand\n');
	const report = h.c.chat.all().filter((i) => i.kind === 'notice').pop();
	assert.ok(report && report.kind === 'notice');
	assert.deepEqual(report.actions, [{ label: 'Restore them anyway', action: 'restoreAnyway', arg: plan.checkpoint.id }], 'the button is in the chat');
	const r = await h.c.restoreAnyway(plan.checkpoint.id);
	assert.deepEqual(r.skipped, []);
	assert.ok(!fs.existsSync(path.join(h.ws, 'b.txt')), 'b.txt, which pid added, removed once forced');
	const last = h.c.chat.all().filter((i) => i.kind === 'notice').pop();
	assert.ok(last && last.kind === 'notice' && last.actions.length === 0, 'no button after a forced rewind');
	await h.shutdown();
});

test('against pid: the run\'s changed-files card lists what a command created too (the checkpoint\'s list), with pid\'s diff for Open diff and no Undo', T, async (t) => {
	const h = start(t, {
		workspace: true,
		session: {
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'a\n' } }, { type: 'toolCall', id: 'b1', name: 'bash', arguments: { command: 'printf "made\\n" > made.txt' } }] },
					{ content: text('done') },
				],
			},
		},
	});
	assert.equal((await within(h.c.ask('write and make'), 'the prompt', STEP_TIMEOUT_MS))?.state, 'done', h.ui.lines.join('\n'));
	assert.equal(fs.readFileSync(path.join(h.ws, 'made.txt'), 'utf8'), 'made\n', h.ui.lines.join('\n'));
	const card = h.c.chat.changesItem();
	assert.ok(card, 'a changed-files card');
	assert.deepEqual(card.files.map((f) => f.label), ['a.txt', 'made.txt']);
	const made = card.files[1];
	assert.deepEqual([made.created, made.untracked], [true, true], 'made by a command: from the checkpoint, no Undo');
	const diff = await h.c.runFileDiff(made.path);
	assert.match(diff ?? '', /\+made/, diff);
	await h.shutdown();
});
