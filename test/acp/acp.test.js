// Tests the real pid binary in ACP mode (`pid --acp`) with the official ACP client library,
// @agentclientprotocol/sdk 2.4.0 (client().onRequest(...).connectWith(ndJsonStream(...))).
// Every line of both directions is tapped off the pipes and validated with ajv against the
// specific $defs of the SDK's own schema/v1/schema.json (the top-level schema is too loose
// to catch anything). The SDK drops invalid notifications silently, so the tests assert on
// what arrived, and check that the SDK saw every update the tap saw.
//
// Run with `node --test` here (after `npm ci`). The binary is $PID_BIN, else ../../bin/pid.
// The MCP test runs package mcp's test server: $PID_TESTMCP_BIN, else one it builds with
// `go build` into a temp folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const here = path.dirname(fileURLToPath(import.meta.url));
const PID_BIN = process.env.PID_BIN ? path.resolve(process.env.PID_BIN) : path.resolve(here, '../../bin/pid');
// The package exports neither its package.json nor its schema: read them from its folder
// (the one the import above resolved to).
const sdkDir = (() => {
	let dir = path.dirname(fileURLToPath(import.meta.resolve('@agentclientprotocol/sdk')));
	while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
	return dir;
})();
const SDK_VERSION = JSON.parse(fs.readFileSync(path.join(sdkDir, 'package.json'), 'utf8')).version;
const schema = JSON.parse(fs.readFileSync(path.join(sdkDir, 'schema/v1/schema.json'), 'utf8'));

// Every wait is bounded: a hung daemon fails the test with a reason.
const STEP_MS = 15_000;

