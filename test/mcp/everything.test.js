// Drives the reference MCP server, @modelcontextprotocol/server-everything (installed from
// npm, pinned in package-lock.json), through the real pid daemon with vscode-jsonrpc as the
// editor: a server nobody on this project wrote, over a client nobody on this project wrote.
// Checked: its tools are listed with their source; echo, get-sum and get-tiny-image give their
// text and image; trigger-long-running-operation streams progress as $/toolUpdate and is
// cancelled with $/cancelRequest while the server stays usable; trigger-elicitation-request
// reaches the editor as elicitation/create and the editor's answer reaches the server; a
// scripted model finds get-sum with tool_search and calls it; after exit no server process
// is left. Run with `node --test` here; the binary is $PID_BIN, else ../../bin/pid.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const rpc = require('vscode-jsonrpc/node');

const PID_BIN = path.resolve(process.env.PID_BIN || path.join(__dirname, '../../bin/pid'));
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const WAIT_MS = 20_000;

// bounded fails with what was awaited when p does not settle in time.
function bounded(p, what, ms = WAIT_MS) {
	let timer;
	return Promise.race([
		p,
		new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no ${what} after ${ms} ms`)), ms); }),
	]).finally(() => clearTimeout(timer));
}

// daemon starts pid in a scratch home and connects an editor to it. Every notification is
// kept in order; waiters are woken as they arrive. answer(method, params) answers pid's
// requests (beforeToolCall, elicitation/create, ...).
function daemon(t, answer) {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: run go build -o bin/pid ./cmd/pid or set PID_BIN`);
	const home = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-mcp-'));
	const ws = path.join(home, 'ws');
	fs.mkdirSync(ws);
	const env = { ...process.env, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_STATE_HOME: path.join(home, 'state') };
	const child = spawn(PID_BIN, [], { stdio: ['pipe', 'pipe', 'pipe'], env });
	let stderr = '';
	child.stderr.on('data', (d) => { stderr += d; });
	const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
	const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
	const notes = [];
	const requests = [];
	let waiters = [];
	conn.onNotification((method, params) => {
		notes.push({ method, params });
		waiters = waiters.filter((w) => !w());
	});
	conn.onRequest((method, params) => {
		requests.push({ method, params });
		return answer(method, params);
	});
	conn.listen();
	let ended = false;
	t.after(() => {
		if (!ended) {
			child.kill('SIGKILL');
			t.diagnostic(`pid stderr:\n${stderr.split('\n').slice(-30).join('\n')}`);
		}
		conn.dispose();
		fs.rmSync(home, { recursive: true, force: true });
	});
	return {
		conn, notes, requests, ws,
		// until resolves with the first notification (already arrived or to come) matching pred.
		until(pred, what) {
			const found = () => notes.find(pred);
			return bounded(new Promise((resolve) => {
				const check = () => { const n = found(); if (n) { resolve(n); return true; } return false; };
				if (!check()) waiters.push(check);
			}), what);
		},
		call(method, params, token) {
			// vscode-jsonrpc takes a trailing undefined for one more positional parameter.
			const sent = token ? conn.sendRequest(method, params, token) : conn.sendRequest(method, params);
			return bounded(sent, `answer to ${method}`);
		},
		async stop() {
			assert.equal(await this.call('shutdown'), null);
			await conn.sendNotification('exit');
			const { code } = await bounded(exited, 'pid exiting');
			assert.equal(code, 0, `pid's exit code (stderr: ${stderr})`);
			ended = true;
		},
	};
}

// editorAnswers allows every tool and answers elicitations with a name.
function editorAnswers(method, params) {
	if (method === 'beforeToolCall') return { decision: 'allow' };
	if (method === 'elicitation/create') {
		assert.equal(params.message, 'Please provide inputs for the following fields:');
		assert.equal(params.requestedSchema.properties.name.type, 'string');
		assert.equal(params._meta.pid.server, 'everything');
		return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
	}
	throw new rpc.ResponseError(rpc.ErrorCodes.MethodNotFound, `the test editor does not answer ${method}`);
}

// open initializes pid on d's workspace and opens a session whose MCP server "everything" is
// the reference server, marked by mark in its environment; it resolves once the server is ready.
async function open(d, mark, session = {}) {
	await d.call('initialize', {
		processId: process.pid, rootUri: null, capabilities: {},
		workspaceFolders: [{ uri: `file://${d.ws}`, name: 'ws' }],
	});
	await d.conn.sendNotification('initialized', {});
	const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { PID_MCP_TEST_MARK: mark } };
	const { sessionId } = await d.call('session/new', {
		cwd: d.ws,
		mcpServers: { everything: { ...everything, ...(session.server || {}) } },
		permissions: { tools: { 'mcp__everything__*': 'allow' } },
		...(session.model ? { model: session.model } : {}),
	});
	await d.until((n) => n.method === 'mcp/serverStatus' && n.params.name === 'everything' && n.params.status === 'ready', 'the server ready');
	return sessionId;
}

// execute runs one tool call through tools/execute and returns its result message.
async function execute(d, sessionId, id, tool, args, token) {
	const res = await d.call('tools/execute', { sessionId, toolCalls: [{ id, name: `mcp__everything__${tool}`, arguments: args }] }, token);
	return { aborted: res.aborted === true, msg: res.messages[0] };
}

const textOf = (msg) => msg.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// serverProcesses returns the ids of live processes whose environment holds mark.
function serverProcesses(mark) {
	const out = [];
	for (const p of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(p)) continue;
		try {
			if (fs.readFileSync(`/proc/${p}/environ`, 'latin1').includes(`PID_MCP_TEST_MARK=${mark}`)) out.push(Number(p));
		} catch { /* gone, or not ours */ }
	}
	return out;
}

