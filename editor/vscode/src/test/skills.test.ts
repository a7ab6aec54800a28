// Skills and agent files (issue 39): `/skills` and `/agents` are the extension's own
// commands, in the `/` completion, answered from pid's skills/list and agents/list; the pure
// texts, then the controller against the real pid.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { BUILTIN_COMMANDS, ChatModel, type ChatItem } from '../chat';
import { listText, localCommand, worktreeConflicts } from '../skills';
import { start, until } from './harness';

const T = { timeout: 60_000 };

test('listText: those in use with their notes, then those left out with why; localCommand knows only /skills and /agents', () => {
	const text = listText('skills', [
		{ name: 'deploy', description: 'Deploys\nthe app', path: '/w/.agents/skills/deploy/SKILL.md', source: 'workspace', warnings: ['"allowed-tools" is ignored'] },
		{ name: 'deploy', description: 'Mine', path: '/h/.claude/skills/deploy/SKILL.md', source: 'user', ignored: 'the workspace skill "deploy" is used instead' },
	]);
	assert.equal(
		text,
		[
			'Skills in use:',
			'- `/deploy`: Deploys the app (workspace: /w/.agents/skills/deploy/SKILL.md)',
			'  - note: "allowed-tools" is ignored',
			'',
			'Left out:',
			'- deploy (/h/.claude/skills/deploy/SKILL.md): the workspace skill "deploy" is used instead',
		].join('\n'),
	);
	assert.match(listText('agents', []), /^No agent is in use\.\npid reads agent files in \.claude\/agents/);
	assert.equal(localCommand(' /skills '), 'skills');
	assert.equal(localCommand('/agents'), 'agents');
	assert.equal(localCommand('/skills deploy'), undefined);
	assert.ok(BUILTIN_COMMANDS.some((c) => c.name === 'skills') && BUILTIN_COMMANDS.some((c) => c.name === 'agents'));
});

test("a task's card: its child works in a worktree, and the files its merge left unapplied", () => {
	const chat = new ChatModel();
	chat.handle('toolStart', { sessionId: 's', toolCallId: 't1', toolName: 'task', args: { description: 'one', agent: 'general' } });
	chat.handle('subagentStart', { sessionId: 's', toolCallId: 't1', childSessionId: 'c1', description: 'one', agent: 'general', worktree: '/state/pid/worktrees/s/c1' });
	const details = { worktree: { path: '/state/pid/worktrees/s/c1', applied: [], conflicts: [{ path: '/w/f.txt', reason: 'same lines', hunks: [] }] } };
	chat.handle('toolEnd', { sessionId: 's', toolCallId: 't1', toolName: 'task', result: { content: [{ type: 'text', text: 'edited' }], details }, isError: false });
	const card = chat.all().find((i) => i.kind === 'tool') as Extract<ChatItem, { kind: 'tool' }>;
	assert.equal(card.subagent?.worktree, '/state/pid/worktrees/s/c1');
	assert.deepEqual(card.subagent?.conflicts, ['/w/f.txt']);
	assert.deepEqual(worktreeConflicts({ worktree: { conflicts: [{ path: 'a' }, { nope: 1 }] } }), ['a']);
	assert.deepEqual(worktreeConflicts(undefined), []);
});

test('against pid: /skills and /agents show the lists as command output without calling the model; the completion keeps them with the skills\' own commands', T, async (t) => {
	const h = start(t, { session: { model: { provider: 'script', turns: [] } } });
	const skill = path.join(h.xdg, 'config', 'pid', 'skills', 'deploy');
	fs.mkdirSync(skill, { recursive: true });
	fs.writeFileSync(path.join(skill, 'SKILL.md'), '---\ndescription: Deploys the app\nallowed-tools: Bash\n---\nRun make deploy.\n');
	const agents = path.join(h.xdg, 'config', 'pid', 'agents');
	fs.mkdirSync(agents, { recursive: true });
	fs.writeFileSync(path.join(agents, 'reviewer.md'), '---\ndescription: Reviews code\ntools: Read, Grep\n---\nReview.\n');
	const chat = h.c.chat;

	assert.equal(await h.c.ask('/skills'), undefined, 'no run: nothing went to the model');
	let out = chat.all().filter((i) => i.kind === 'command').pop() as Extract<ChatItem, { kind: 'command' }>;
	assert.equal(out.name, 'skills');
	assert.equal(out.isError, false);
	assert.match(out.text, /^Skills in use:\n- `\/deploy`: Deploys the app \(user: .*deploy\/SKILL\.md\)\n {2}- note: "allowed-tools" is ignored/);

	await h.c.ask('/agents');
	out = chat.all().filter((i) => i.kind === 'command').pop() as Extract<ChatItem, { kind: 'command' }>;
	assert.equal(out.name, 'agents');
	assert.match(out.text, /^Agents in use:\n- `reviewer`: Reviews code \(user: .*reviewer\.md\)/);

	await until(() => (chat.state.commands ?? []).some((c) => c.name === 'deploy'), "the skill's command in the completion");
	const names = (chat.state.commands ?? []).map((c) => c.name);
	assert.ok(names.includes('skills') && names.includes('agents'), names.join(', '));
});