function within(promise, what, ms = STEP_MS) {
	let timer;
	const timeout = new Promise((_, reject) => {
		timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
	});
	return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// --- Schema validation -------------------------------------------------------------------

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const intFormat = (min, max) => ({ type: 'number', validate: (x) => Number.isInteger(x) && x >= min && x <= max });
ajv.addFormat('uint16', intFormat(0, 65535));
ajv.addFormat('uint32', intFormat(0, 2 ** 32 - 1));
ajv.addFormat('int32', intFormat(-(2 ** 31), 2 ** 31 - 1));
ajv.addFormat('uint64', intFormat(0, Number.MAX_SAFE_INTEGER));
ajv.addFormat('int64', intFormat(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
ajv.addFormat('double', { type: 'number', validate: (x) => Number.isFinite(x) });
ajv.addSchema(schema, 'acp-v1');
const validators = new Map();
function validatorFor(def) {
	if (!validators.has(def)) {
		assert.ok(schema.$defs[def], `no $defs/${def} in the SDK's schema`);
		validators.set(def, ajv.getSchema(`acp-v1#/$defs/${def}`));
	}
	return validators.get(def);
}

// Which $defs the params and results of each method must satisfy.
const REQUEST = {
	initialize: 'InitializeRequest', 'session/new': 'NewSessionRequest', 'session/prompt': 'PromptRequest',
	'session/load': 'LoadSessionRequest', 'session/resume': 'ResumeSessionRequest', 'session/list': 'ListSessionsRequest',
	'session/close': 'CloseSessionRequest', 'session/delete': 'DeleteSessionRequest',
	'session/request_permission': 'RequestPermissionRequest', 'elicitation/create': 'CreateElicitationRequest',
	'session/set_config_option': 'SetSessionConfigOptionRequest',
	'session/set_mode': 'SetSessionModeRequest',
	'terminal/create': 'CreateTerminalRequest', 'terminal/output': 'TerminalOutputRequest',
	'terminal/wait_for_exit': 'WaitForTerminalExitRequest', 'terminal/kill': 'KillTerminalRequest',
	'terminal/release': 'ReleaseTerminalRequest',
};
const RESPONSE = {
	initialize: 'InitializeResponse', 'session/new': 'NewSessionResponse', 'session/prompt': 'PromptResponse',
	'session/load': 'LoadSessionResponse', 'session/resume': 'ResumeSessionResponse', 'session/list': 'ListSessionsResponse',
	'session/close': 'CloseSessionResponse', 'session/delete': 'DeleteSessionResponse',
	'session/request_permission': 'RequestPermissionResponse', 'elicitation/create': 'CreateElicitationResponse',
	'session/set_config_option': 'SetSessionConfigOptionResponse',
	'session/set_mode': 'SetSessionModeResponse',
	'terminal/create': 'CreateTerminalResponse', 'terminal/output': 'TerminalOutputResponse',
	'terminal/wait_for_exit': 'WaitForTerminalExitResponse', 'terminal/kill': 'KillTerminalResponse',
	'terminal/release': 'ReleaseTerminalResponse',
};
const NOTIFICATION = {
	'session/update': 'SessionNotification', 'session/cancel': 'CancelNotification',
	'$/cancel_request': 'CancelRequestNotification',
};
// What each side may send: the client never gets fs/* requests (it declares none), nor
// terminal/* unless it declared terminal (Tap's terminal), nor elicitation/create unless it
// declared elicitation.form (Tap's elicitation), and pid sends no notification but
// session/update.
const AGENT_MAY_REQUEST = new Set(['session/request_permission']);
const AGENT_MAY_NOTIFY = new Set(['session/update']);

// Tap records and validates every line of one connection, in each direction's order.
class Tap {
	constructor({ elicitation = false, terminal = false } = {}) {
		this.elicitation = elicitation; // the client declared elicitation.form
		this.terminal = terminal; // the client declared terminal
		this.lines = []; // {dir: 'in'|'out', msg} in the order seen ('in': from pid)
		this.errors = [];
		this.requests = { in: new Map(), out: new Map() }; // id -> method, per sender
	}

	check(dir, text) {
		let msg;
		try {
			msg = JSON.parse(text);
		} catch (e) {
			this.errors.push(`${dir}: not JSON: ${text}`);
			return;
		}
		this.lines.push({ dir, msg });
		const fail = (why) => this.errors.push(`${dir === 'in' ? 'pid -> client' : 'client -> pid'}: ${why}: ${text}`);
		const valid = (def, value) => {
			const v = validatorFor(def);
			if (!v(value)) fail(`not a valid ${def} (${ajv.errorsText(v.errors).slice(0, 400)})`);
		};
		if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return fail('not a JSON object');
		if (msg.jsonrpc !== '2.0') fail('jsonrpc is not "2.0"');
		const other = dir === 'in' ? 'out' : 'in';
		if (typeof msg.method === 'string' && 'id' in msg) {
			this.requests[dir].set(JSON.stringify(msg.id), msg.method);
			const mayAsk = AGENT_MAY_REQUEST.has(msg.method) || (this.elicitation && msg.method === 'elicitation/create') || (this.terminal && msg.method.startsWith('terminal/'));
			if (dir === 'in' && !mayAsk) return fail(`pid must not send ${msg.method}`);
			if (dir === 'out' && msg.method.startsWith('_')) return; // extension request: any params
			if (!REQUEST[msg.method]) return fail(`no schema for request ${msg.method}`);
			return valid(REQUEST[msg.method], msg.params);
		}
		if (typeof msg.method === 'string') {
			if (dir === 'in' && !AGENT_MAY_NOTIFY.has(msg.method)) return fail(`pid must not send ${msg.method}`);
			if (!NOTIFICATION[msg.method]) return fail(`no schema for notification ${msg.method}`);
			return valid(NOTIFICATION[msg.method], msg.params);
		}
		// A response: exactly one of result and error, and the id of a request of the other side.
		if (!('id' in msg) || ('result' in msg) === ('error' in msg)) return fail('a response needs an id and exactly one of result and error');
		const method = this.requests[other].get(JSON.stringify(msg.id));
		if (method === undefined) return fail('a response to no request');
		if ('error' in msg) {
			if (!Number.isInteger(msg.error?.code) || typeof msg.error?.message !== 'string') fail('an error needs an integer code and a string message');
			return valid('Error', msg.error);
		}
		if (!RESPONSE[method]) return fail(`a result for ${method}, which cannot succeed`);
		return valid(RESPONSE[method], msg.result);
	}

	// Splits a byte stream into lines for check.
	splitter(dir) {
		let pending = '';
		const decoder = new TextDecoder('utf-8', { fatal: true });
		return (chunk) => {
			try {
				pending += decoder.decode(chunk, { stream: true });
			} catch (e) {
				this.errors.push(`${dir}: invalid UTF-8`);
				return;
			}
			let i;
			while ((i = pending.indexOf('\n')) >= 0) {
				const line = pending.slice(0, i).trim();
				pending = pending.slice(i + 1);
				if (line) this.check(dir, line);
			}
		};
	}

	// pid's messages, in order.
	fromPid() { return this.lines.filter((l) => l.dir === 'in').map((l) => l.msg); }

	// The position of pid's response to the client request with the given method and
	// params.sessionId, the n-th such request (0-based).
	responseIndex(method, sessionId, n = 0) {
		const ids = this.lines.filter((l) => l.dir === 'out' && l.msg.method === method && l.msg.params?.sessionId === sessionId).map((l) => JSON.stringify(l.msg.id));
		const id = ids[n];
		assert.ok(id !== undefined, `no ${method} request #${n} for ${sessionId}`);
		const from = this.fromPid();
		const idx = from.findIndex((m) => m.method === undefined && JSON.stringify(m.id) === id);
		assert.ok(idx >= 0, `no response to ${method} ${id}`);
		return idx;
	}
}

// --- The child -----------------------------------------------------------------------------

// start spawns `pid --acp` with its settings and state in a temp folder (or in xdg, which
// the caller owns: pids that share it share their saved sessions) and connects the SDK's
// client to it through a tap. handlers: {permission(params, signal) -> response,
// elicitation(params, signal) -> response, terminal: {create, output, waitForExit, kill,
// release}(params) -> response}; with an elicitation handler the client may be asked
// elicitation/create (it must then declare elicitation.form in initialize), with terminal
// handlers terminal/* (it must then declare terminal).
function start(t, handlers = {}, { xdg: shared } = {}) {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const xdg = shared ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-xdg-'));
	const child = spawn(PID_BIN, ['--acp'], {
		stdio: ['pipe', 'pipe', 'pipe'],
		env: { ...process.env, XDG_CONFIG_HOME: path.join(xdg, 'config'), XDG_STATE_HOME: path.join(xdg, 'state') },
	});
	let stderr = '';
	child.stderr.setEncoding('utf8');
	child.stderr.on('data', (d) => { stderr += d; });
	const exited = new Promise((resolve, reject) => {
		child.on('error', reject);
		child.on('exit', (code, signal) => resolve({ code, signal }));
	});
	const tap = new Tap({ elicitation: Boolean(handlers.elicitation), terminal: Boolean(handlers.terminal) });
	const fromPid = tap.splitter('in');
	const toPid = tap.splitter('out');
	const input = Readable.toWeb(child.stdout).pipeThrough(new TransformStream({
		transform(chunk, controller) { fromPid(chunk); controller.enqueue(chunk); },
	}));
	const stdin = Writable.toWeb(child.stdin);
	const output = new WritableStream({
		async write(chunk) {
			toPid(chunk);
			const w = stdin.getWriter();
			try { await w.write(chunk); } finally { w.releaseLock(); }
		},
		async close() { await stdin.close(); },
		async abort(reason) { await stdin.abort(reason); },
	});
	const updates = []; // what the SDK delivered to the client, in order
	const app = acp.client({ name: 'pid-acp-test' })
		.onNotification(acp.methods.client.session.update, ({ params }) => { updates.push(params); })
		.onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
			assert.ok(handlers.permission, `unexpected permission request: ${JSON.stringify(params)}`);
			return handlers.permission(params, signal);
		})
		.onRequest(acp.methods.client.elicitation.create, async ({ params, signal }) => {
			assert.ok(handlers.elicitation, `unexpected elicitation request: ${JSON.stringify(params)}`);
			return handlers.elicitation(params, signal);
		});
	for (const [name, method] of Object.entries(acp.methods.client.terminal)) {
		app.onRequest(method, async ({ params }) => {
			assert.ok(handlers.terminal?.[name], `unexpected ${method}: ${JSON.stringify(params)}`);
			return handlers.terminal[name](params);
		});
	}
	t.after(async () => {
		child.kill('SIGKILL');
		await exited.catch(() => {});
		if (!shared) fs.rmSync(xdg, { recursive: true, force: true });
	});
	let done = false;
	t.after(() => {
		if (!done) {
			for (const line of stderr.split('\n').filter(Boolean).slice(-40)) t.diagnostic(`pid stderr: ${line}`);
		}
	});
	return {
		child, tap, updates, exited, xdg,
		stream: acp.ndJsonStream(output, input),
		app,
		// finish asserts the tap saw no invalid message and the SDK got every update.
		finish() {
			assert.deepEqual(tap.errors, [], 'every message validates');
			const tapped = tap.fromPid().filter((m) => m.method === 'session/update').length;
			assert.equal(updates.length, tapped, 'the SDK delivered every session/update pid sent (none dropped as invalid)');
			done = true;
		},
		stderr: () => stderr,
	};
}

// script builds _meta.pid: a scripted model playing turns, with extra settings.
const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args = {}) => ({ type: 'toolCall', id, name, arguments: args });
const turn = (...content) => ({ content });

// updatesOf returns a session's updates but available_commands_update, which pid sends after
// session/new, load and resume (the commands test looks at those: commandsOf), and
// usage_update, which pid sends after each model call (the usage test looks at those).
function updatesOf(updates, sessionId) {
	return updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate !== 'available_commands_update' && notUsage(u)).map((u) => u.update);
}

// notUsage is false for a usage_update notification.
const notUsage = (n) => n.update.sessionUpdate !== 'usage_update';

// commandsOf returns the names of each available_commands_update of a session, in order.
function commandsOf(updates, sessionId) {
	return updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'available_commands_update')
		.map((u) => u.update.availableCommands.map((c) => c.name));
}

