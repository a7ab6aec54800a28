// The controller with the real pid for what the chat view adds: files read and written
// through the editor (fs/read_text_file, fs/write_text_file: unsaved text seen, edits handed
// to the editor, never written to disk under it), context sent as content blocks, the model
// picker (models/list, session/setModel), setup errors in VS Code's words, and after a crash a
// Resume that continues the same session.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ALLOW, ALWAYS_ALLOW } from '../approval';
import { selectionChip } from '../context';
import type { EditorFiles } from '../controller';
import { contentText, type Message } from '../protocol';
import { STEP_TIMEOUT_MS, ask, start, text, until, within } from './harness';

const T = { timeout: 60_000 };

/** A stand-in editor: open buffers (unsaved text) by path, and the writes it was handed. */
function fakeEditor() {
	const buffers = new Map<string, string>();
	const reads: string[] = [];
	const writes: [string, string][] = [];
	const files: EditorFiles = {
		read(p) {
			reads.push(p);
			return buffers.get(p) ?? fs.readFileSync(p, 'utf8');
		},
		async write(p, content) {
			writes.push([p, content]);
			buffers.set(p, content);
		},
	};
	return { buffers, reads, writes, files };
}

test('files through the editor: pid reads the unsaved text, its edit of that text goes to the editor, the disk is left to the editor', T, async (t) => {
	const ed = fakeEditor();
	const h = start(t, {
		workspace: true,
		editorFiles: ed.files,
		answer: () => 'Allow',
		session: {
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'r1', name: 'read', arguments: { path: 'notes.md' } }] },
					// Only the editor's text has "unsaved": on disk this edit would fail.
					{ content: [{ type: 'toolCall', id: 'e1', name: 'edit', arguments: { path: 'notes.md', edits: [{ oldText: 'unsaved', newText: 'edited' }] } }] },
					{ content: text('done') },
				],
			},
		},
	});
	const file = path.join(fs.realpathSync(h.ws), 'notes.md');
	fs.writeFileSync(file, 'saved\n');
	ed.buffers.set(file, 'saved\nunsaved\n');

	const run = await ask(h, 'edit my notes');
	assert.equal(run.state, 'done', h.ui.lines.join('\n'));
	const results = (run.result?.messages ?? []).filter((m) => m.role === 'toolResult');
	assert.deepEqual(results.map((m) => [m.toolCallId, m.isError]), [['r1', false], ['e1', false]]);
	assert.match(contentText(results[0].content), /saved\n.*unsaved/s, 'the read returned the editor\'s text');
	assert.ok(ed.reads.includes(file), 'pid asked the editor');
	assert.deepEqual(ed.writes, [[file, 'saved\nedited\n']], 'the edit was handed to the editor, whole');
	assert.equal(fs.readFileSync(file, 'utf8'), 'saved\n', 'pid did not write the disk under the editor');
	// The chat lists the file as changed by this run.
	assert.deepEqual(h.c.chat.changesItem()?.files.map((f) => f.label), ['notes.md']);
	await h.shutdown();
});

test('context: a selection goes to the model as a block naming the file and its lines, after the text', T, async (t) => {
	const h = start(t, { workspace: true, session: { model: { provider: 'script', turns: [{ content: text('seen') }] } } });
	const ws = fs.realpathSync(h.ws);
	const chip = selectionChip(path.join(ws, 'a.py'), ws, { start: 2, end: 3 }, 'def f():\n    return 1\n');
	const run = await within(h.c.ask('explain this', [chip]), 'the prompt', STEP_TIMEOUT_MS);
	assert.equal(run?.state, 'done', h.ui.lines.join('\n'));
	const user = (run?.result?.messages ?? []).find((m): m is Extract<Message, { role: 'user' }> => m.role === 'user');
	assert.ok(user, 'the run has the user message');
	const said = contentText(user.content);
	assert.ok(said.startsWith('explain this'), said);
	assert.match(said, /a\.py/);
	assert.match(said, /2.*3/, 'the line range');
	assert.match(said, /def f\(\):\n {4}return 1/, 'the selected text');
	// The chat shows the message with its chip; the log names it.
	const shown = h.c.chat.all().filter((i) => i.kind === 'user');
	assert.deepEqual(shown.map((i) => i.kind === 'user' && [i.text, i.chips.map((c) => c.label)]), [['explain this', ['a.py:2-3']]], 'shown once, with its chip');
	assert.ok(h.ui.lines.includes('> explain this [+ a.py:2-3]'), h.ui.lines.join('\n'));
	await h.shutdown();
});

