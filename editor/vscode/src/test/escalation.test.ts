// Leaving the sandbox, said out loud (issue 31): a bash call with `unsandboxed: true` asks
// with beforeToolCall's `sandbox: {escalation: true, justification}`; the chat shows it as a
// question of its own (the warning title, what it means, the justification, what the sandbox
// refused before, the command, "always" only for exactly this command), and the card of a call
// that ran outside says so (toolEnd details.sandbox.escalated). A denial's reason goes to pid
// as typed: pid frames it for the model ("The user denied this call of NAME: REASON").

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ALWAYS_ALLOW, CHOICES, CHOICES_ONCE, type ApprovalQuestion } from '../approval';
import { ChatModel, viewOf, type ToolItem } from '../chat';
import type { ToolResultMessage } from '../protocol';
import { start, text } from './harness';

const T = { timeout: 60_000 };

const call = (id: string, command: string, justification?: string) => ({
	type: 'toolCall',
	id,
	name: 'bash',
	arguments: justification === undefined ? { command } : { command, unsandboxed: true, justification },
});

test('against pid, in auto mode: the question to leave the sandbox (title, justification, what the sandbox refused, the command, always only for exactly the command), the cards that ran outside, a denial\'s reason sent as typed', T, async (t) => {
	const one = 'touch ../outside.txt';
	const two = 'mkdir -p ../outside && touch ../outside/f';
	// The scripted UI allows e1 once and e2 always; e4 is answered on its card (below).
	const answers: Record<string, string> = { e1: 'Allow', e2: ALWAYS_ALLOW };
	const h = start(t, {
		workspace: true,
		answer: (q: ApprovalQuestion) => (q.toolCallId in answers ? answers[q.toolCallId] : new Promise<undefined>(() => {})),
		session: {
			mode: 'auto',
			toolExecution: 'sequential',
			model: {
				provider: 'script',
				turns: [
					{ content: [call('s1', one)] },
					{ content: [call('e1', one, 'The file belongs next to the workspace,\nnot in it.')] },
					{ content: [call('e2', two, 'Same place, two steps.')] },
					{ content: [call('e3', two, 'Again.')] },
					{ content: [call('e4', 'touch ../denied.txt', 'One more.')] },
					{ content: text('Done outside.') },
				],
			},
		},
	});
	// e4: Deny on its card, with a reason typed there.
	const chat = h.c.chat;
	chat.onEvent((e) => {
		if (e.type === 'upsert' && e.item.kind === 'tool' && e.item.toolCallId === 'e4' && e.item.approval?.state === 'pending') {
			setImmediate(() => chat.answerApproval('e4', 'Deny', 'keep it in the workspace'));
		}
	});
	const run = await h.c.ask('write next to the workspace');
	assert.ok(run);
	assert.equal(run.state, 'done', run.lines().join('\n'));

	// The calls: s1 refused in the sandbox (with pid's note), e1-e3 ran outside, e4 denied.
	const results = (run.result?.messages ?? []).filter((m): m is ToolResultMessage => m.role === 'toolResult');
	const textOf = (m: ToolResultMessage) => m.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
	assert.deepEqual(results.map((m) => [m.toolCallId, m.isError]), [['s1', true], ['e1', false], ['e2', false], ['e3', false], ['e4', true]]);
	assert.match(textOf(results[0]), /\[pid's sandbox \(workspace-write\) may have refused this\./);
	assert.ok(fs.existsSync(path.join(h.tmp, 'outside.txt')), 'e1 wrote outside the workspace');
	assert.ok(fs.existsSync(path.join(h.tmp, 'outside', 'f')), 'e2 wrote outside the workspace');
	assert.ok(!fs.existsSync(path.join(h.tmp, 'denied.txt')), 'e4 did not run');

	// The questions: e1, e2 and e4 (e3 repeats e2, allowed always for the session).
	assert.deepEqual(h.ui.asked.map((a) => a.q.toolCallId), ['e1', 'e2', 'e4']);
	const [q1, q2] = h.ui.asked.map((a) => a.q);
	assert.equal(q1.title, 'Run outside the sandbox?');
	assert.deepEqual(q1.escalation, { justification: 'The file belongs next to the workspace,\nnot in it.', command: one });
	assert.deepEqual(q1.choices, CHOICES, 'always: pid scopes an escalation to exactly its command');
	assert.equal(q1.always?.description, `exactly the bash command \`${one}\`, run outside the sandbox, for this session`);
	assert.match(q1.detail, /Why, in the model's words:\n> The file belongs next to the workspace,\n> not in it\.\n\n\$ touch \.\.\/outside\.txt\n/);
	assert.deepEqual(q2.choices, CHOICES, 'always for a command pid scopes exactly');
	assert.equal(q2.always?.description, `exactly the bash command \`${two}\`, run outside the sandbox, for this session`);

	// The cards, as the chat view gets them.
	const card = (id: string) => viewOf(chat.tool(id) as ToolItem) as ToolItem;
	const e1 = card('e1');
	assert.equal(e1.approval?.title, 'Run outside the sandbox?');
	assert.equal(e1.approval?.detail, `$ ${one}`);
	assert.equal(e1.approval?.always, q1.always?.description);
	const esc = e1.approval?.escalation;
	assert.ok(esc, 'the approval is an escalation');
	assert.equal(esc.justification, 'The file belongs next to the workspace,\nnot in it.');
	assert.equal(esc.means, 'pid asks to run this command without its sandbox: with all your rights (it can change or delete any file you can) and with the network.');
	assert.ok(esc.refused, 'what the sandbox refused before');
	assert.equal(esc.refused.command, one);
	assert.match(esc.refused.lines.join('\n'), /touch: cannot touch '\.\.\/outside\.txt': (Permission denied|Read-only file system)\nCommand exited with code 1\./);
	assert.match(esc.refused.note, /^pid's sandbox \(workspace-write\) may have refused this\. Writable: .* The network goes through pid's proxy only, to the hosts the user allowed \(a refused host is named above\)\.$/);
	assert.doesNotMatch(esc.refused.note, /unsandboxed|justification/, "the note's words for the model are left out");
	const e2 = card('e2');
	assert.equal(e2.approval?.always, q2.always?.description);
	assert.equal(e2.approval?.state, 'allowedAlways');
	assert.equal(e2.approval?.escalation?.refused?.command, one, 'the newest refusal of the session');
	assert.deepEqual(['s1', 'e1', 'e2', 'e3', 'e4'].map((id) => [id, card(id).status, card(id).escalated === true]), [
		['s1', 'failed', false],
		['e1', 'done', true],
		['e2', 'done', true],
		['e3', 'done', true],
		['e4', 'denied', false],
	]);
	assert.equal(e1.approval?.state, 'allowed');
	assert.ok(run.lines().some((l) => l.startsWith('[e1] bash done (ran outside the sandbox)')), run.lines().join('\n'));

	// The denial: the reason went to pid as typed, and the model reads it framed once (by pid, or bare from a pid that does not frame it).
	const denied = run.entries.find((e) => e.kind === 'approvalAnswered' && e.toolCallId === 'e4');
	assert.deepEqual(denied?.answer, { decision: 'deny', reason: 'keep it in the workspace' });
	assert.match(textOf(results[4]), /^(The user denied this call of bash: )?keep it in the workspace\.?$/);
	await h.shutdown();
});

test('the chat: a subagent asking to leave the sandbox is shown its own refusal, not its parent\'s; a loaded transcript keeps the mark', () => {
	const chat = new ChatModel();
	const note = (cmd: string) =>
		`${cmd}: Permission denied\n\nCommand exited with code 1.\n\n[pid's sandbox (workspace-write) may have refused this. Writable: /ws. The network is off. If the command needs more, call bash again with unsandboxed: true and a justification; the user will be asked.]`;
	chat.runStarted();
	chat.handle('toolStart', { sessionId: 'p', toolCallId: 'b1', toolName: 'bash', args: { command: 'parent-cmd' } });
	chat.handle('toolEnd', { sessionId: 'p', toolCallId: 'b1', toolName: 'bash', result: { content: text(note('parent-cmd')) }, isError: true });
	chat.handle('toolStart', { sessionId: 'p', toolCallId: 't1', toolName: 'task', args: { description: 'Look', prompt: 'x', agent: 'general' } });
	chat.handle('subagentStart', { sessionId: 'p', toolCallId: 't1', childSessionId: 'k', description: 'Look', agent: 'general' });
	chat.handleChild('k', 'toolStart', { sessionId: 'k', toolCallId: 'c1', toolName: 'bash', args: { command: 'child-cmd' } });
	chat.handleChild('k', 'toolEnd', { sessionId: 'k', toolCallId: 'c1', toolName: 'bash', result: { content: text(note('child-cmd')) }, isError: true });
	const params = { sessionId: 'k', parentSessionId: 'p', toolCallId: 'c2', toolName: 'bash', args: { command: 'child-cmd', unsandboxed: true, justification: 'x' }, sandbox: { escalation: true, justification: 'x' } };
	const q: ApprovalQuestion = { toolCallId: 'c2', toolName: 'bash', title: 'Run outside the sandbox?', detail: '', choices: CHOICES_ONCE, escalation: { justification: 'x', command: 'child-cmd' } };
	void chat.askApproval(params, q, false);
	assert.equal(chat.tool('k/c2')?.approval?.escalation?.refused?.command, 'child-cmd');
	void chat.askApproval({ ...params, sessionId: 'p', parentSessionId: undefined, toolCallId: 'b2' }, { ...q, toolCallId: 'b2' }, false);
	assert.equal(chat.tool('b2')?.approval?.escalation?.refused?.command, 'parent-cmd');

	chat.showTranscript([
		{ role: 'assistant', content: [{ type: 'toolCall', id: 'x1', name: 'bash', arguments: { command: 'touch ../a', unsandboxed: true } }], stopReason: 'toolUse' },
		{ role: 'toolResult', toolCallId: 'x1', toolName: 'bash', content: text('(no output)'), isError: false, details: { sandbox: { mode: 'off', network: true, escalated: true } } },
	] as never);
	assert.equal(chat.tool('x1')?.escalated, true);
	assert.equal(chat.tool('x1')?.status, 'done');
});