function toolEvents(us) {
	return us.filter((u) => u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update')
		.map((u) => `${u.sessionUpdate} ${u.toolCallId} ${u.status ?? ''}`.trim());
}

async function initialize(ctx, version = acp.PROTOCOL_VERSION) {
	const res = await within(ctx.request(acp.methods.agent.initialize, {
		protocolVersion: version,
		clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
		clientInfo: { name: 'pid-acp-test', version: '1' },
	}), 'initialize');
	assert.equal(res.protocolVersion, 1);
	return res;
}

// --- Tests ---------------------------------------------------------------------------------

test(`SDK ${SDK_VERSION}: initialize, a parallel batch with permissions and an edit diff, completion order`, async (t) => {
	const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-ws-'));
	t.after(() => fs.rmSync(cwd, { recursive: true, force: true }));
	const notes = path.join(cwd, 'notes.txt');
	fs.writeFileSync(notes, 'alpha\nbeta\ngamma\n');
	const asked = [];
	const pid = start(t, {
		permission(params) {
			asked.push(params);
			const optionKinds = params.options.map((o) => o.kind);
			assert.deepEqual(optionKinds, ['allow_once', 'allow_always', 'reject_once', 'reject_always']);
			const kind = params.toolCall.toolCallId === 'e1' ? 'allow_once' : 'reject_once';
			return { outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === kind).optionId } };
		},
	});
	await within(pid.app.connectWith(pid.stream, async (ctx) => {
		const init = await initialize(ctx);
		assert.equal(init.agentInfo.name, 'pid');
		assert.equal(init.agentCapabilities.loadSession, true);
		assert.deepEqual(init.agentCapabilities.sessionCapabilities, { list: {}, resume: {}, close: {}, delete: {}, fork: {}, additionalDirectories: {} });
		// No auth.terminal declared: the agent-type pid login method (docs/acp.md#logging-in).
		assert.deepEqual(init.authMethods.map((m) => [m.id, m.type]), [['pid-login', 'agent']]);

		const meta = {
			model: {
				provider: 'script',
				turns: [
					turn(text('Reading first.'), call('r1', 'read', { path: 'notes.txt' })),
					// One parallel batch in source order p1, p2, e1, b1. p1 waits for p2's end and
					// p2 for e1's, so they end e1, p2, p1; b1 is refused, so it ends first.
					turn({ type: 'thinking', thinking: 'Plan: edit, then the rest.' },
						call('p1', 'first'), call('p2', 'second'),
						call('e1', 'edit', { path: 'notes.txt', edits: [{ oldText: 'beta', newText: 'BETA' }] }),
						call('b1', 'bash', { command: 'rm -rf /tmp/nothing-here' })),
					turn(text('All done.')),
				],
			},
			scriptedTools: [
				{ name: 'first', steps: [{ waitForEnd: 'p2' }, { result: { content: [text('one')] } }] },
				// (progress ends a line: pid holds back an unfinished last word of progress)
				{ name: 'second', steps: [{ waitForEnd: 'e1' }, { update: { content: [text('halfway\n')] } }, { result: { content: [text('two')], details: { n: 2 } } }] },
			],
		};
		const { sessionId } = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [], _meta: { pid: meta } }), 'session/new');
		assert.ok(sessionId);
		const other = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }), 'second session/new');
		assert.notEqual(other.sessionId, sessionId);

		const res = await within(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('Please edit notes.txt')] }), 'session/prompt');
		assert.equal(res.stopReason, 'end_turn');

		const us = updatesOf(pid.updates, sessionId);
		assert.deepEqual(us.filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text), ['Reading first.', 'All done.']);
		assert.deepEqual(us.filter((u) => u.sessionUpdate === 'agent_thought_chunk').map((u) => u.content.text), ['Plan: edit, then the rest.']);
		// Every call that executes goes in_progress once, when it starts executing: in the
		// parallel batch after the whole prepare pass (e1's permission and b1's refusal), in
		// source order; progress updates carry content only.
		assert.deepEqual(toolEvents(us), [
			'tool_call r1 pending', 'tool_call_update r1 in_progress', 'tool_call_update r1 completed',
			'tool_call p1 pending', 'tool_call p2 pending', 'tool_call e1 pending',
			'tool_call b1 pending', 'tool_call_update b1 failed',
			'tool_call_update p1 in_progress', 'tool_call_update p2 in_progress', 'tool_call_update e1 in_progress',
			'tool_call_update e1 completed', 'tool_call_update p2', 'tool_call_update p2 completed', 'tool_call_update p1 completed',
		]);
		const byId = (id, kind) => us.filter((u) => u.toolCallId === id && u.sessionUpdate === kind);
		const r1 = byId('r1', 'tool_call')[0];
		assert.equal(r1.kind, 'read');
		assert.equal(r1.title, 'Read notes.txt');
		assert.deepEqual(r1.locations, [{ path: notes }]);
		assert.deepEqual(r1.rawInput, { path: 'notes.txt' });
		assert.equal(byId('b1', 'tool_call')[0].kind, 'execute');
		assert.equal(byId('p1', 'tool_call')[0].kind, 'other');
		// The edit's final update: text, a diff with the absolute path, rawOutput.
		const e1 = byId('e1', 'tool_call_update').at(-1);
		const diff = e1.content.find((c) => c.type === 'diff');
		assert.deepEqual(diff, { type: 'diff', path: notes, oldText: 'alpha\nbeta\ngamma\n', newText: 'alpha\nBETA\ngamma\n' });
		assert.match(e1.content[0].content.text, /Edited notes\.txt/);
		assert.ok(e1.rawOutput.details.diff.includes('+BETA'));
		assert.equal(fs.readFileSync(notes, 'utf8'), 'alpha\nBETA\ngamma\n');
		assert.equal(byId('p2', 'tool_call_update').at(-1).rawOutput.details.n, 2);
		assert.equal(byId('p2', 'tool_call_update').find((u) => u.content && !u.status).content[0].content.text, 'halfway\n');
		// Permission requests: the two calls that change things, in source order.
		assert.deepEqual(asked.map((a) => a.toolCall.toolCallId), ['e1', 'b1']);
		assert.equal(asked[0].sessionId, sessionId);
		assert.equal(asked[0].toolCall.title, 'Edit notes.txt');
		assert.equal(asked[0].toolCall.kind, 'edit');
		// Every update of the turn came before the prompt's response.
		const from = pid.tap.fromPid();
		const respAt = pid.tap.responseIndex('session/prompt', sessionId);
		assert.equal(from.slice(respAt + 1).filter((m) => m.method === 'session/update').length, 0);

		// An unknown extension request gets an error response, not silence.
		await assert.rejects(within(ctx.request('_pid/unknown', { x: 1 }), '_pid/unknown'), (e) => e.code === -32601);
	}), 'the client workflow', 60_000);
	pid.finish();
});