test('the reference server\'s tools through tools/execute: text, image, progress, cancel, elicitation', async (t) => {
	const d = daemon(t, editorAnswers);
	const mark = crypto.randomUUID();
	const sid = await open(d, mark, { server: { load: 'eager' } });
	assert.equal(serverProcesses(mark).length, 1, 'one server process runs');

	const { tools } = await d.call('tools/list', { sessionId: sid });
	const echoTool = tools.find((x) => x.name === 'mcp__everything__echo');
	assert.ok(echoTool, `echo listed; got ${tools.map((x) => x.name).join(', ')}`);
	assert.equal(echoTool.source, 'mcp:everything');
	assert.equal(echoTool.active, true, 'an eager server\'s tools are active');
	assert.equal(echoTool.parameters.properties.message.type, 'string', 'the server\'s input schema is passed on');

	let r = await execute(d, sid, 'e1', 'echo', { message: 'hello from the editor' });
	assert.equal(r.msg.isError, false);
	assert.equal(textOf(r.msg), 'Echo: hello from the editor');

	r = await execute(d, sid, 's1', 'get-sum', { a: 2, b: 40 });
	assert.equal(textOf(r.msg), 'The sum of 2 and 40 is 42.');

	// Invalid arguments are the model's error to fix, checked against the server's schema.
	r = await execute(d, sid, 's2', 'get-sum', { a: 'two', b: 40 });
	assert.equal(r.msg.isError, true, 'a string where the schema wants a number is an error result');
	assert.match(textOf(r.msg), /Validation failed for tool "mcp__everything__get-sum"[\s\S]*\ba\b[\s\S]*number/, 'the error names the argument and the type');

	r = await execute(d, sid, 'i1', 'get-tiny-image', {});
	const image = r.msg.content.find((c) => c.type === 'image');
	assert.ok(image, `an image block; got ${JSON.stringify(r.msg.content).slice(0, 300)}`);
	assert.equal(image.mimeType, 'image/png');
	assert.deepEqual([...Buffer.from(image.data, 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'the image is a PNG');

	// A long operation reports progress; cancelling the request ends it at once, aborted.
	const cts = new rpc.CancellationTokenSource();
	const long = execute(d, sid, 'l1', 'trigger-long-running-operation', { duration: 60, steps: 120 }, cts.token);
	const updates = () => d.notes.filter((n) => n.method === '$/toolUpdate' && n.params.toolCallId === 'l1');
	await d.until(() => updates().length >= 2, 'two progress updates of the long operation');
	// Each progress update is a line the editor can show: "2/120", with the numbers in details.
	assert.deepEqual(updates()[1].params.partialResult, { content: [{ type: 'text', text: '2/120\n' }], details: { progress: 2, total: 120 } });
	cts.cancel();
	r = await long;
	assert.equal(r.aborted, true, 'the batch was aborted');
	assert.equal(r.msg.isError, true, 'the cancelled call has an error result');
	const end = await d.until((n) => n.method === 'toolEnd' && n.params.toolCallId === 'l1', 'toolEnd of the cancelled call');
	assert.equal(end.params.isError, true);

	// The server is still there for the next call.
	r = await execute(d, sid, 'e2', 'echo', { message: 'still here' });
	assert.equal(textOf(r.msg), 'Echo: still here');

	// Elicitation goes to the editor, and its answer back to the server.
	r = await execute(d, sid, 'q1', 'trigger-elicitation-request', {});
	assert.equal(d.requests.filter((q) => q.method === 'elicitation/create').length, 1, 'the editor was asked once');
	assert.match(textOf(r.msg), /User provided the requested information/);
	assert.match(textOf(r.msg), /Name: Ada Lovelace/);

	const { servers } = await d.call('mcp/servers', {});
	const srv = servers.find((s) => s.name === 'everything');
	assert.equal(srv.status, 'ready');
	assert.ok(srv.tools >= 10, `tool count ${srv.tools}`);

	await d.stop();
	assert.deepEqual(serverProcesses(mark), [], 'no server process outlives pid');
});

test('a scripted model finds get-sum with tool_search and calls it', async (t) => {
	const d = daemon(t, editorAnswers);
	const mark = crypto.randomUUID();
	const model = {
		provider: 'script',
		turns: [
			{ content: [{ type: 'toolCall', id: 'f1', name: 'tool_search', arguments: { query: 'add two numbers sum' } }] },
			{ content: [{ type: 'toolCall', id: 'c1', name: 'mcp__everything__get-sum', arguments: { a: 19, b: 23 } }] },
			{ content: [{ type: 'text', text: 'It is 42.' }] },
		],
	};
	const sid = await open(d, mark, { model });
	let { tools } = await d.call('tools/list', { sessionId: sid });
	assert.equal(tools.find((x) => x.name === 'mcp__everything__get-sum').active, false, 'deferred until found');

	const res = await d.call('session/prompt', { sessionId: sid, text: 'What is 19 + 23?' });
	const [, , found, , sum, answer] = res.messages;
	assert.equal(found.toolName, 'tool_search');
	assert.ok(found.addedToolNames.includes('mcp__everything__get-sum'), `tool_search found get-sum: ${JSON.stringify(found)}`);
	assert.match(textOf(found), /mcp__everything__get-sum \(MCP server everything\)/);
	assert.equal(sum.isError, false, textOf(sum));
	assert.equal(textOf(sum), 'The sum of 19 and 23 is 42.');
	assert.equal(textOf(answer), 'It is 42.');
	({ tools } = await d.call('tools/list', { sessionId: sid }));
	assert.equal(tools.find((x) => x.name === 'mcp__everything__get-sum').active, true, 'active once found');

	await d.stop();
	assert.deepEqual(serverProcesses(mark), [], 'no server process outlives pid');
});
