// The chat view's modules without pid or VS Code: the chat model fed pid's notifications in
// the orders pid sends them (streamed answers, tool cards, approvals, queued messages), the
// markdown it renders (nothing of the model's HTML survives), the errors in VS Code's words,
// context blocks, Undo's snapshots and Review's proposed content.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import * as rpc from 'vscode-jsonrpc/node';
import { ALLOW, ALWAYS_ALLOW, DENY, question } from '../approval';
import { ChangeTracker, changedSpan, type FileAccess } from '../changes';
import { ChatModel, lastLine, viewOf, type ChatEvent, type ToolItem } from '../chat';
import { blocksAsText, diagnosticsChip, fileChip, selectionChip, sliceLines } from '../context';
import { formContent, formFields } from '../elicit';
import { friendlyError, modelError } from '../errors';
import { renderMarkdown, safeLink } from '../markdown';
import { proposedContent } from '../proposed';
import type { BeforeToolCallParams } from '../protocol';

const S = 's1';
const delta = (contentIndex: number, d: string, type = 'text_delta') => ({ sessionId: S, delta: { type, contentIndex, delta: d } });
const assistant = (t: string) => ({ sessionId: S, message: { role: 'assistant', content: [{ type: 'text', text: t }], stopReason: 'stop' } });

test('markdown: rendered, with every tag of the model shown as text, unsafe links and images as text', () => {
	assert.equal(renderMarkdown('**bold** and `code`'), '<p><strong>bold</strong> and <code>code</code></p>\n');
	const html = renderMarkdown('<script>alert(1)</script>\n\n<img src=x onerror=alert(1)> <b>x</b>');
	assert.doesNotMatch(html, /<script|<img|<b>/);
	assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
	// Links: web and mail only, opened through the extension (data-href), never navigated.
	assert.match(renderMarkdown('[site](https://example.com/a?b=1&c=2)'), /^<p><a href="#" data-href="https:\/\/example\.com\/a\?b=1&amp;c=2" title="[^"]+">site<\/a><\/p>/);
	assert.doesNotMatch(renderMarkdown('[x](javascript:alert(1))'), /<a /);
	assert.doesNotMatch(renderMarkdown('[x](file:///etc/passwd)'), /<a /);
	assert.equal(safeLink(' HTTPS://x'), true);
	assert.equal(safeLink('vscode://x'), false);
	// Images are never loaded: their description and address as text.
	assert.equal(renderMarkdown('![a cat](https://x/cat.png)'), '<p><span class="md-image">[image: a cat — https://x/cat.png]</span></p>\n');
	// Code blocks keep their text escaped and name their language; an odd info string names none.
	assert.equal(
		renderMarkdown('```ts\nconst a = "<b>";\n```'),
		'<div class="code-block"><span class="code-lang">ts</span><pre><code class="language-ts">const a = &quot;&lt;b&gt;&quot;;\n</code></pre></div>\n',
	);
	assert.doesNotMatch(renderMarkdown('```"><script>\nx\n```'), /<script|class="language-/);
	// While it streams, an unclosed fence is a code block up to the end.
	assert.match(renderMarkdown('look:\n\n```py\nprint(1)\n'), /<pre><code class="language-py">print\(1\)\n<\/code><\/pre>/);
});

test('chat: an answer streams into one item, re-rendered as it grows, and ends complete', () => {
	const chat = new ChatModel();
	const events: ChatEvent[] = [];
	chat.onEvent((e) => events.push(e));
	chat.userPrompt('hi');
	chat.runStarted();
	assert.equal(chat.state.status, 'working');
	chat.handle('messageStart', { sessionId: S, message: { role: 'assistant', content: [] } });
	chat.handle('messageUpdate', delta(0, 'Hello **wor'));
	const a = chat.all().find((i) => i.kind === 'assistant');
	assert.ok(a && a.kind === 'assistant');
	assert.equal(a.text, 'Hello **wor');
	assert.equal(a.streaming, true);
	chat.handle('messageUpdate', delta(0, 'ld**'));
	chat.handle('messageUpdate', delta(1, 'hmm', 'thinking_delta'));
	assert.equal(a.text, 'Hello **world**');
	assert.equal(a.thinking, 'hmm');
	assert.equal(viewOf(a).html, '<p>Hello <strong>world</strong></p>\n');
	// Each delta told the view about the same item.
	assert.equal(events.filter((e) => e.type === 'upsert' && e.item.id === a.id).length, 4);
	chat.handle('messageEnd', assistant('Hello **world**'));
	assert.equal(a.streaming, false);
	assert.equal(a.thinking, '', 'the final message is what counts (it had no thinking)');
	// pid's echo of the person's message is not shown twice.
	chat.handle('messageEnd', { sessionId: S, message: { role: 'user', content: [{ type: 'text', text: 'hi' }] } });
	chat.runEnded('done');
	assert.deepEqual(chat.all().map((i) => i.kind), ['user', 'assistant']);
	assert.equal(chat.state.status, 'idle');
	assert.equal(chat.state.running, false);
});

test('chat: a tool card is updated in place: its latest output line, its result, its status', () => {
	const chat = new ChatModel();
	chat.folder = '/ws';
	chat.runStarted();
	chat.handle('toolStart', { sessionId: S, toolCallId: 'b', toolName: 'bash', args: { command: 'npm test\n--watch' } });
	const t = chat.tool('b') as ToolItem;
	assert.equal(t.title, '$ npm test …');
	assert.equal(t.status, 'preparing');
	chat.handle('toolExecutionStart', { sessionId: S, toolCallId: 'b' });
	assert.equal(t.status, 'running');
	chat.handle('$/toolUpdate', { sessionId: S, toolCallId: 'b', partialResult: { content: [{ type: 'text', text: 'line 1\nline 2\n\n' }] } });
	assert.equal(t.lastLine, 'line 2', 'the latest line, not the first');
	chat.handle('$/toolUpdate', { sessionId: S, toolCallId: 'b', partialResult: { content: [{ type: 'text', text: 'line 1\nline 2\n3 passed\n' }] } });
	assert.equal(t.lastLine, '3 passed');
	chat.handle('toolEnd', { sessionId: S, toolCallId: 'b', toolName: 'bash', result: { content: [{ type: 'text', text: 'all\n3 passed' }] }, isError: false });
	assert.equal(t.status, 'done');
	assert.equal(t.output, 'all\n3 passed', 'the full output is kept');
	assert.equal(chat.all().filter((i) => i.kind === 'tool').length, 1, 'one card for the call');
	// A path inside the folder is shown relative and opens the absolute file.
	chat.handle('toolStart', { sessionId: S, toolCallId: 'r', toolName: 'read', args: { path: '/ws/src/a.ts' } });
	assert.equal(chat.tool('r')?.title, 'src/a.ts');
	assert.equal(chat.tool('r')?.path, '/ws/src/a.ts');
	// The run ends with the read still running: it did not finish.
	chat.runEnded('aborted');
	assert.equal(chat.tool('r')?.status, 'cancelled');
	assert.equal(lastLine(`${'x'.repeat(400)}\n`).length, 301);
});

test('chat: an approval puts the chat in "approval" at once; Allow always only when offered; Deny keeps its reason', async () => {
	const chat = new ChatModel();
	chat.runStarted();
	const params: BeforeToolCallParams = {
		sessionId: S,
		toolCallId: 'c1',
		toolName: 'bash',
		args: { command: 'npm test' },
		always: { tool: 'bash', pattern: 'npm test', description: 'bash commands starting with `npm test` in this workspace' },
	};
	const states: string[] = [];
	chat.onEvent((e) => e.type === 'state' && states.push(chat.state.status));
	const answered = chat.askApproval(params, question(params), false);
	assert.equal(chat.state.status, 'approval', 'waiting for the answer as soon as it is asked');
	assert.deepEqual(states, ['approval']);
	const t = chat.tool('c1') as ToolItem;
	assert.equal(t.status, 'waiting');
	assert.equal(t.approval?.always, 'bash commands starting with `npm test` in this workspace', "exactly pid's description");
	assert.equal(t.approval?.detail, '$ npm test');
	assert.deepEqual(chat.pendingApprovals(), ['c1']);
	assert.equal(chat.answerApproval('other', ALLOW), false, 'no question for another call');
	assert.equal(chat.answerApproval('c1', 'Yes'), false, 'not a choice');
	assert.equal(chat.answerApproval('c1', DENY, '  use make test  '), true);
	assert.deepEqual(await answered, { choice: DENY, reason: 'use make test' });
	assert.equal(t.approval?.state, 'denied');
	assert.equal(t.approval?.reason, 'use make test');
	assert.equal(chat.state.status, 'working');
	assert.equal(chat.answerApproval('c1', ALLOW), false, 'answered once');

	// Without always, Allow always is refused; a withdrawn question resolves undefined.
	const p2: BeforeToolCallParams = { sessionId: S, toolCallId: 'c2', toolName: 'bash', args: { command: 'echo $(date)' } };
	const a2 = chat.askApproval(p2, question(p2), false);
	assert.equal(chat.tool('c2')?.approval?.always, undefined);
	assert.equal(chat.answerApproval('c2', ALWAYS_ALLOW), false);
	chat.withdrawApproval('c2');
	assert.equal(await a2, undefined);
	assert.equal(chat.tool('c2')?.approval?.state, 'withdrawn');
	assert.equal(chat.state.status, 'working');
});

test('chat: messages sent while a run goes wait in the queue until pid takes them, then join the conversation in place', () => {
	const chat = new ChatModel();
	chat.userPrompt('first');
	chat.runStarted();
	chat.handle('messageEnd', { sessionId: S, message: { role: 'user', content: [{ type: 'text', text: 'first' }] } });
	const q = chat.queued('also this', 'steer', 'also this\n\n(file: file:///ws/a.ts)', [{ id: 'x', kind: 'file', label: 'a.ts', title: 'a.ts' }]);
	chat.queued('and later', 'followUp', 'and later');
	assert.deepEqual(chat.queuedItems().map((i) => [i.text, i.queued]), [['also this', 'steer'], ['and later', 'followUp']]);
	// An answer arriving meanwhile goes before the queued messages.
	chat.handle('messageEnd', assistant('one'));
	assert.deepEqual(chat.all().map((i) => (i.kind === 'user' ? `${i.text}${i.queued ? ' (queued)' : ''}` : i.kind)), ['first', 'assistant', 'also this (queued)', 'and later (queued)']);
	// pid takes the steered one (the text it was sent, context included).
	chat.handle('messageEnd', { sessionId: S, message: { role: 'user', content: [{ type: 'text', text: 'also this\n\n(file: file:///ws/a.ts)' }] } });
	const items = chat.all();
	assert.deepEqual(items.map((i) => (i.kind === 'user' ? `${i.text}${i.queued ? ' (queued)' : ''}` : i.kind)), ['first', 'assistant', 'also this', 'and later (queued)']);
	const taken = items[2];
	assert.ok(taken.kind === 'user' && taken.chips.length === 1 && taken.id !== q.id, 'shown with its chips, as a new item');
	chat.unqueue(chat.queuedItems()[0]);
	assert.equal(chat.queuedItems().length, 0);

	// A prompt with context: pid's echo is the text, then the context's blocks; shown once.
	const c2 = new ChatModel();
	c2.userPrompt('why?', [{ id: 'x', kind: 'selection', label: 'a.py:1-2', title: '' }]);
	c2.runStarted();
	c2.handle('messageEnd', { sessionId: S, message: { role: 'user', content: [{ type: 'text', text: 'why?' }, { type: 'text', text: 'a.py (lines 1-2), as the editor has it:\n```\nx\n```' }] } });
	assert.deepEqual(c2.all().map((i) => i.kind === 'user' && [i.text, i.chips.map((c) => c.label)]), [['why?', ['a.py:1-2']]]);
});

test('chat: the files a run changed are listed once it ends; a later run marks the list old', () => {
	const chat = new ChatModel();
	chat.folder = '/ws';
	chat.runStarted();
	chat.setChanges(1, [{ path: '/ws/a.txt', before: 'old', state: 'changed' }, { path: '/ws/new.txt', before: undefined, state: 'changed' }]);
	assert.equal(chat.changesItem(), undefined, 'not while the run goes');
	chat.runEnded('done');
	const c = chat.changesItem();
	assert.deepEqual(c?.files.map((f) => [f.label, f.created]), [['a.txt', false], ['new.txt', true]]);
	assert.equal(c?.current, true);
	chat.setChanges(1, [{ path: '/ws/a.txt', before: 'old', state: 'undone' }, { path: '/ws/new.txt', before: undefined, state: 'changed' }]);
	assert.equal(c?.files[0].state, 'undone', 'updated in place');
	chat.runStarted();
	assert.equal(c?.current, false);
});

test('errors: pid\'s setup reasons become what to change in VS Code (pid.model) or in the settings file', () => {
	const err = (message: string, data?: unknown) => new rpc.ResponseError(-32602, message, data);
	const noModel = friendlyError(err('pid has no model for this session: ...', { reason: 'noModel', setting: 'model', file: '/home/me/.config/pid/settings.json' }), 'start');
	assert.match(noModel.message, /^pid has no model to use\. Set "pid\.model" in Settings, e\.g\. .* \(or "model" in \/home\/me\/\.config\/pid\/settings\.json\)/);
	assert.deepEqual(noModel.actions.map((a) => [a.kind, a.setting ?? a.path]), [['openSettings', 'pid.model'], ['openFile', '/home/me/.config/pid/settings.json']]);

	const key = friendlyError(err('The model ... needs an API key', { reason: 'apiKeyMissing', setting: 'model', field: 'apiKeyEnv', variable: 'ANTHROPIC_API_KEY' }));
	assert.match(key.message, /set the environment variable ANTHROPIC_API_KEY where VS Code is started .* "apiKeyEnv" in "pid\.model"/);
	assert.deepEqual(key.actions.map((a) => a.setting), ['pid.model']);

	const invalid = friendlyError(err('the model your editor gave pid: "provider" is "nope": use "openai" or "anthropic"', { reason: 'invalidModel', setting: 'model', field: 'provider' }));
	assert.equal(invalid.message, 'pid cannot use the model it was given: fix "provider" of "pid.model" in Settings. pid says: the model of "pid.model" (or picked with "pid: Pick Model"): "provider" is "nope": use "openai" or "anthropic"');
	assert.doesNotMatch(invalid.message, /initializationOptions|session\/new/);

	const untrusted = friendlyError(err('...', { reason: 'untrustedSetting', setting: 'model', folder: '/ws', file: '/ws/.pid/settings.json' }));
	assert.match(untrusted.message, /^The workspace folder \/ws sets "model" in \/ws\/\.pid\/settings\.json, but pid does not trust that folder.*"pid: Trusted Folders".*"pid\.model" in Settings \(or "model" in ~\/\.config\/pid\/settings\.json\)/);
	assert.deepEqual(untrusted.actions.map((a) => a.kind), ['trustedFolders', 'openSettings']);

	// Without data: pid's known words, else its message with protocol fields renamed.
	assert.match(friendlyError(new Error('no OpenAI API key: set OPENAI_API_KEY, or name ...')).message, /OPENAI_API_KEY where VS Code is started/);
	assert.equal(friendlyError(new Error('initializationOptions.model is not an object'), 'start').message, 'pid could not start: "pid.model" is not an object');
	assert.match(friendlyError(new rpc.ResponseError(rpc.ErrorCodes.MethodNotFound, 'unknown method models/list'), 'list the models').message, /older than the extension and cannot list the models: update pid/);
	assert.equal(modelError('HTTP 500 from the server').message, 'HTTP 500 from the server');
});

test('context: a selection is a resource naming its lines; queued messages carry context as text; fs reads take line and limit', () => {
	const sel = selectionChip('/ws/src/a.ts', '/ws', { start: 10, end: 12 }, 'x\ny\nz');
	assert.equal(sel.label, 'src/a.ts:10-12');
	assert.deepEqual(sel.block, { type: 'resource', resource: { uri: 'file:///ws/src/a.ts#L10-L12', text: 'x\ny\nz' } });
	assert.deepEqual(fileChip('/ws/b.md', '/ws').block, { type: 'resource_link', uri: 'file:///ws/b.md', name: 'b.md' });
	assert.deepEqual(fileChip('/ws/b.md', '/ws', 'unsaved').block, { type: 'resource', resource: { uri: 'file:///ws/b.md', text: 'unsaved' } });
	const probs = diagnosticsChip('/ws/a.ts', '/ws', [{ line: 3, column: 5, severity: 'error', message: 'Cannot find\n name "x".', source: 'ts', code: '2304' }]);
	assert.equal(probs.label, 'Problems in a.ts (1)');
	assert.deepEqual(probs.block, { type: 'text', text: 'VS Code reports 1 problem in a.ts:\n- line 3, column 5: error: Cannot find name "x". (ts 2304)' });
	assert.equal(blocksAsText([sel.block, fileChip('/ws/b.md', '/ws').block]), 'file:///ws/src/a.ts#L10-L12:\n```\nx\ny\nz\n```\n\n(file: file:///ws/b.md)');
	assert.equal(blocksAsText([{ type: 'resource', resource: { uri: 'u', text: 'has ``` in it\n' } }]), 'u:\n````\nhas ``` in it\n````');
	assert.equal(sliceLines('a\r\nb\nc\nd', 2, 2), 'b\nc\n');
	assert.equal(sliceLines('a\nb\nc', 3), 'c');
	assert.equal(sliceLines('a\nb', undefined, undefined), 'a\nb');
	assert.equal(sliceLines('a\nb', 5, 1), '');
});

test('Undo: the text before the run\'s first change comes back; a file the run created is removed', async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-undo-'));
	try {
		const io: FileAccess = {
			read: (p) => (fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined),
			write: async (p, t) => fs.promises.writeFile(p, t),
			remove: async (p) => fs.promises.rm(p),
		};
		const tr = new ChangeTracker(io);
		const a = path.join(dir, 'a.txt');
		const n = path.join(dir, 'new.txt');
		fs.writeFileSync(a, 'before');
		tr.begin();
		tr.willChange(a);
		fs.writeFileSync(a, 'first change');
		tr.changed(a);
		tr.willChange(a); // a second change of the run: the snapshot stays the first one
		fs.writeFileSync(a, 'second change');
		tr.changed(a);
		tr.willChange(n);
		fs.writeFileSync(n, 'new');
		tr.changed(n);
		assert.deepEqual(tr.list().map((f) => [path.basename(f.path), f.before]), [['a.txt', 'before'], ['new.txt', undefined]]);
		assert.deepEqual(tr.before(a), { existed: true, text: 'before' });
		await tr.undo(a);
		await tr.undo(n);
		assert.equal(fs.readFileSync(a, 'utf8'), 'before');
		assert.equal(fs.existsSync(n), false);
		assert.deepEqual(tr.list().map((f) => f.state), ['undone', 'undone']);
		await assert.rejects(tr.undo(path.join(dir, 'other')), /did not change/);
		// The next run starts a new list.
		tr.begin();
		assert.deepEqual(tr.list(), []);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test('Review: what an edit or a write would leave, from the editor\'s text; edits pid would refuse say why', () => {
	assert.deepEqual(proposedContent('edit', { path: 'a', edits: [{ oldText: 'b', newText: 'B' }] }, 'abc'), { ok: true, path: 'a', content: 'aBc', created: false });
	assert.deepEqual(proposedContent('edit', { path: 'a', oldText: 'x\ny', newText: 'z\nw' }, 'x\r\ny\r\n'), { ok: true, path: 'a', content: 'z\r\nw\r\n', created: false });
	assert.deepEqual(proposedContent('write', { path: 'n', content: 'hi' }, undefined), { ok: true, path: 'n', content: 'hi', created: true });
	const twice = proposedContent('edit', { path: 'a', edits: [{ oldText: 'a', newText: 'b' }] }, 'aa');
	assert.equal(twice.ok, false);
	assert.match(twice.ok ? '' : twice.error, /occurs 2 times/);
	assert.equal(proposedContent('bash', { path: 'a' }, '').ok, false);
});

test('MCP questions: the schema as a form, its answers checked, and the chat\'s question answered once', async () => {
	const schema = {
		type: 'object',
		properties: {
			name: { type: 'string', title: 'Your name', minLength: 2 },
			count: { type: 'integer', minimum: 1, maximum: 5, default: 2 },
			color: { type: 'string', enum: ['r', 'g'], enumNames: ['Red', 'Green'] },
			ok: { type: 'boolean' },
			nested: { type: 'object' },
		},
		required: ['name', 'color'],
	};
	const fields = formFields(schema);
	assert.deepEqual(fields.map((f) => [f.name, f.label, f.type, f.required]), [
		['name', 'Your name', 'string', true],
		['count', 'count', 'integer', false],
		['color', 'color', 'enum', true],
		['ok', 'ok', 'boolean', false],
	]);
	assert.deepEqual(formContent(fields, { name: 'x', count: '2.5', color: 'b' }), {
		ok: false,
		problems: ['Your name must have at least 2 characters.', 'count must be a whole number.', 'color must be one of Red, Green.'],
	});
	assert.deepEqual(formContent(fields, { name: 'Ada', count: '', color: 'g', ok: true }), { ok: true, content: { name: 'Ada', color: 'g', ok: true } });

	const chat = new ChatModel();
	let withdraw: () => void = () => {};
	const answer = chat.askElicitation({ message: 'Who?', requestedSchema: schema, _meta: { pid: { server: 'db' } } } as never, (cb) => (withdraw = cb));
	assert.equal(chat.state.status, 'approval');
	const item = chat.all().find((i) => i.kind === 'elicitation');
	assert.ok(item?.kind === 'elicitation' && item.server === 'db');
	assert.deepEqual(chat.answerElicitation(item.id, 'accept', { name: '' }), ['Your name is required.', 'color is required.']);
	assert.equal(item.state, 'pending', 'still asked, with the problems shown');
	assert.equal(chat.answerElicitation(item.id, 'accept', { name: 'Ada', color: 'r' }), undefined);
	assert.deepEqual(await answer, { action: 'accept', content: { name: 'Ada', color: 'r' } });
	assert.equal(chat.state.status, 'idle');
	withdraw();
	assert.equal(item.state, 'accepted', 'a withdrawal after the answer changes nothing');
	assert.deepEqual(chat.answerElicitation(item.id, 'decline'), ['no such question']);
});

test('changedSpan: only what differs is replaced, never half a character or half a CRLF', () => {
	const apply = (b: string, a: string) => {
		const s = changedSpan(b, a);
		return b.slice(0, s.start) + s.text + b.slice(s.end);
	};
	assert.deepEqual(changedSpan('saved\nunsaved line\n', 'saved\nedited by pid\n'), { start: 6, end: 18, text: 'edited by pid' });
	assert.deepEqual(changedSpan('same', 'same'), { start: 4, end: 4, text: '' });
	assert.deepEqual(changedSpan('', 'new'), { start: 0, end: 0, text: 'new' });
	assert.deepEqual(changedSpan('aaa', 'aa'), { start: 2, end: 3, text: '' });
	// A CRLF file where a line is inserted: the CR and LF stay together.
	const crlf = changedSpan('a\r\nb\r\n', 'a\r\nx\r\nb\r\n');
	assert.notEqual('a\r\nb\r\n'[crlf.start], '\n');
	for (const [b, a] of [['a\r\nb\r\n', 'a\r\nx\r\nb\r\n'], ['x😀y', 'x😁y'], ['ab', 'ba'], ['abcabc', 'abc'], ['\r\n', '\n']]) {
		assert.equal(apply(b, a), a, `${JSON.stringify(b)} -> ${JSON.stringify(a)}`);
		const s = changedSpan(b, a);
		assert.ok(!isSplit(b, s.start) && !isSplit(b, s.end), `${JSON.stringify(b)}: ${JSON.stringify(s)}`);
	}
});

/** isSplit reports whether offset i of s falls inside a surrogate pair or a CRLF. */
function isSplit(s: string, i: number): boolean {
	const c = s.charCodeAt(i);
	return (c >= 0xdc00 && c <= 0xdfff) || (s[i] === '\n' && s[i - 1] === '\r');
}