test(`SDK ${SDK_VERSION}: a higher protocol version is answered with 1; cancel mid-tool; shutdown by closing stdin`, async (t) => {
	const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-ws-'));
	t.after(() => fs.rmSync(cwd, { recursive: true, force: true }));
	let permissionSignal;
	let releasePermission;
	const permissionAsked = new Promise((resolve) => { releasePermission = resolve; });
	let answerCancelled;
	const cancelSent = new Promise((resolve) => { answerCancelled = resolve; });
	const pid = start(t, {
		async permission(params, signal) {
			permissionSignal = signal;
			releasePermission(params);
			// ACP: after session/cancel the client answers pending requests "cancelled".
			await cancelSent;
			return { outcome: { outcome: 'cancelled' } };
		},
	});
	let sessionId;
	await within(pid.app.connectWith(pid.stream, async (ctx) => {
		await initialize(ctx, 7);
		const meta = {
			model: { provider: 'script', turns: [turn(call('s1', 'slow'), call('s2', 'slow'), call('g1', 'gated')), turn(text('never'))] },
			scriptedTools: [
				{ name: 'slow', steps: [{ update: { content: [text('started')] } }, { sleepMs: 60000 }] },
				{ name: 'gated', requiresApproval: true, steps: [{ result: { content: [text('ran')] } }] },
			],
		};
		({ sessionId } = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [], _meta: { pid: meta } }), 'session/new'));
		const prompt = ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('go')] });
		// Wait for the permission question (the batch's prepare pass), then cancel it
		// while it is pending; the slow calls never start.
		const asked = await within(permissionAsked, 'the permission request');
		assert.equal(asked.toolCall.toolCallId, 'g1');
		await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
		answerCancelled();
		const res = await within(prompt, 'the cancelled prompt');
		assert.equal(res.stopReason, 'cancelled');
		// Every started tool call got its final update, before the response.
		const us = updatesOf(pid.updates, sessionId);
		const final = {};
		for (const u of us) if (u.sessionUpdate === 'tool_call_update' && u.status) final[u.toolCallId] = u.status;
		assert.deepEqual(final, { s1: 'failed', s2: 'failed', g1: 'failed' });
		assert.equal(permissionSignal.aborted, false, 'pid does not cancel the request it gave up; the client answers it');

		// Mid-tool this time: a running tool sees the cancel.
		const meta2 = {
			model: { provider: 'script', turns: [turn(call('m1', 'slow'), call('m2', 'slow'))] },
			scriptedTools: [{ name: 'slow', steps: [{ update: { content: [text('started')] } }, { sleepMs: 60000 }] }],
		};
		const s2 = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [], _meta: { pid: meta2 } }), 'session/new');
		const prompt2 = ctx.request(acp.methods.agent.session.prompt, { sessionId: s2.sessionId, prompt: [text('go')] });
		await within((async () => {
			while (updatesOf(pid.updates, s2.sessionId).filter((u) => u.status === 'in_progress').length < 2) {
				await new Promise((r) => setTimeout(r, 10));
			}
		})(), 'both tools running');
		const started = Date.now();
		await ctx.notify(acp.methods.agent.session.cancel, { sessionId: s2.sessionId });
		const res2 = await within(prompt2, 'the prompt cancelled mid-tool');
		assert.equal(res2.stopReason, 'cancelled');
		assert.ok(Date.now() - started < 10_000, 'the running tools stopped at once');
		assert.deepEqual(toolEvents(updatesOf(pid.updates, s2.sessionId)).filter((e) => e.endsWith('failed')).sort(),
			['tool_call_update m1 failed', 'tool_call_update m2 failed']);
		// Nothing follows the cancelled prompts' responses.
		await new Promise((r) => setTimeout(r, 200));
		const from = pid.tap.fromPid();
		for (const sid of [sessionId, s2.sessionId]) {
			const at = pid.tap.responseIndex('session/prompt', sid);
			assert.equal(from.slice(at + 1).filter((m) => m.method === 'session/update' && m.params.sessionId === sid).length, 0, `no update after the response (${sid})`);
		}
		const init = pid.tap.fromPid().find((m) => m.result?.protocolVersion !== undefined);
		assert.equal(init.result.protocolVersion, 1, 'asked for version 7, got 1');
	}), 'the client workflow', 60_000);
	// connectWith is over; closing pid's stdin ends it.
	pid.child.stdin.end();
	const { code, signal } = await within(pid.exited, 'pid to exit after its stdin closed');
	assert.equal(signal, null);
	assert.equal(code, 0);
	pid.finish();
});

// describe is an update as "kind detail", for comparing sequences.
function describe(u) {
	switch (u.sessionUpdate) {
	case 'user_message_chunk': case 'agent_message_chunk': case 'agent_thought_chunk':
		return `${u.sessionUpdate} ${u.content.type === 'text' ? u.content.text : u.content.type}`;
	case 'tool_call': case 'tool_call_update':
		return `${u.sessionUpdate} ${u.toolCallId} ${u.status ?? ''}`.trim();
	}
	return u.sessionUpdate;
}

// ends closes a pid's stdin, as an editor that quits does, and waits for it to exit.
async function ends(pid) {
	pid.child.stdin.end();
	const { code, signal } = await within(pid.exited, 'pid to exit after its stdin closed');
	assert.equal(signal, null);
	assert.equal(code, 0);
}

test(`SDK ${SDK_VERSION}: a session saved by one pid is listed, loaded with its replay, resumed, closed and deleted by the next`, async (t) => {
	const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-xdg-'));
	t.after(() => fs.rmSync(xdg, { recursive: true, force: true }));
	const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-ws-'));
	t.after(() => fs.rmSync(cwd, { recursive: true, force: true }));
	fs.writeFileSync(path.join(cwd, 'notes.txt'), 'hello\n');
	const meta = {
		model: {
			provider: 'script',
			turns: [
				turn({ type: 'thinking', thinking: 'Read it first.' }, text('Looking.'), call('r1', 'read', { path: 'notes.txt' })),
				turn(text('It says hello.')),
				turn(text('Resumed.')),
			],
		},
	};
	const question = 'What does notes.txt say?';

	// The first pid: one prompt. While it holds the session, another pid cannot load it.
	const first = start(t, {}, { xdg });
	let sessionId;
	await within(first.app.connectWith(first.stream, async (ctx) => {
		await initialize(ctx);
		({ sessionId } = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [], _meta: { pid: meta } }), 'session/new'));
		const res = await within(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text(question)] }), 'session/prompt');
		assert.equal(res.stopReason, 'end_turn');

		const other = start(t, {}, { xdg });
		await within(other.app.connectWith(other.stream, async (octx) => {
			await initialize(octx);
			await assert.rejects(octx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }),
				(e) => e.code === -32803 && /open in another pid/.test(e.message) && e.message.includes(String(first.child.pid)));
		}), 'a load by another pid', 30_000);
		await ends(other);
		other.finish();
	}), 'the first pid', 60_000);
	await ends(first);
	first.finish();
	const live = updatesOf(first.updates, sessionId);

	// The next pid.
	const second = start(t, {}, { xdg });
	await within(second.app.connectWith(second.stream, async (ctx) => {
		const init = await initialize(ctx);
		assert.equal(init.agentCapabilities.loadSession, true);
		assert.deepEqual(init.agentCapabilities.sessionCapabilities, { list: {}, resume: {}, close: {}, delete: {}, fork: {}, additionalDirectories: {} });

		const list = await within(ctx.request(acp.methods.agent.session.list, { cwd }), 'session/list');
		assert.deepEqual(list.sessions.map((s) => s.sessionId), [sessionId]);
		assert.equal(list.sessions[0].cwd, cwd);
		assert.equal(list.sessions[0].title, question);
		assert.ok(!Number.isNaN(Date.parse(list.sessions[0].updatedAt)), `updatedAt ${list.sessions[0].updatedAt}`);
		assert.equal(list.nextCursor ?? null, null);

		// Load: the conversation comes back as updates, all before the response.
		const loaded = await within(ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }), 'session/load');
		assert.equal(loaded._meta.pid.cwd, cwd);
		const replay = updatesOf(second.updates, sessionId);
		assert.deepEqual(replay.map(describe), [
			`user_message_chunk ${question}`, 'agent_thought_chunk Read it first.', 'agent_message_chunk Looking.',
			'tool_call r1 pending', 'tool_call_update r1 completed', 'agent_message_chunk It says hello.',
		]);
		// The call looks as it did live: same title, kind, input, locations, result.
		const byKind = (us, kind) => us.find((u) => u.toolCallId === 'r1' && u.sessionUpdate === kind && (kind === 'tool_call' || u.status === 'completed'));
		assert.deepEqual(byKind(replay, 'tool_call'), byKind(live, 'tool_call'));
		assert.deepEqual(byKind(replay, 'tool_call_update'), byKind(live, 'tool_call_update'));
		const at = second.tap.responseIndex('session/load', sessionId);
		assert.equal(second.tap.fromPid().slice(at + 1).filter((m) => m.method === 'session/update').length, 0, 'no update after the load response');

		// Close it, then resume it: no replay, and the conversation goes on.
		assert.deepEqual(await within(ctx.request(acp.methods.agent.session.close, { sessionId }), 'session/close'), {});
		await assert.rejects(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('closed?')] }), (e) => e.code === -32002);
		const before = second.updates.length;
		const resumed = await within(ctx.request(acp.methods.agent.session.resume, { sessionId, cwd, mcpServers: [] }), 'session/resume');
		assert.equal(resumed._meta.pid.cwd, cwd);
		assert.deepEqual(second.updates.slice(before).map((n) => describe(n.update)), ['available_commands_update'], 'resume replays nothing');
		const res = await within(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('Go on.')] }), 'prompt after resume');
		assert.equal(res.stopReason, 'end_turn');
		assert.deepEqual(second.updates.slice(before + 1).filter(notUsage).map((n) => describe(n.update)), ['agent_message_chunk Resumed.']);

		// Delete: gone from the list and from the disk; load then answers "not found".
		await within(ctx.request(acp.methods.agent.session.delete, { sessionId }), 'session/delete');
		assert.deepEqual((await within(ctx.request(acp.methods.agent.session.list, { cwd }), 'session/list')).sessions, []);
		await assert.rejects(ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }), (e) => e.code === -32002);
		const left = fs.readdirSync(path.join(xdg, 'state', 'pid', 'sessions'), { recursive: true }).filter((f) => f.includes(sessionId));
		assert.deepEqual(left, []);
		// Closing or deleting what is gone: -32002, which the SDK takes as done.
		assert.deepEqual(await within(ctx.request(acp.methods.agent.session.delete, { sessionId }), 'second delete'), {});
		assert.deepEqual(await within(ctx.request(acp.methods.agent.session.close, { sessionId }), 'close of a deleted session'), {});
		const codes = second.tap.fromPid().filter((m) => m.error).map((m) => m.error.code);
		assert.deepEqual(codes, [-32002, -32002, -32002, -32002]);
	}), 'the second pid', 60_000);
	await ends(second);
	second.finish();
});