test('the model picker: models/list from the settings, session/setModel makes the next call use the picked one', T, async (t) => {
	const h = start(t, { session: { model: { provider: 'script', id: 'first', turns: [{ content: text('from the first model') }] } } });
	fs.mkdirSync(path.join(h.xdg, 'config', 'pid'), { recursive: true });
	fs.writeFileSync(
		path.join(h.xdg, 'config', 'pid', 'settings.json'),
		JSON.stringify({ models: [{ provider: 'script', id: 'second', name: 'Second model', turns: [{ content: text('from the second model') }] }] }),
	);
	assert.equal((await ask(h, 'one')).answer, 'from the first model');
	await until(() => h.c.chat.state.model === 'script/first', "the Model button to name the session's model");
	const { models, current } = await h.c.models();
	assert.deepEqual(models, [{ provider: 'script', id: 'second', name: 'Second model' }]);
	assert.equal(current?.id, 'first');
	await h.c.setModel(models[0]);
	assert.equal(h.c.chat.state.model, 'Second model');
	assert.equal((await ask(h, 'two')).answer, 'from the second model');
	assert.equal((await h.c.models()).current?.id, 'second');
	// A new session shows no model until it has one: the Model button does not claim the pick.
	h.c.newSession();
	assert.equal(h.c.chat.state.model, undefined);
	await h.shutdown();
});

test('no model anywhere: the prompt fails saying to set pid.model (or the settings file pid names), with buttons for both', T, async (t) => {
	const h = start(t, { workspace: true });
	// The session starts; its first model call finds no model.
	const run = await ask(h, 'hello');
	assert.equal(run.state, 'failed');
	const file = path.join(h.xdg, 'config', 'pid', 'settings.json');
	const notice = h.c.chat.all().find((i) => i.kind === 'notice');
	assert.ok(notice?.kind === 'notice');
	assert.equal(notice.text, `pid has no model to use. Set "pid.model" in Settings, e.g. {"provider": "anthropic", "id": "claude-sonnet-4-5"} (or "model" in ${file}), then send the prompt again.`);
	assert.deepEqual(notice.actions, [
		{ label: 'Open Settings', action: 'openSettings', arg: 'pid.model' },
		{ label: 'Open settings.json', action: 'openFile', arg: file },
	]);
	assert.equal(h.c.chat.state.status, 'idle');
	await h.shutdown();
});

test('pid killed: the chat says the session was saved, with Resume; Resume starts pid again on the same session, which the next prompt continues', T, async (t) => {
	const h = start(t, { session: { model: { provider: 'script', turns: [{ content: text('first answer') }, { content: text('second answer') }] } } });
	assert.equal((await ask(h, 'one')).answer, 'first answer');
	const id = h.c.currentSession;
	assert.ok(id);
	const first = h.c.pid;
	first?.kill();
	await until(() => h.c.stopped === id, 'the controller to know the session stopped');
	const notice = h.c.chat.all().filter((i) => i.kind === 'notice').at(-1);
	assert.ok(notice?.kind === 'notice');
	assert.equal(notice.text, 'pid stopped (killed by SIGKILL); the session was saved. Resume starts pid again and continues it.');
	assert.deepEqual(notice.actions, [{ label: 'Resume', action: 'resume' }]);
	assert.equal(h.c.chat.state.status, 'stopped');

	const loaded = await within(h.c.resumeStopped(), 'Resume', STEP_TIMEOUT_MS);
	assert.equal(loaded?.sessionId, id);
	assert.notEqual(h.c.pid, first, 'a new pid');
	assert.equal(h.c.currentSession, id);
	assert.equal(h.c.stopped, undefined);
	assert.equal(h.c.chat.state.status, 'idle');
	assert.equal(h.c.chat.state.sessionId, id);
	assert.deepEqual(
		h.c.chat.all().filter((i) => i.kind === 'user' || i.kind === 'assistant').map((i) => (i.kind === 'user' || i.kind === 'assistant' ? i.text : '')),
		['one', 'first answer'],
		'the conversation is shown again',
	);
	const run = await ask(h, 'two');
	assert.equal(run.answer, 'second answer');
	assert.equal(run.sessionId, id);
	await h.shutdown();
});

