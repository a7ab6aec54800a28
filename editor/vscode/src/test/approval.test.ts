// The approval module alone: questions (a call asking to leave the sandbox among them), diffs,
// answers, and the sandbox note read from a result (no daemon needed).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALLOW, ALWAYS_ALLOW, CHOICES, CHOICES_ONCE, DENY, MAX_DIFF_LINES, MAX_LINE_CHARS, answer, editDiff, question, writeDiff } from '../approval';
import { escalated, refusal } from '../escalation';
import type { AlwaysScope } from '../protocol';

const scoped: AlwaysScope = { tool: 't', description: 'every call of the tool t in this workspace' };
// always: null for a request without params.always.
const ask = (toolName: string, args: unknown, always: AlwaysScope | null = scoped) => question({ sessionId: 's1', toolCallId: 'c1', toolName, args, always: always ?? undefined });

test('write: the new content as added lines', () => {
	const q = ask('write', { path: 'src/a.go', content: 'package a\n\nfunc A() {}\n' });
	assert.equal(q.title, 'pid wants to write src/a.go');
	assert.equal(q.diff, '+++ src/a.go (whole new content, 3 lines)\n+package a\n+\n+func A() {}');
	assert.ok(q.detail.includes(`${q.diff}\n\n`), q.detail);
	assert.deepEqual(q.choices, ['Allow', 'Always allow', 'Deny']);
	assert.equal(writeDiff('e.txt', ''), '+++ e.txt (whole new content, 0 lines)\n(empty file)');
	assert.equal(writeDiff('n.txt', 'no final newline'), '+++ n.txt (whole new content, 1 line)\n+no final newline');
});

test('edit: each replacement as removed and added lines, in both argument forms', () => {
	const q = ask('edit', { path: 'a.txt', edits: [{ oldText: 'a\nb', newText: 'A' }, { oldText: 'z', newText: '' }] });
	assert.equal(q.title, 'pid wants to edit a.txt');
	assert.equal(q.diff, '--- a.txt\n+++ a.txt\n@@ edit 1 of 2 @@\n-a\n-b\n+A\n@@ edit 2 of 2 @@\n-z');
	assert.match(q.detail, /2 replacements/);
	const legacy = ask('edit', { path: 'a.txt', oldText: 'x', newText: 'y' });
	assert.equal(legacy.diff, '--- a.txt\n+++ a.txt\n@@ edit 1 of 1 @@\n-x\n+y');
	assert.equal(editDiff('p', [{ oldText: 'o\n', newText: 'n\n' }]), '--- p\n+++ p\n@@ edit 1 of 1 @@\n-o\n+n');
});

test('malformed write and edit arguments fall back to showing the arguments', () => {
	for (const [tool, args] of [['write', { path: 'a' }], ['edit', { path: 'a', edits: [{ oldText: 1 }] }], ['edit', { path: 'a', edits: [] }], ['write', 'not an object'], ['edit', null]] as const) {
		const q = ask(tool, args);
		assert.equal(q.diff, undefined, `${tool} ${JSON.stringify(args)}`);
		assert.ok(q.detail.includes(JSON.stringify(args, null, 2)), q.detail);
	}
});

test('long diffs and lines are cut with a note', () => {
	const content = Array.from({ length: 500 }, (_, i) => `line ${i} ${'x'.repeat(i === 0 ? 1000 : 0)}`).join('\n');
	const diff = ask('write', { path: 'big', content }).diff as string;
	const ls = diff.split('\n');
	assert.equal(ls.length, MAX_DIFF_LINES + 1);
	assert.equal(ls.at(-1), `… ${500 + 1 - MAX_DIFF_LINES} more lines`);
	assert.equal(ls[1].length, MAX_LINE_CHARS + 1);
	assert.ok(ls[1].endsWith('…'));
});

test('bash shows the command; other tools their arguments', () => {
	const b = ask('bash', { command: 'rm -rf build', timeout: 5 });
	assert.equal(b.title, 'pid wants to run a command');
	assert.match(b.detail, /\$ rm -rf build/);
	assert.match(b.detail, /"timeout": 5/);
	const o = ask('deploy', { env: 'prod' });
	assert.equal(o.title, 'pid wants to run deploy');
	assert.match(o.detail, /"env": "prod"/);
	assert.equal(ask('fast', { path: 'x' }).title, 'pid wants to run fast on x');
});

test('"Always allow" is offered only with params.always, and the detail says what it covers', () => {
	const npm: AlwaysScope = { tool: 'bash', pattern: 'npm test', description: 'bash commands starting with `npm test` in this workspace' };
	const withScope = ask('bash', { command: 'npm test' }, npm);
	assert.deepEqual(withScope.choices, [ALLOW, ALWAYS_ALLOW, DENY]);
	assert.deepEqual(withScope.always, npm);
	assert.ok(withScope.detail.endsWith('\n\nAlways allow covers: bash commands starting with `npm test` in this workspace.'), withScope.detail);

	const without = ask('bash', { command: 'echo $(date)' }, null);
	assert.deepEqual(without.choices, [ALLOW, DENY]);
	assert.equal(without.always, undefined);
	assert.match(without.detail, /\$ echo \$\(date\)\n\nAlways allow is not offered: pid cannot limit it to calls like this one\.$/);

	// A malformed always (no description, not an object) is treated as absent.
	for (const bad of [{ tool: 'bash' }, { tool: 'bash', description: '  ' }, 'bash', null, []]) {
		const q = question({ sessionId: 's1', toolCallId: 'c1', toolName: 'bash', args: { command: 'ls' }, always: bad as unknown as AlwaysScope });
		assert.deepEqual(q.choices, CHOICES_ONCE, JSON.stringify(bad));
	}
	// The pattern is optional (a scope of the whole tool).
	assert.deepEqual(ask('fast', {}).always, scoped);
});