// The test MCP server of package mcp: $PID_TESTMCP_BIN, else built once into a temp folder.
let testMCP;
function testMCPBin(t) {
	if (!testMCP) {
		if (process.env.PID_TESTMCP_BIN) {
			testMCP = path.resolve(process.env.PID_TESTMCP_BIN);
		} else {
			const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-testmcp-'));
			testMCP = path.join(dir, 'pidtestmcp');
			execFileSync('go', ['build', '-o', testMCP, 'github.com/pid-agent/pid/mcp/internal/testserver/cmd/pidtestmcp'],
				{ cwd: path.resolve(here, '../..'), stdio: ['ignore', 'ignore', 'inherit'] });
			process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
		}
	}
	assert.ok(fs.existsSync(testMCP), `no test MCP server at ${testMCP}: build it (go build -o DIR/pidtestmcp ./mcp/internal/testserver/cmd/pidtestmcp) and set PID_TESTMCP_BIN`);
	return testMCP;
}

// The ids of the live processes running the binary bin.
function processesOf(bin) {
	const out = [];
	for (const name of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(name)) continue;
		try {
			const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8');
			const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
			if (cmdline.startsWith(bin + '\0') && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') out.push(Number(name));
		} catch {
			// gone meanwhile
		}
	}
	return out;
}

test(`SDK ${SDK_VERSION}: an MCP server of session/new's mcpServers: tool_search, calls, hints, two questions of one batch (one at a time); no server outlives pid`, async (t) => {
	const bin = testMCPBin(t);
	const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-ws-'));
	t.after(() => fs.rmSync(cwd, { recursive: true, force: true }));
	const asked = [];
	const questions = [];
	// The two calls run together and both ask; a server has one question open at a time, so
	// the second comes once the first is answered, and each must name its own call.
	const answers = { 'Your name?': 'Ada', 'Your age?': '36' };
	const pid = start(t, {
		permission(params) {
			asked.push(params);
			return { outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === 'allow_once').optionId } };
		},
		async elicitation(params) {
			questions.push(params);
			return { action: 'accept', content: { answer: answers[params.message] } };
		},
	});
	const mcpServers = [{ name: 't', command: bin, args: [], env: [{ name: 'PID_ACP_TEST_VAR', value: 'from the editor' }] }];
	await within(pid.app.connectWith(pid.stream, async (ctx) => {
		const init = await within(ctx.request(acp.methods.agent.initialize, {
			protocolVersion: acp.PROTOCOL_VERSION,
			clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { form: {} } },
			clientInfo: { name: 'pid-acp-test', version: '1' },
		}), 'initialize');
		assert.equal(init.agentCapabilities.mcpCapabilities.http, true);
		assert.notEqual(init.agentCapabilities.mcpCapabilities.sse, true);

		// A first session starts the server: its tool_search waits for the start. (A search
		// that runs in the instant the server's status turns ready, before the session's
		// catalog has heard it, can still miss its tools: the session below shares the then
		// ready server.)
		const warm = await within(ctx.request(acp.methods.agent.session.new, {
			cwd, mcpServers, _meta: { pid: { model: { provider: 'script', turns: [turn(call('w1', 'tool_search', { query: 'echo' })), turn(text('warm'))] } } },
		}), 'session/new (warm-up)');
		assert.equal((await within(ctx.request(acp.methods.agent.session.prompt, { sessionId: warm.sessionId, prompt: [text('start')] }), 'warm-up prompt')).stopReason, 'end_turn');
		const servers = processesOf(bin);
		assert.equal(servers.length, 1, 'one server process');

		const meta = {
			model: {
				provider: 'script',
				turns: [
					turn(call('s1', 'tool_search', { query: 'echo' }), call('s2', 'tool_search', { query: 'ask' }), call('s3', 'tool_search', { query: 'peek' })),
					turn(call('e1', 'mcp__t__echo', { text: 'hello from MCP' }), call('p1', 'mcp__t__peek', { text: 'k' })),
					turn(call('a1', 'mcp__t__ask', { text: 'Your name?' }), call('a2', 'mcp__t__ask', { text: 'Your age?' })),
					turn(text('done')),
				],
			},
		};
		const { sessionId } = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers, _meta: { pid: meta } }), 'session/new');
		const res = await within(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('Echo and ask')] }), 'session/prompt');
		assert.equal(res.stopReason, 'end_turn');
		assert.deepEqual(processesOf(bin), servers, 'the second session shares the server process');

		const us = updatesOf(pid.updates, sessionId);
		const byId = (id, kind) => us.filter((u) => u.toolCallId === id && u.sessionUpdate === kind);
		const search = byId('s1', 'tool_call')[0];
		assert.equal(search.kind, 'search');
		assert.equal(search.title, 'Find MCP tools: `echo`');
		assert.match(byId('s1', 'tool_call_update').at(-1).content[0].content.text, /mcp__t__echo/);
		const echo = byId('e1', 'tool_call')[0];
		assert.equal(echo.title, 'echo (MCP server t)');
		assert.equal(echo.kind, 'other');
		assert.deepEqual(echo.rawInput, { text: 'hello from MCP' });
		const echoEnd = byId('e1', 'tool_call_update').at(-1);
		assert.equal(echoEnd.status, 'completed');
		assert.deepEqual(echoEnd.content, [{ type: 'content', content: { type: 'text', text: 'hello from MCP' } }]);
		// peek's server says it is read-only and titles it: a read, and it still asks.
		const peek = byId('p1', 'tool_call')[0];
		assert.equal(peek.kind, 'read');
		assert.equal(peek.title, 'Peek (MCP server t)');
		assert.equal(byId('p1', 'tool_call_update').at(-1).content[0].content.text, 'k');
		// The MCP calls asked like other tools, in source order within each batch.
		assert.deepEqual(asked.map((a) => [a.toolCall.toolCallId, a.toolCall.kind, a.toolCall.title]), [
			['e1', 'other', 'echo (MCP server t)'], ['p1', 'read', 'Peek (MCP server t)'],
			['a1', 'other', 'ask (MCP server t)'], ['a2', 'other', 'ask (MCP server t)'],
		]);
		// Each question of the parallel batch went to the client tied to its own call.
		assert.equal(questions.length, 2);
		const byCall = Object.fromEntries(questions.map((q) => [q.toolCallId, q]));
		assert.deepEqual(Object.keys(byCall).sort(), ['a1', 'a2']);
		assert.equal(byCall.a1.message, 'Your name?');
		assert.equal(byCall.a2.message, 'Your age?');
		for (const q of questions) {
			assert.equal(q.sessionId, sessionId);
			assert.equal(q.mode, 'form');
			assert.deepEqual(q.requestedSchema.properties, { answer: { type: 'string' } });
		}
		assert.equal(byId('a1', 'tool_call_update').at(-1).content[0].content.text, 'action=accept answer=Ada');
		assert.equal(byId('a2', 'tool_call_update').at(-1).content[0].content.text, 'action=accept answer=36');
	}), 'the client workflow', 60_000);
	await ends(pid);
	assert.deepEqual(processesOf(bin), [], 'no MCP server outlives pid');
	pid.finish();
});