test('remembered answers: Allow always in the chat is listed (permissions/list) with what it covers; forgotten (permissions/revoke), the next such call asks again', T, async (t) => {
	const bash = (id: string) => ({ content: [{ type: 'toolCall', id, name: 'bash', arguments: { command: 'echo hi' } }] });
	const h = start(t, {
		workspace: true,
		// Only the chat answers (the scripted UI's question never settles).
		answer: () => new Promise<undefined>(() => {}),
		session: { model: { provider: 'script', turns: [bash('c1'), { content: text('one') }, bash('c2'), { content: text('two') }, bash('c3'), { content: text('three') }] } },
	});
	const chat = h.c.chat;
	// The first call asks in the chat; Allow always is clicked there.
	const first = h.c.ask('run it');
	await until(() => chat.tool('c1')?.approval?.state === 'pending', 'the question in the chat');
	assert.equal(chat.tool('c1')?.approval?.always, 'bash commands starting with `echo hi` in this workspace');
	assert.equal(chat.answerApproval('c1', ALWAYS_ALLOW), true);
	assert.equal((await within(first, 'the first run', STEP_TIMEOUT_MS))?.answer, 'one');
	const listed = await h.c.permissions();
	assert.deepEqual(listed.map((p) => [p.tool, p.pattern, p.decision, p.scope]), [['bash', 'echo hi', 'allow', `workspace:${fs.realpathSync(h.ws)}`]]);
	// Remembered: the second call runs without a question.
	assert.equal((await ask(h, 'again')).answer, 'two');
	assert.equal(chat.tool('c2')?.approval, undefined, 'not asked');
	await h.c.revokePermission(listed[0].id);
	assert.deepEqual(await h.c.permissions(), []);
	const third = h.c.ask('once more');
	await until(() => chat.tool('c3')?.approval?.state === 'pending', 'the question again');
	chat.answerApproval('c3', ALLOW);
	assert.equal((await within(third, 'the third run', STEP_TIMEOUT_MS))?.answer, 'three');
	await h.shutdown();
});

test('while a run goes, the prompt box queues: a follow-up waits in the chat until pid takes it when the run would stop, then the model answers it in the same run', T, async (t) => {
	const h = start(t, {
		workspace: true,
		// Only the chat answers (the scripted UI's question never settles).
		answer: () => new Promise<undefined>(() => {}),
		session: {
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'a\n' } }] },
					{ content: text('wrote a.txt') },
					{ content: text('and the follow-up') },
				],
			},
		},
	});
	const chat = h.c.chat;
	const running = h.c.ask('write a');
	await until(() => chat.tool('w1')?.approval?.state === 'pending', 'the run to wait for its approval');
	// The prompt box while the run waits: Alt+Enter, a follow-up.
	await within(h.c.send('then say more', 'followUp'), 'the follow-up to be queued', STEP_TIMEOUT_MS);
	assert.deepEqual(chat.queuedItems().map((i) => [i.text, i.queued]), [['then say more', 'followUp']]);
	chat.answerApproval('w1', ALLOW);
	const run = await within(running, 'the run', STEP_TIMEOUT_MS);
	assert.equal(run?.answer, 'and the follow-up', 'the run went on with the follow-up');
	assert.deepEqual(chat.queuedItems(), []);
	assert.deepEqual(
		chat.all().filter((i) => i.kind === 'user' || i.kind === 'assistant').map((i) => (i.kind === 'user' || i.kind === 'assistant' ? i.text : '')),
		['write a', 'wrote a.txt', 'then say more', 'and the follow-up'],
		'the follow-up joined the conversation where pid took it',
	);
	await h.shutdown();
});