test('answers: the choices map to decisions; dismissed and unknown deny with what happened, never a sentence around it (pid frames denials)', () => {
	assert.deepEqual(CHOICES, [ALLOW, ALWAYS_ALLOW, DENY]);
	assert.deepEqual(answer(ALLOW, 't'), { decision: 'allow' });
	assert.deepEqual(answer(ALWAYS_ALLOW, 't'), { decision: 'allowAlways' });
	assert.deepEqual(answer(DENY, 't'), { decision: 'deny' });
	assert.deepEqual(answer(undefined, 't'), { decision: 'deny', reason: 'the question was dismissed without an answer' });
	assert.deepEqual(answer('Cancel', 't'), { decision: 'deny', reason: 'the answer was none of the choices offered' });
	// A choice that was not offered (Always allow without a scope) denies.
	assert.deepEqual(answer(ALWAYS_ALLOW, 't', CHOICES_ONCE), { decision: 'deny', reason: 'the answer was none of the choices offered' });
	assert.deepEqual(answer(ALLOW, 't', CHOICES_ONCE), { decision: 'allow' });
	for (const c of [undefined, 'Cancel', DENY]) {
		assert.doesNotMatch(answer(c, 'bash').reason ?? '', /user|denied|bash/i, `${c}: no frame of the client's own`);
	}
});

test('a call asking to leave the sandbox: its own title, what it means, the justification quoted, the command; "Always allow" only when pid scoped it to exactly this command', () => {
	const esc = (command: string, always: AlwaysScope | null, justification = 'needs the registry') =>
		question({ sessionId: 's1', toolCallId: 'e1', toolName: 'bash', args: { command, unsandboxed: true, justification }, sandbox: { escalation: true, justification }, ...(always ? { always } : {}) });
	const wide: AlwaysScope = { tool: 'bash', pattern: 'npm install', description: 'bash commands starting with `npm install` in this workspace, run outside the sandbox, for this session' };
	const q = esc('npm install', wide, 'needs the registry\nfor the lock file');
	assert.equal(q.title, 'Run outside the sandbox?');
	assert.deepEqual(q.choices, CHOICES_ONCE, 'no always: the scope covers every npm install');
	assert.equal(q.always, undefined);
	assert.deepEqual(q.escalation, { justification: 'needs the registry\nfor the lock file', command: 'npm install', wider: wide.description });
	assert.equal(
		q.detail,
		'pid asks to run this command without its sandbox: with all your rights (it can change or delete any file you can) and with the network.\n\n' +
			"Why, in the model's words:\n> needs the registry\n> for the lock file\n\n$ npm install\n\n" +
			`Always allow is not offered: it would cover more than this command (${wide.description}).`,
	);
	const exact: AlwaysScope = { tool: 'bash', pattern: 'mkdir d && touch d/f', description: 'exactly the bash command `mkdir d && touch d/f` in this workspace, run outside the sandbox, for this session' };
	const qe = esc('mkdir d && touch d/f', exact, '  ');
	assert.deepEqual(qe.choices, CHOICES);
	assert.deepEqual(qe.always, exact);
	assert.match(qe.detail, /Why, in the model's words:\n\(the model gave no reason\)\n\n\$ mkdir d && touch d\/f\n\nAlways allow covers: exactly the bash command `mkdir d && touch d\/f` in this workspace, run outside the sandbox, for this session\.$/);
	const none = esc('echo $(date) > ../x', null);
	assert.deepEqual(none.choices, CHOICES_ONCE);
	assert.match(none.detail, /Always allow is not offered: pid cannot limit it to this command\.$/);
	// Without the flag, a bash call is the usual question.
	assert.equal(ask('bash', { command: 'npm install', unsandboxed: true }).title, 'pid wants to run a command');
});

test("refusal: pid's sandbox note read from a bash result (the output's last lines, the note without its words for the model); escalated from details", () => {
	const text =
		"step 1\nstep 2\ntouch: cannot touch '../x': Permission denied\n\nCommand exited with code 1.\n\n" +
		"[pid's sandbox (workspace-write) may have refused this. Writable: /ws, /tmp/s (but .git/config stay read-only there). The network is off. If the command needs more, call bash again with unsandboxed: true and a justification; the user will be asked.]";
	assert.deepEqual(refusal(text), {
		lines: ['step 2', "touch: cannot touch '../x': Permission denied", 'Command exited with code 1.'],
		note: "pid's sandbox (workspace-write) may have refused this. Writable: /ws, /tmp/s (but .git/config stay read-only there). The network is off.",
	});
	assert.equal(refusal('Permission denied\n\nCommand exited with code 1.'), undefined, 'no note, no refusal');
	assert.equal(refusal(undefined), undefined);
	assert.equal(escalated({ sandbox: { mode: 'off', network: true, escalated: true } }), true);
	for (const d of [{ sandbox: { mode: 'workspace-write', network: false } }, { sandbox: { escalated: 'yes' } }, undefined, null, 'x']) {
		assert.equal(escalated(d), false, JSON.stringify(d));
	}
});