// A local chat-completions server that answers every request with one text and keeps the
// request bodies: what a real model would be sent.
async function recordingModel(t) {
	const bodies = [];
	const server = http.createServer((req, res) => {
		let body = '';
		req.setEncoding('utf8');
		req.on('data', (d) => { body += d; });
		req.on('end', () => {
			bodies.push(JSON.parse(body));
			res.writeHead(200, { 'Content-Type': 'text/event-stream' });
			res.end('data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
		});
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	t.after(() => new Promise((resolve) => server.close(resolve)));
	return { bodies, model: { provider: 'openai', id: 'm', baseUrl: `http://127.0.0.1:${server.address().port}/v1` } };
}

test(`SDK ${SDK_VERSION}: _meta.systemPrompt replaces or extends pid's system prompt; thought_level is a config option that reaches the model`, async (t) => {
	const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-ws-'));
	t.after(() => fs.rmSync(cwd, { recursive: true, force: true }));
	const { bodies, model } = await recordingModel(t);
	const pid = start(t);
	await within(pid.app.connectWith(pid.stream, async (ctx) => {
		await initialize(ctx);
		// As acpx --append-system-prompt sends it.
		const created = await within(ctx.request(acp.methods.agent.session.new,
			{ cwd, mcpServers: [], _meta: { pid: { model }, systemPrompt: { append: 'Answer in French.' } } }), 'session/new');
		const level = created.configOptions.find((o) => o.id === 'thought_level');
		assert.deepEqual({ category: level.category, type: level.type, currentValue: level.currentValue, values: level.options.map((o) => o.value) },
			{ category: 'thought_level', type: 'select', currentValue: 'off', values: ['off', 'low', 'medium', 'high'] });
		const set = await within(ctx.request(acp.methods.agent.session.setConfigOption,
			{ sessionId: created.sessionId, configId: 'thought_level', value: 'medium' }), 'session/set_config_option');
		assert.equal(set.configOptions.find((o) => o.id === 'thought_level').currentValue, 'medium');
		await within(ctx.request(acp.methods.agent.session.prompt, { sessionId: created.sessionId, prompt: [text('hi')] }), 'session/prompt');

		// As acpx --system-prompt sends it.
		const replaced = await within(ctx.request(acp.methods.agent.session.new,
			{ cwd, mcpServers: [], _meta: { pid: { model }, systemPrompt: 'You review Go code.' } }), 'second session/new');
		await within(ctx.request(acp.methods.agent.session.prompt, { sessionId: replaced.sessionId, prompt: [text('hi')] }), 'second session/prompt');
	}), 'the client workflow', 60_000);
	assert.equal(bodies.length, 2);
	const [extended, own] = bodies.map((b) => b.messages[0]);
	assert.equal(extended.role, 'system');
	assert.ok(extended.content.startsWith('You are pid'), extended.content);
	assert.ok(extended.content.includes(`Working folder: ${cwd}`), extended.content);
	assert.ok(extended.content.endsWith('\n\nAnswer in French.'), extended.content);
	assert.equal(bodies[0].reasoning_effort, 'medium');
	assert.deepEqual(own, { role: 'system', content: 'You review Go code.' });
	assert.equal(bodies[1].reasoning_effort, undefined);
	pid.finish();
});

test(`SDK ${SDK_VERSION}: modes and the mode and model config options; set_mode, set_config_option, current_mode_update, config_option_update, exit_plan_mode`, async (t) => {
	const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-ws-'));
	const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-xdg-'));
	t.after(() => {
		fs.rmSync(cwd, { recursive: true, force: true });
		fs.rmSync(xdg, { recursive: true, force: true });
	});
	const { bodies, model } = await recordingModel(t);
	fs.mkdirSync(path.join(xdg, 'config', 'pid'), { recursive: true });
	fs.writeFileSync(path.join(xdg, 'config', 'pid', 'settings.json'), JSON.stringify({
		models: [{ ...model, name: 'Em' }, { ...model, id: 'm2', name: 'Em two' }],
	}));
	const plan = '1. Add a test\n2. Fix the bug';
	const asked = [];
	const pid = start(t, {
		permission(params) {
			asked.push(params);
			return { outcome: { outcome: 'selected', optionId: params.options.find((o) => o.optionId === 'plan:auto').optionId } };
		},
	}, { xdg });
	const modeOf = (options) => options.find((o) => o.id === 'mode').currentValue;
	// The mode updates pid sent for a session, in order: 'mode X' and 'options X'.
	const modeEvents = (sessionId) => updatesOf(pid.updates, sessionId)
		.filter((u) => u.sessionUpdate === 'current_mode_update' || u.sessionUpdate === 'config_option_update')
		.map((u) => (u.sessionUpdate === 'current_mode_update' ? `mode ${u.currentModeId}` : `options ${modeOf(u.configOptions)}`));
	await within(pid.app.connectWith(pid.stream, async (ctx) => {
		await initialize(ctx);
		const created = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [], _meta: { pid: { model } } }), 'session/new');
		const { sessionId } = created;
		assert.equal(created.modes.currentModeId, 'default');
		assert.deepEqual(created.modes.availableModes.map((m) => m.id), ['default', 'acceptEdits', 'plan', 'auto']);
		assert.deepEqual(created.configOptions.map((o) => o.id), ['mode', 'model', 'thought_level']);
		const [mode, mdl] = created.configOptions;
		assert.deepEqual({ category: mode.category, type: mode.type, currentValue: mode.currentValue, values: mode.options.map((o) => o.value) },
			{ category: 'mode', type: 'select', currentValue: 'default', values: ['default', 'acceptEdits', 'plan', 'auto'] });
		assert.deepEqual({ category: mdl.category, type: mdl.type, currentValue: mdl.currentValue, options: mdl.options },
			{ category: 'model', type: 'select', currentValue: 'openai/m', options: [{ value: 'openai/m', name: 'Em' }, { value: 'openai/m2', name: 'Em two' }] });

		// set_mode: the updates come before its answer.
		assert.deepEqual(await within(ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'auto' }), 'session/set_mode'), {});
		assert.deepEqual(modeEvents(sessionId), ['mode auto', 'options auto']);
		await assert.rejects(ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'bypassPermissions' }), (e) => e.code === -32602);

		const set = await within(ctx.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: 'mode', value: 'acceptEdits' }), 'set_config_option mode');
		assert.equal(modeOf(set.configOptions), 'acceptEdits');
		assert.deepEqual(modeEvents(sessionId), ['mode auto', 'options auto', 'mode acceptEdits', 'options acceptEdits']);

		const setModel = await within(ctx.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: 'model', value: 'openai/m2' }), 'set_config_option model');
		assert.equal(setModel.configOptions.find((o) => o.id === 'model').currentValue, 'openai/m2');
		await within(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('hi')] }), 'session/prompt');
		assert.equal(bodies[0].model, 'm2');

		const resumed = await within(ctx.request(acp.methods.agent.session.resume, { sessionId, cwd, mcpServers: [] }), 'session/resume');
		assert.equal(resumed.modes.currentModeId, 'acceptEdits');
		assert.equal(resumed.configOptions.find((o) => o.id === 'model').currentValue, 'openai/m2');

		// exit_plan_mode: a switch_mode tool call whose permission request shows the plan.
		const planning = await within(ctx.request(acp.methods.agent.session.new, {
			cwd, mcpServers: [], _meta: { pid: { mode: 'plan', model: { provider: 'script', turns: [turn(call('x1', 'exit_plan_mode', { plan })), turn(text('On it.'))] } } },
		}), 'plan session/new');
		assert.equal(planning.modes.currentModeId, 'plan');
		const res = await within(ctx.request(acp.methods.agent.session.prompt, { sessionId: planning.sessionId, prompt: [text('plan it')] }), 'plan session/prompt');
		assert.equal(res.stopReason, 'end_turn');
	}), 'the client workflow', 60_000);
	assert.equal(asked.length, 1);
	assert.equal(asked[0].toolCall.kind, 'switch_mode');
	assert.deepEqual(asked[0].toolCall.content, [{ type: 'content', content: { type: 'text', text: plan } }]);
	assert.deepEqual(asked[0].options.map((o) => o.optionId), ['plan:default', 'plan:acceptEdits', 'plan:auto', 'reject_once']);
	const planUpdates = updatesOf(pid.updates, asked[0].sessionId);
	assert.equal(planUpdates.find((u) => u.sessionUpdate === 'tool_call').kind, 'switch_mode');
	assert.deepEqual(modeEvents(asked[0].sessionId), ['mode auto', 'options auto']);
	pid.finish();
});

