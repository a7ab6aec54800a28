// Subagents in the chat (issue 27): a task call's child session is shown on the task's card,
// its steps (the child's own tool calls, which come with the child's sessionId) folded under
// it and never as the parent's; a child's approval is asked on its step, says which task asks
// and is answered there, even when the child's call ids repeat the parent's.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ChatModel, type ToolItem } from '../chat';
import { start, until } from './harness';

const T = { timeout: 60_000 };

test('the chat routes a child\'s notifications to its task card; the same call id in parent and child stays two cards', () => {
	const chat = new ChatModel();
	chat.handle('toolStart', { sessionId: 'p', toolCallId: 'c1', toolName: 'task', args: { description: 'Look around', prompt: 'x', agent: 'explore' } });
	assert.equal(chat.isChild('k'), false);
	chat.handle('subagentStart', { sessionId: 'p', toolCallId: 'c1', childSessionId: 'k', description: 'Look around', agent: 'explore' });
	assert.equal(chat.isChild('k'), true);
	chat.handleChild('k', 'toolStart', { sessionId: 'k', toolCallId: 'c1', toolName: 'grep', args: { pattern: 'func Add' } });
	chat.handleChild('k', 'toolEnd', { sessionId: 'k', toolCallId: 'c1', toolName: 'grep', result: { content: [{ type: 'text', text: 'a.go:1' }] }, isError: false });
	const task = chat.tool('c1') as ToolItem;
	const step = chat.tool('k/c1') as ToolItem;
	assert.equal(task.toolName, 'task');
	assert.equal(task.title, 'Look around (explore)');
	assert.deepEqual(task.subagent, { childSessionId: 'k', description: 'Look around', agent: 'explore', state: 'running', steps: 1 });
	assert.equal(step.parentId, task.id);
	assert.equal(step.status, 'done');
	assert.equal(step.output, 'a.go:1');
	assert.equal(task.status, 'preparing', 'the child\'s end is not the task\'s');
	chat.handle('subagentEnd', { sessionId: 'p', toolCallId: 'c1', childSessionId: 'k', stopReason: 'maxTurns' });
	assert.equal(task.subagent?.state, 'maxTurns');
});

test('against pid: a general child\'s write asks on its step under the task card (which task asks), answered in the chat; the task ends with the child\'s answer', T, async (t) => {
	const h = start(t, {
		workspace: true,
		// The chat answers: the UI's own question never does.
		answer: () => new Promise<undefined>(() => {}),
		session: {
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'c1', name: 'task', arguments: { description: 'Write the note', prompt: 'write note.txt', agent: 'general' } }] },
					{ content: [{ type: 'text', text: 'The child wrote it.' }] },
				],
				subagents: {
					'Write the note': {
						provider: 'script',
						turns: [
							// The same call id as the parent's task call.
							{ content: [{ type: 'toolCall', id: 'c1', name: 'write', arguments: { path: 'note.txt', content: 'from the child\n' } }] },
							{ content: [{ type: 'text', text: 'CHILD-ANSWER: note.txt written' }] },
						],
					},
				},
			},
		},
		cwd: undefined,
	});
	const chat = h.c.chat;
	const asked = h.c.ask('delegate the note');
	await until(() => chat.firstPendingApproval() !== undefined, 'the child\'s write to ask');
	const step = chat.firstPendingApproval() as ToolItem;
	const task = chat.tool('c1') as ToolItem;
	assert.equal(task.toolName, 'task');
	assert.ok(task.subagent, 'subagentStart reached the task card');
	const child = task.subagent.childSessionId;
	assert.equal(step.toolCallId, `${child}/c1`, 'the child\'s call, apart from the parent\'s c1');
	assert.equal(step.toolName, 'write');
	assert.equal(step.parentId, task.id, 'folded under the task card');
	assert.equal(step.askedBy, 'the subagent of the task "Write the note" (general)');
	assert.equal(chat.state.status, 'approval');
	assert.ok(chat.answerApproval(step.toolCallId, 'Allow'), 'answered on its card');

	const run = await asked;
	assert.equal(run?.state, 'done');
	assert.equal(fs.readFileSync(path.join(h.ws, 'note.txt'), 'utf8'), 'from the child\n');
	assert.equal(step.status, 'done');
	assert.equal(step.approval?.state, 'allowed');
	assert.equal(task.status, 'done');
	assert.match(task.output ?? '', /CHILD-ANSWER/, 'the task\'s result is the child\'s answer');
	assert.equal(task.subagent.state, 'stop');
	assert.equal(task.subagent.steps, 1);
	// The child's messages are not the parent's conversation.
	const answers = chat.all().filter((i) => i.kind === 'assistant').map((i) => (i.kind === 'assistant' ? i.text : ''));
	assert.deepEqual(answers, ['The child wrote it.']);
	const tools = chat.all().filter((i): i is ToolItem => i.kind === 'tool');
	assert.deepEqual(tools.map((i) => [i.toolName, i.parentId === undefined ? 'top' : 'under']), [['task', 'top'], ['write', 'under']]);
	await h.shutdown();
});