test('pid killed during a run: the run ends failed, its running tool card cancelled, and the chat offers Resume of the same session', T, async (t) => {
	const h = start(t, {
		session: {
			model: { provider: 'script', turns: [{ content: [{ type: 'toolCall', id: 's1', name: 'slow', arguments: {} }] }, { content: text('after') }] },
			scriptedTools: [{ name: 'slow', steps: [{ update: { content: text('working\n') } }, { sleepMs: 60_000 }, { result: { content: text('late') } }] }],
		},
	});
	const chat = h.c.chat;
	const running = h.c.ask('go');
	await until(() => chat.tool('s1')?.lastLine === 'working', 'the tool to run');
	const id = h.c.currentSession;
	h.c.pid?.kill();
	const run = await within(running, 'the run to end', STEP_TIMEOUT_MS);
	assert.equal(run?.state, 'failed');
	assert.equal(chat.tool('s1')?.status, 'cancelled');
	await until(() => h.c.stopped === id, 'the session to be kept for Resume');
	const notice = chat.all().filter((i) => i.kind === 'notice').at(-1);
	assert.ok(notice?.kind === 'notice' && notice.text.startsWith('pid stopped (killed by SIGKILL); the session was saved.'), JSON.stringify(notice));
	assert.deepEqual(notice.actions, [{ label: 'Resume', action: 'resume' }]);
	assert.equal(chat.state.status, 'stopped');
	assert.equal(chat.state.running, false);
	const loaded = await within(h.c.resumeStopped(), 'Resume', STEP_TIMEOUT_MS);
	assert.equal(loaded?.sessionId, id);
	assert.equal(chat.state.status, 'idle');
	await h.shutdown();
});

test('pid killed, then a message without Resume: pid starts again and the message continues the same session, never a new one', T, async (t) => {
	const h = start(t, { session: { model: { provider: 'script', turns: [{ content: text('first answer') }, { content: text('second answer') }] } } });
	await ask(h, 'one');
	const id = h.c.currentSession;
	h.c.pid?.kill();
	await until(() => h.c.stopped === id, 'the controller to know the session stopped');
	const run = await ask(h, 'two');
	assert.equal(run.sessionId, id);
	assert.equal(run.answer, 'second answer', 'the saved conversation went on');
	const notices = h.c.chat.all().filter((i) => i.kind === 'notice').map((i) => (i.kind === 'notice' ? i.text : ''));
	assert.ok(notices.some((n) => n.startsWith('pid was started again and the saved session was loaded (2 messages): your message continues it')), notices.join('\n'));
	await h.shutdown();
});

test('a message sent while pid still starts for the prompt waits for it, then steers the run (it is not refused)', T, async (t) => {
	const h = start(t, {
		workspace: true,
		answer: () => new Promise<undefined>(() => {}),
		session: {
			model: {
				provider: 'script',
				turns: [{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'a\n' } }] }, { content: text('took the steer') }],
			},
		},
	});
	const chat = h.c.chat;
	// Both typed at once: pid is not even started when the second arrives.
	const first = h.c.send('write a');
	const second = h.c.send('and b too');
	await within(second, 'the second message to reach pid', STEP_TIMEOUT_MS);
	assert.deepEqual(chat.queuedItems().map((i) => [i.text, i.queued]), [['and b too', 'steer']]);
	await until(() => chat.tool('w1')?.approval?.state === 'pending', 'the approval');
	chat.answerApproval('w1', ALLOW);
	await within(first, 'the run', STEP_TIMEOUT_MS);
	assert.equal(h.c.run, undefined);
	assert.deepEqual(
		chat.all().filter((i) => i.kind === 'user' || i.kind === 'assistant').map((i) => (i.kind === 'user' || i.kind === 'assistant' ? i.text : '')),
		['write a', 'and b too', 'took the steer'],
	);
	await h.shutdown();
});