test(`SDK ${SDK_VERSION}: available_commands_update after session/new, load and resume; /help's output as a message chunk; a prompt template sent to the model`, async (t) => {
	const pid = start(t);
	const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-ws-'));
	t.after(() => fs.rmSync(cwd, { recursive: true, force: true }));
	// The person's own command, in the XDG_CONFIG_HOME start gave pid.
	const commandsDir = path.join(pid.xdg, 'config', 'pid', 'commands');
	fs.mkdirSync(commandsDir, { recursive: true });
	fs.writeFileSync(path.join(commandsDir, 'greet.md'), '---\ndescription: Greet someone\n---\nSay hello to $ARGUMENTS.\n');
	const builtins = ['compact', 'init', 'review', 'plan', 'mode', 'model', 'mcp', 'rewind', 'jobs', 'help'];
	await within(pid.app.connectWith(pid.stream, async (ctx) => {
		await initialize(ctx);
		const meta = { pid: { model: { provider: 'script', turns: [turn(text('Hello, world!'))] } } };
		const { sessionId } = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [], _meta: meta }), 'session/new');
		// /help: pid sent the commands right after session/new's answer, so they come before
		// anything of this prompt; its text comes as a message chunk.
		const help = await within(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('/help')] }), '/help');
		assert.equal(help.stopReason, 'end_turn');
		assert.equal(help._meta.pid.command.name, 'help');
		const all = pid.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
		assert.equal(all[0].sessionUpdate, 'available_commands_update', 'the commands come first');
		assert.deepEqual(commandsOf(pid.updates, sessionId), [[...builtins, 'greet']]);
		const greet = all[0].availableCommands.find((c) => c.name === 'greet');
		assert.deepEqual(greet, { name: 'greet', description: 'Greet someone', input: { hint: 'arguments' } });
		const shown = updatesOf(pid.updates, sessionId).filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text).join('');
		assert.equal(shown, help._meta.pid.command.output);
		assert.match(shown, /^- `\/greet` \[arguments\]: Greet someone \(yours\)$/m);
		assert.match(shown, /^- `\/compact` \[/m);
		const at = pid.tap.responseIndex('session/prompt', sessionId);
		assert.equal(pid.tap.fromPid().slice(at + 1).filter((m) => m.method === 'session/update').length, 0, 'nothing after the answer');

		// A template: the model gets it filled in (the replay shows what it got), and /help's
		// text never entered the conversation.
		const before = pid.updates.length;
		const res = await within(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('/greet the world')] }), '/greet');
		assert.equal(res._meta.pid.command.name, 'greet');
		assert.deepEqual(pid.updates.slice(before).filter(notUsage).map((n) => describe(n.update)), ['agent_message_chunk Hello, world!']);
		await within(ctx.request(acp.methods.agent.session.close, { sessionId }), 'session/close');
		const mark = pid.updates.length;
		await within(ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }), 'session/load');
		assert.deepEqual(pid.updates.slice(mark).map((n) => describe(n.update)),
			['user_message_chunk Say hello to the world.', 'agent_message_chunk Hello, world!', 'available_commands_update']);
		const resumeMark = pid.updates.length;
		await within(ctx.request(acp.methods.agent.session.resume, { sessionId, cwd, mcpServers: [] }), 'session/resume');
		assert.deepEqual(pid.updates.slice(resumeMark).map((n) => describe(n.update)), ['available_commands_update']);
	}), 'the commands', 60_000);
	await ends(pid);
	pid.finish();
});

