// Tests the real pid binary with vscode-jsonrpc, the JSON-RPC library VS Code's language
// clients use: a client nobody on this project wrote. Run with `node --test` from this
// folder (or through run.sh). The binary is $PID_BIN, else ../../bin/pid from this file.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const rpc = require('vscode-jsonrpc/node');

const PID_BIN = process.env.PID_BIN
	? path.resolve(process.env.PID_BIN)
	: path.resolve(__dirname, '../../bin/pid');

// Every wait in this file is bounded: a hung daemon fails the test with a reason.
const STEP_TIMEOUT_MS = 10_000;

function within(promise, what, ms = STEP_TIMEOUT_MS) {
	let timer;
	const timeout = new Promise((_, reject) => {
		timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
	});
	return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// start spawns pid and connects vscode-jsonrpc to its stdio. Notifications are collected in
// arrival order (one log shared with the requests pid sends, so their relative order is kept).
function start(t, { onBeforeToolCall, onShowMessageRequest } = {}) {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const child = spawn(PID_BIN, [], { stdio: ['pipe', 'pipe', 'pipe'] });
	let stderr = '';
	child.stderr.setEncoding('utf8');
	child.stderr.on('data', (d) => { stderr += d; });
	const exited = new Promise((resolve, reject) => {
		child.on('error', reject);
		child.on('exit', (code, signal) => resolve({ code, signal }));
	});

	const conn = rpc.createMessageConnection(
		new rpc.StreamMessageReader(child.stdout),
		new rpc.StreamMessageWriter(child.stdin),
	);
	const log = []; // {kind: 'notification'|'request', method, params}
	conn.onNotification((method, params) => { log.push({ kind: 'notification', method, params }); });
	if (onBeforeToolCall) {
		conn.onRequest('beforeToolCall', (params, token) => {
			log.push({ kind: 'request', method: 'beforeToolCall', params });
			return onBeforeToolCall(params, token);
		});
	}
	if (onShowMessageRequest) {
		conn.onRequest('window/showMessageRequest', (params) => {
			log.push({ kind: 'request', method: 'window/showMessageRequest', params });
			return onShowMessageRequest(params);
		});
	}
	conn.onRequest((method, params) => {
		log.push({ kind: 'request', method, params });
		throw new rpc.ResponseError(rpc.ErrorCodes.MethodNotFound, `test client does not handle ${method}`);
	});
	const connErrors = [];
	conn.onError(([err]) => { connErrors.push(err); });
	conn.listen();

	let done = false;
	t.after(() => {
		if (!done) {
			child.kill('SIGKILL');
		}
		conn.dispose();
	});
	// On failure, show what pid said on stderr and what the client received, line by line.
	let exitStatus = 'still running';
	exited.then(({ code, signal }) => { exitStatus = signal ? `killed by ${signal}` : `exit code ${code}`; }, () => {});
	t.after(() => {
		if (!done) {
			t.diagnostic(`pid (${PID_BIN}): ${exitStatus}`);
			for (const line of stderr.split('\n').filter(Boolean).slice(-40)) {
				t.diagnostic(`pid stderr: ${line}`);
			}
			t.diagnostic(`the client received ${log.length} messages:`);
			for (const e of log) {
				t.diagnostic(`  ${e.kind} ${e.method} ${JSON.stringify(e.params).slice(0, 300)}`);
			}
		}
	});

	return {
		conn,
		log,
		exited,
		connErrors,
		stderr: () => stderr,
		// shutdown ends the session the LSP way and checks that pid exits with code 0.
		async shutdown() {
			const r = await within(conn.sendRequest('shutdown'), 'the shutdown response');
			assert.equal(r, null, 'shutdown answers null');
			await conn.sendNotification('exit');
			const { code, signal } = await within(exited, 'pid to exit after exit');
			assert.equal(signal, null, `pid was killed by ${signal}`);
			assert.equal(code, 0, `pid exit code after shutdown+exit (stderr: ${stderr})`);
			assert.deepEqual(connErrors, [], 'connection errors');
			done = true;
		},
	};
}

function initializeParams(experimentalPid) {
	return {
		processId: process.pid,
		clientInfo: { name: 'vscode-jsonrpc test', version: '1' },
		rootUri: null,
		capabilities: experimentalPid ? { experimental: { pid: experimentalPid } } : {},
	};
}

const text = (s) => [{ type: 'text', text: s }];

// A parallel batch of two calls: a (slow) reports progress and finishes only after b's
// toolEnd was sent; b (fast) needs approval. So toolEnd comes b then a, while the results
// of the transcript stay in source order a then b.
function parallelSession(extra = {}) {
	return {
		cwd: process.cwd(),
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
		// Progress texts end a line: pid holds back an unfinished last word of progress (it
		// may be the first half of a secret).
		scriptedTools: [
			{ name: 'slow', steps: [
				{ update: { content: text('half\n') } },
				{ update: { content: text('three quarters\n') } },
				{ waitForEnd: 'b' },
				{ result: { content: text('slow ok') } },
			] },
			{ name: 'fast', requiresApproval: true, steps: [
				{ result: { content: text('fast ok') } },
			] },
		],
		...extra,
	};
}

const notes = (log) => log.filter((e) => e.kind === 'notification');
const indexOf = (log, pred, what) => {
	const i = log.findIndex(pred);
	assert.notEqual(i, -1, `no ${what} received`);
	return i;
};
const isNote = (method, id) => (e) => e.kind === 'notification' && e.method === method && (id === undefined || e.params.toolCallId === id);

// assertStreaming checks the messageUpdate notifications of a run: each carries its delta,
// and the partial message only with a *_end delta (a block complete), where the block is
// whole; the text_delta deltas of the last assistant message make up its text.
function assertStreaming(log, finalText) {
	const updates = log.filter(isNote('messageUpdate'));
	assert.ok(updates.length > 0, 'messageUpdate notifications arrived');
	for (const u of updates) {
		const d = u.params.delta;
		assert.equal(typeof d.type, 'string', 'messageUpdate carries its delta');
		assert.equal(typeof d.contentIndex, 'number');
		assert.equal('message' in u.params, d.type.endsWith('_end'), `messageUpdate ${d.type} carries the message only at a block's end`);
		if (d.type === 'text_end') {
			assert.equal(u.params.message.content[d.contentIndex].type, 'text');
		}
	}
	const lastStart = log.findLastIndex((e) => isNote('messageStart')(e) && e.params.message.role === 'assistant');
	const text = log.slice(lastStart).filter((e) => isNote('messageUpdate')(e) && e.params.delta.type === 'text_delta').map((e) => e.params.delta.delta).join('');
	assert.equal(text, finalText, 'the text deltas of the last answer make up its text');
}

// assertExecutionStarts checks that exactly the calls in ran got one toolExecutionStart
// {sessionId, toolCallId, toolName}, after their toolStart (and approval, if any) and before
// their progress and their toolEnd.
function assertExecutionStarts(log, ran, names) {
	const starts = log.filter(isNote('toolExecutionStart'));
	assert.deepEqual(starts.map((e) => e.params.toolCallId).sort(), [...ran].sort(), 'toolExecutionStart for exactly the calls that ran');
	for (const id of ran) {
		const i = indexOf(log, isNote('toolExecutionStart', id), `toolExecutionStart for ${id}`);
		assert.deepEqual(Object.keys(log[i].params).sort(), ['sessionId', 'toolCallId', 'toolName']);
		assert.equal(log[i].params.toolName, names[id]);
		assert.ok(indexOf(log, isNote('toolStart', id), `toolStart for ${id}`) < i, `toolStart ${id} before its toolExecutionStart`);
		assert.ok(i < indexOf(log, isNote('toolEnd', id), `toolEnd for ${id}`), `toolExecutionStart ${id} before its toolEnd`);
		const ask = log.findIndex((e) => e.kind === 'request' && e.params.toolCallId === id);
		assert.ok(ask < i, `the approval of ${id} before its toolExecutionStart`);
		for (let k = 0; k < log.length; k++) {
			if (isNote('$/toolUpdate', id)(log[k])) {
				assert.ok(i < k, `toolExecutionStart ${id} before its progress`);
			}
		}
	}
}

function assertSessionIds(log, sessionId) {
	for (const e of log) {
		if (e.method === 'window/logMessage') {
			continue;
		}
		assert.equal(e.params.sessionId, sessionId, `${e.kind} ${e.method} carries the session id`);
	}
}

test('parallel batch with an approval: completion-order ends, source-order results', async (t) => {
	const approvals = [];
	const c = start(t, {
		onBeforeToolCall: (p) => { approvals.push(p); return { decision: 'allow' }; },
	});

	const init = await within(c.conn.sendRequest('initialize', initializeParams({ beforeToolCall: true })), 'the initialize response');
	assert.equal(init.serverInfo.name, 'pid');
	assert.equal(typeof init.serverInfo.version, 'string');
	assert.equal(init.capabilities.experimental.pid.protocolVersion, '1');
	assert.ok(Array.isArray(init.capabilities.experimental.pid.tools), 'initialize lists tools');
	await c.conn.sendNotification('initialized', {});

	const sess = await within(c.conn.sendRequest('session/new', parallelSession()), 'the session/new response');
	assert.equal(typeof sess.sessionId, 'string');
	// The session has the built-in tools and the two scripted ones.
	const names = sess.tools.map((x) => x.name);
	for (const want of ['read', 'edit', 'bash', 'fast', 'slow']) assert.ok(names.includes(want), `session/new lists ${want}: ${names}`);

	const res = await within(c.conn.sendRequest('session/prompt', { sessionId: sess.sessionId, text: 'go' }), 'the session/prompt response');
	// Snapshot now: whatever arrived after the response would not count.
	const log = c.log.slice();

	assert.equal(res.stopReason, 'stop');
	assertSessionIds(log, sess.sessionId);

	// The approval: asked once, for b only, with the call's arguments.
	assert.equal(approvals.length, 1, 'one beforeToolCall request');
	assert.deepEqual(
		{ toolCallId: approvals[0].toolCallId, toolName: approvals[0].toolName, args: approvals[0].args },
		{ toolCallId: 'b', toolName: 'fast', args: { path: 'x.txt' } },
	);

	// Every notification of the run arrived before the prompt's response: the run's last
	// one (agentEnd) is in the snapshot, and nothing of the session came after it.
	assert.equal(notes(log).at(-1).method, 'agentEnd', 'agentEnd is the last notification before the response');
	assert.equal(notes(log)[0].method, 'agentStart', 'agentStart is the first notification');
	await new Promise((r) => setTimeout(r, 100));
	assert.deepEqual(c.log.slice(log.length).map((e) => e.method), [], 'nothing arrives after the prompt response');

	// toolStart for both; toolEnd b before toolEnd a (completion order).
	const endA = indexOf(log, isNote('toolEnd', 'a'), 'toolEnd for a');
	const endB = indexOf(log, isNote('toolEnd', 'b'), 'toolEnd for b');
	assert.ok(endB < endA, `toolEnd b (#${endB}) before toolEnd a (#${endA})`);
	assert.equal(log.filter(isNote('toolEnd')).length, 2, 'one toolEnd per call');
	assert.equal(log.filter(isNote('toolStart')).length, 2, 'one toolStart per call');
	for (const id of ['a', 'b']) {
		assert.ok(indexOf(log, isNote('toolStart', id), `toolStart for ${id}`) < indexOf(log, isNote('toolEnd', id), `toolEnd for ${id}`), `toolStart ${id} before toolEnd ${id}`);
	}
	assert.deepEqual(log[endA].params.result.content, text('slow ok'));
	assert.equal(log[endA].params.isError, false);
	assert.equal(log[endA].params.toolName, 'slow');
	assert.deepEqual(log[endB].params.result.content, text('fast ok'));
	assert.equal(log[endB].params.isError, false);

	// The approval came before b ran.
	const askB = indexOf(log, (e) => e.kind === 'request' && e.method === 'beforeToolCall', 'beforeToolCall');
	assert.ok(askB < endB, 'beforeToolCall before toolEnd b');

	// Every $/toolUpdate of a call precedes its toolEnd; a's progress arrived in order.
	const updates = log.map((e, i) => ({ e, i })).filter(({ e }) => isNote('$/toolUpdate')(e));
	assert.deepEqual(updates.map(({ e }) => [e.params.toolCallId, e.params.toolName, e.params.partialResult.content]), [
		['a', 'slow', text('half\n')],
		['a', 'slow', text('three quarters\n')],
	]);
	for (const { e, i } of updates) {
		const end = indexOf(log, isNote('toolEnd', e.params.toolCallId), `toolEnd for ${e.params.toolCallId}`);
		assert.ok(i < end, `$/toolUpdate #${i} of ${e.params.toolCallId} before its toolEnd #${end}`);
	}

	// The response: user, assistant with the two calls, results in source order, final answer.
	assert.deepEqual(res.messages.map((m) => m.role), ['user', 'assistant', 'toolResult', 'toolResult', 'assistant']);
	assert.deepEqual(res.messages[0].content, text('go'));
	assert.deepEqual(res.messages[1].content.map((x) => x.id), ['a', 'b']);
	const results = res.messages.filter((m) => m.role === 'toolResult');
	assert.deepEqual(results.map((m) => [m.toolCallId, m.toolName, m.content, m.isError]), [
		['a', 'slow', text('slow ok'), false],
		['b', 'fast', text('fast ok'), false],
	]);
	assert.deepEqual(res.messages[4].content, text('done'));
	assert.equal(res.messages[4].stopReason, 'stop');

	// Tool-result messages are announced by messageStart/messageEnd in source order after the batch.
	const resultEnds = log.filter((e) => e.method === 'messageEnd' && e.params.message.role === 'toolResult');
	assert.deepEqual(resultEnds.map((e) => e.params.message.toolCallId), ['a', 'b']);
	assert.ok(log.indexOf(resultEnds[0]) > endA, 'result messages are announced after the batch');

	// agentEnd carries the same messages as the response.
	assert.deepEqual(notes(log).at(-1).params.messages, res.messages);

	// Streaming: deltas always, the partial message only at a block's end.
	assertStreaming(log, 'done');
	// Both calls ran: each was announced by toolExecutionStart, after the whole prepare pass
	// (both toolStarts and b's approval), in source order.
	assertExecutionStarts(log, ['a', 'b'], { a: 'slow', b: 'fast' });
	const execA = indexOf(log, isNote('toolExecutionStart', 'a'), 'toolExecutionStart for a');
	const execB = indexOf(log, isNote('toolExecutionStart', 'b'), 'toolExecutionStart for b');
	assert.ok(askB < execA && execA < execB, `a starts executing after b's approval, and before b (#${askB}, #${execA}, #${execB})`);

	await c.shutdown();
});

test('showMessageRequest fallback: a client without beforeToolCall denies, the model gets an error result', async (t) => {
	const asked = [];
	const c = start(t, {
		onShowMessageRequest: (p) => { asked.push(p); return { title: 'Deny' }; },
	});
	await within(c.conn.sendRequest('initialize', initializeParams(null)), 'the initialize response');
	await c.conn.sendNotification('initialized', {});
	const sess = await within(c.conn.sendRequest('session/new', parallelSession()), 'the session/new response');
	const res = await within(c.conn.sendRequest('session/prompt', { sessionId: sess.sessionId, text: 'go' }), 'the session/prompt response');
	const log = c.log.slice();

	assert.equal(res.stopReason, 'stop');
	assert.equal(log.filter((e) => e.method === 'beforeToolCall').length, 0, 'no beforeToolCall to a client that did not declare it');
	assert.equal(asked.length, 1, 'one window/showMessageRequest');
	const titles = asked[0].actions.map((a) => a.title);
	assert.equal(titles.length, 3, `actions ${titles}`);
	assert.equal(titles[0], 'Allow');
	assert.match(titles[1], /^Always allow/, 'the second action allows always (and may say for what)');
	assert.equal(titles[2], 'Deny');
	assert.match(asked[0].message, /fast/, 'the question names the tool');
	assert.equal(typeof asked[0].type, 'number');

	// b was not run: its toolEnd is an error, and it still comes before a's (a waits for it).
	const endA = indexOf(log, isNote('toolEnd', 'a'), 'toolEnd for a');
	const endB = indexOf(log, isNote('toolEnd', 'b'), 'toolEnd for b');
	assert.ok(endB < endA, 'toolEnd b before toolEnd a');
	assert.equal(log[endB].params.isError, true, 'denied call ends with an error');
	assert.equal(log[endA].params.isError, false);
	assert.equal(notes(log).at(-1).method, 'agentEnd');
	// The denied call never started executing.
	assertExecutionStarts(log, ['a'], { a: 'slow' });

	// The model's transcript: b's result is an error saying why; then the model answers.
	assert.deepEqual(res.messages.map((m) => m.role), ['user', 'assistant', 'toolResult', 'toolResult', 'assistant']);
	const [ra, rb] = res.messages.filter((m) => m.role === 'toolResult');
	assert.deepEqual([ra.toolCallId, ra.isError, ra.content], ['a', false, text('slow ok')]);
	assert.equal(rb.toolCallId, 'b');
	assert.equal(rb.isError, true, 'the denied call reaches the model as an error result');
	assert.ok(rb.content.length > 0 && rb.content[0].type === 'text' && rb.content[0].text.length > 0, 'the error result says why');
	assert.match(rb.content[0].text, /den/i, `the error result mentions the denial: ${JSON.stringify(rb.content)}`);
	assert.deepEqual(res.messages[4].content, text('done'));

	await c.shutdown();
});

test('$/cancelRequest through a CancellationToken aborts a prompt while a tool runs', async (t) => {
	const c = start(t, { onBeforeToolCall: () => ({ decision: 'allow' }) });
	await within(c.conn.sendRequest('initialize', initializeParams({ beforeToolCall: true })), 'the initialize response');
	await c.conn.sendNotification('initialized', {});
	const sess = await within(c.conn.sendRequest('session/new', {
		model: {
			provider: 'script',
			turns: [
				{ content: [{ type: 'toolCall', id: 'z', name: 'sleepy', arguments: {} }] },
				{ content: text('must not be reached') },
			],
		},
		scriptedTools: [{ name: 'sleepy', steps: [
			{ update: { content: text('sleeping') } },
			{ sleepMs: 30000 },
			{ result: { content: text('woke up') } },
		] }],
	}), 'the session/new response');

	const source = new rpc.CancellationTokenSource();
	const started = Date.now();
	const prompt = c.conn.sendRequest('session/prompt', { sessionId: sess.sessionId, text: 'sleep' }, source.token);

	// Cancel once the tool is running (its toolStart arrived).
	await within(new Promise((resolve) => {
		const poll = () => (c.log.some(isNote('toolStart', 'z')) ? resolve() : setTimeout(poll, 5));
		poll();
	}), 'toolStart of the sleeping tool');
	source.cancel();

	const res = await within(prompt, 'the session/prompt response after $/cancelRequest');
	const elapsed = Date.now() - started;
	const log = c.log.slice();
	assert.ok(elapsed < 10_000, `the cancelled prompt answered in ${elapsed} ms, not after the tool's 30 s sleep`);
	assert.equal(res.stopReason, 'aborted');

	// Nothing lost: the call has one start, one end (an error) and one result; no further
	// model call was made.
	assert.equal(log.filter(isNote('toolStart', 'z')).length, 1);
	const ends = log.filter(isNote('toolEnd', 'z'));
	assert.equal(ends.length, 1, 'one toolEnd for the cancelled call');
	assert.equal(ends[0].params.isError, true, 'the cancelled call ends with an error');
	const results = res.messages.filter((m) => m.role === 'toolResult');
	assert.deepEqual(results.map((m) => [m.toolCallId, m.isError]), [['z', true]]);
	assert.ok(!JSON.stringify(res.messages).includes('must not be reached'), 'no model call after the cancel');
	assert.equal(notes(log).at(-1).method, 'agentEnd', 'agentEnd before the response');

	// The session is usable afterwards (not stuck "running").
	const tools = await within(c.conn.sendRequest('tools/list', { sessionId: sess.sessionId }), 'tools/list after the cancel');
	assert.ok(tools.tools.some((x) => x.name === 'sleepy'), 'tools/list still lists the session\'s tools');

	await c.shutdown();
});

test('cancelling a prompt that waits for an approval cancels the approval request too', async (t) => {
	let askToken;
	let askCancelled;
	const c = start(t, {
		// Never answers on its own, like a person who has not decided yet; answers only once
		// pid cancels the request (as VS Code does, with a late answer pid must ignore).
		onBeforeToolCall: (_params, token) => new Promise((resolve) => {
			askToken = token;
			askCancelled = new Promise((done) => token.onCancellationRequested(() => {
				done();
				resolve({ decision: 'allow' });
			}));
		}),
	});
	await within(c.conn.sendRequest('initialize', initializeParams({ beforeToolCall: true })), 'the initialize response');
	await c.conn.sendNotification('initialized', {});
	const sess = await within(c.conn.sendRequest('session/new', {
		model: {
			provider: 'script',
			turns: [
				{ content: [{ type: 'toolCall', id: 'w', name: 'write', arguments: { path: 'x.txt' } }] },
				{ content: text('second prompt answered') },
			],
		},
		scriptedTools: [{ name: 'write', requiresApproval: true, steps: [{ result: { content: text('written') } }] }],
	}), 'the session/new response');

	const source = new rpc.CancellationTokenSource();
	const prompt = c.conn.sendRequest('session/prompt', { sessionId: sess.sessionId, text: 'write it' }, source.token);
	await within(new Promise((resolve) => {
		const poll = () => (askToken ? resolve() : setTimeout(poll, 5));
		poll();
	}), 'the beforeToolCall request');
	source.cancel();

	const res = await within(prompt, 'the session/prompt response after $/cancelRequest');
	assert.equal(notes(c.log).at(-1).method, 'agentEnd', 'agentEnd before the response');
	await within(askCancelled, "pid's $/cancelRequest for its beforeToolCall request");
	assert.equal(res.stopReason, 'aborted');
	const results = res.messages.filter((m) => m.role === 'toolResult');
	assert.deepEqual(results.map((m) => [m.toolCallId, m.isError]), [['w', true]], 'the unapproved call gets an error result');
	assert.ok(!JSON.stringify(results).includes('written'), 'the call did not run');
	assert.equal(c.log.filter(isNote('toolEnd', 'w')).length, 1, 'one toolEnd for the call');

	// The client's late answer to the cancelled request is ignored and the session goes on.
	const res2 = await within(c.conn.sendRequest('session/prompt', { sessionId: sess.sessionId, text: 'again' }), 'a second prompt');
	assert.equal(res2.stopReason, 'stop');
	assert.deepEqual(res2.messages.map((m) => m.role), ['user', 'assistant']);
	assert.deepEqual(res2.messages[1].content, text('second prompt answered'));

	await c.shutdown();
});
