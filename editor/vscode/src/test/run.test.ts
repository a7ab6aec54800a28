// The run model alone, fed notifications by hand (the daemon tests feed it real ones).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Run, argsSummary, shorten, type Entry } from '../run';

const text = (s: string) => [{ type: 'text', text: s }];

test('notifications of other sessions are ignored; log messages are kept', () => {
	const seen: Entry[] = [];
	const r = new Run('s1', 'hi', (e) => seen.push(e));
	assert.equal(r.handle('toolStart', { sessionId: 's2', toolCallId: 'x', toolName: 'read', args: {} }), false);
	assert.equal(r.handle('window/logMessage', { type: 2, message: 'hook failed' }), true);
	assert.equal(r.handle('agentStart', { sessionId: 's1' }), true);
	assert.deepEqual(r.lines(), ['> hi', '! pid warning: hook failed']);
	assert.deepEqual(seen, r.entries, 'every entry is passed on as it is added');
});

test('tool output: short on one line, long indented and cut', () => {
	const r = new Run('s1', 'hi');
	r.handle('toolStart', { sessionId: 's1', toolCallId: 'c', toolName: 'read', args: { path: 'a.go', offset: 3, long: 'x\ny' } });
	const long = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
	r.handle('toolEnd', { sessionId: 's1', toolCallId: 'c', toolName: 'read', result: { content: text(long) }, isError: false });
	assert.equal(r.lines()[1], '[c] read started path="a.go" offset=3 long="x"…');
	assert.equal(r.lines()[2], `[c] read done\n${Array.from({ length: 8 }, (_, i) => `    l${i}`).join('\n')}\n    … (12 more lines)`);
	assert.equal(r.tools.get('c')?.output, long, 'the state keeps the whole output');
});

test('assistant text with tool calls, a failed model call, the end', () => {
	const r = new Run('s1', 'hi');
	r.handle('messageEnd', { sessionId: 's1', message: { role: 'assistant', content: [...text('Let me look.'), { type: 'toolCall', id: 'c', name: 'ls', arguments: {} }] } });
	r.handle('messageEnd', { sessionId: 's1', message: { role: 'assistant', content: [], stopReason: 'error', errorMessage: 'OpenAI rejected the API key' } });
	r.finish({ stopReason: 'error', messages: [] });
	assert.deepEqual(r.lines().slice(1), ['pid: Let me look.', '! OpenAI rejected the API key', '— failed (error) —']);
	assert.equal(r.state, 'failed');
});

test('helpers', () => {
	assert.equal(shorten('a\nb\nc\n', 2), 'a\nb\n… (1 more line)');
	assert.equal(shorten('x'.repeat(10), 5, 4), 'xxxx…');
	assert.equal(argsSummary({ edits: [{}, {}], n: 1, ok: true, o: {} }), 'edits=[2] n=1 ok=true');
	assert.equal(argsSummary('raw'), '"raw"');
});