test(`SDK ${SDK_VERSION}: todo_write's plan (no permission asked, every entry each time, the last one after session/load's replay); usage_update after each model call with the cost of a priced model`, async (t) => {
	const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-xdg-'));
	t.after(() => fs.rmSync(xdg, { recursive: true, force: true }));
	const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-ws-'));
	t.after(() => fs.rmSync(cwd, { recursive: true, force: true }));
	const first = [{ content: 'Look around', status: 'in_progress', priority: 'high' }, { content: 'Answer', status: 'pending' }];
	const second = [{ content: 'Look around', status: 'completed', priority: 'high' }, { content: 'Answer', status: 'in_progress', priority: 'low' }];
	const meta = {
		model: {
			provider: 'script', contextWindow: 100000, price: { input: 2, output: 10, cacheRead: 0.5 },
			turns: [
				{ ...turn(call('p1', 'todo_write', { todos: first })), usage: { input: 1000, output: 20, cacheRead: 500 } },
				{ ...turn(call('p2', 'todo_write', { todos: second })), usage: { input: 1200, output: 30, cacheRead: 500 } },
				{ ...turn(text('Done.')), usage: { input: 300, output: 40, cacheRead: 1500 } },
			],
		},
	};
	const medium = (es) => es.map((e) => ({ priority: 'medium', ...e }));
	const pid = start(t, {}, { xdg }); // no permission handler: a request would fail the test
	let sessionId;
	await within(pid.app.connectWith(pid.stream, async (ctx) => {
		await initialize(ctx);
		({ sessionId } = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [], _meta: { pid: meta } }), 'session/new'));
		const res = await within(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('Plan it.')] }), 'session/prompt');
		assert.equal(res.stopReason, 'end_turn');
		const us = pid.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
		// The whole plan each time, priority medium where the model gave none.
		assert.deepEqual(us.filter((u) => u.sessionUpdate === 'plan').map((u) => u.entries), [medium(first), medium(second)]);
		// A usage_update after each of the three model calls; the cost adds up.
		const usage = us.filter((u) => u.sessionUpdate === 'usage_update');
		const costs = [(1000 * 2 + 20 * 10 + 500 * 0.5) / 1e6, (1200 * 2 + 30 * 10 + 500 * 0.5) / 1e6, (300 * 2 + 40 * 10 + 1500 * 0.5) / 1e6];
		assert.deepEqual(usage.map((u) => [u.used, u.size, u.cost.currency]), [[1520, 100000, 'USD'], [1730, 100000, 'USD'], [1840, 100000, 'USD']]);
		let total = 0;
		usage.forEach((u, i) => {
			total += costs[i];
			assert.ok(Math.abs(u.cost.amount - total) < 1e-12, `cost ${i}: ${u.cost.amount}, want ${total}`);
		});
		assert.equal(us.at(-1).sessionUpdate, 'usage_update', 'the turn ends with the usage of its last call');
	}), 'the plan and the usage', 60_000);
	await ends(pid);
	pid.finish();

	// Another pid loads the session: the replay, then the last plan, before the answer.
	const next = start(t, {}, { xdg });
	await within(next.app.connectWith(next.stream, async (ctx) => {
		await initialize(ctx);
		await within(ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }), 'session/load');
		const us = updatesOf(next.updates, sessionId);
		assert.equal(us.filter((u) => u.sessionUpdate === 'plan').length, 1, 'one plan: the last one');
		assert.deepEqual(us.at(-1), { sessionUpdate: 'plan', entries: medium(second) });
		const at = next.tap.responseIndex('session/load', sessionId);
		assert.equal(next.tap.fromPid().slice(at + 1).filter((m) => m.method === 'session/update').length, 0, 'nothing after the load response');
	}), 'the load', 60_000);
	await ends(next);
	next.finish();
});

test(`SDK ${SDK_VERSION}: a client with terminals runs pid's bash in them, in pid's sandbox; the tool call shows the terminal`, async (t) => {
	const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-ws-')));
	const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-acp-outside-'));
	t.after(() => {
		fs.rmSync(cwd, { recursive: true, force: true });
		fs.rmSync(outside, { recursive: true, force: true });
	});
	// The client's terminals: each runs its command as a child, its output kept whole.
	const terms = new Map();
	const created = [];
	const exitOf = (term) => ({ exitCode: term.code, signal: term.signal });
	const terminal = {
		create(params) {
			created.push(params);
			const env = { ...process.env };
			for (const e of params.env ?? []) env[e.name] = e.value;
			const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
			const term = { output: '', code: null, signal: null };
			term.exited = new Promise((resolve) => child.on('close', (code, signal) => { term.code = code; term.signal = signal; resolve(); }));
			child.stdout.on('data', (d) => { term.output += d; });
			child.stderr.on('data', (d) => { term.output += d; });
			term.child = child;
			const terminalId = `term-${created.length}`;
			terms.set(terminalId, term);
			return { terminalId };
		},
		async waitForExit({ terminalId }) {
			const term = terms.get(terminalId);
			await term.exited;
			return exitOf(term);
		},
		output({ terminalId }) {
			const term = terms.get(terminalId);
			return { output: term.output, truncated: false, ...(term.code !== null || term.signal !== null ? { exitStatus: exitOf(term) } : {}) };
		},
		kill({ terminalId }) {
			terms.get(terminalId).child.kill('SIGTERM');
			return {};
		},
		release() {
			return {};
		},
	};
	const pid = start(t, { terminal });
	const command = `echo from the terminal; echo x > ${path.join(outside, 'out')}; echo in > in`;
	const meta = { permissions: { tools: { bash: 'allow' } }, model: { provider: 'script', turns: [turn(call('b1', 'bash', { command })), turn(text('Ran it.'))] } };
	await within(pid.app.connectWith(pid.stream, async (ctx) => {
		await within(ctx.request(acp.methods.agent.initialize, {
			protocolVersion: acp.PROTOCOL_VERSION,
			clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
			clientInfo: { name: 'pid-acp-test', version: '1' },
		}), 'initialize');
		const { sessionId } = await within(ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [], _meta: { pid: meta } }), 'session/new');
		const res = await within(ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('run it')] }), 'session/prompt');
		assert.equal(res.stopReason, 'end_turn');
		assert.equal(created.length, 1, 'one terminal');
		const [c] = created;
		assert.ok(path.isAbsolute(c.command), c.command);
		assert.deepEqual(c.args.slice(0, 2), ['sandbox-exec', '--holder'], `pid's sandbox runs the command: ${JSON.stringify(c.args)}`);
		assert.equal(c.cwd, cwd);
		assert.ok(!fs.existsSync(path.join(outside, 'out')), 'the write outside the workspace failed in the terminal');
		assert.equal(fs.readFileSync(path.join(cwd, 'in'), 'utf8'), 'in\n', 'the write in the workspace was made');
		const b1 = updatesOf(pid.updates, sessionId).filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'b1');
		assert.ok(b1.some((u) => u.content?.[0]?.type === 'terminal' && u.content[0].terminalId === 'term-1' && u.status !== 'completed'), `the terminal shown while it runs: ${JSON.stringify(b1)}`);
		const end = b1.find((u) => u.status === 'completed');
		assert.equal(end?.content?.[0]?.type, 'terminal');
		assert.match(end.content[1].content.text, /from the terminal/);
	}), 'the terminal', 60_000);
	await ends(pid);
	pid.finish();
});
