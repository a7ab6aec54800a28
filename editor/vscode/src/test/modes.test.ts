// Session modes and plans: the pure parts (pid's modes read, Shift+Tab's order, a plan's
// question and answers), the chat's plan card, and the controller against the real pid: a
// mode picked before the session starts it, Shift+Tab's cycle through session/setMode, a plan
// shown whole and approved into acceptEdits (modeUpdate moves the mode button; the next write
// runs unasked), a plan kept with a reason, and the mode restored by session/load.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ALLOW, DENY, answer, question } from '../approval';
import { ChatModel, viewOf } from '../chat';
import { DEFAULT_MODES, nextMode, readModes } from '../modes';
import type { BeforeToolCallParams } from '../protocol';
import { STEP_TIMEOUT_MS, start, text, until, within } from './harness';

const T = { timeout: 60_000 };

/** A plan longer than any limit an approval used to have (400 and 2000 characters), ending in a line to look for. */
const LONG_PLAN = `# Plan: tidy the notes\n\n${Array.from({ length: 60 }, (_, i) => `${i + 1}. Step ${i + 1}: rewrite section ${i + 1} of notes.md so that it says what it means.`).join('\n')}\n\nLast line: **then stop**.`;

test('readModes reads pid\'s modes, nextMode is Shift+Tab\'s order', () => {
	assert.equal(readModes(undefined), undefined);
	assert.equal(readModes({ availableModes: [] }), undefined, 'no current mode: no modes');
	const m = readModes({ currentModeId: 'plan', availableModes: [{ id: 'default', name: 'Default' }, { id: 'plan' }, { name: 'no id' }, { id: 'default', name: 'twice' }] });
	assert.deepEqual(m, { currentModeId: 'plan', availableModes: [{ id: 'default', name: 'Default' }, { id: 'plan', name: 'plan' }] });
	const ids = (from: string, n: number) => {
		const out: string[] = [];
		let cur = from;
		for (let i = 0; i < n; i++) {
			cur = nextMode(DEFAULT_MODES, cur)?.id ?? '?';
			out.push(cur);
		}
		return out;
	};
	assert.deepEqual(ids('default', 5), ['acceptEdits', 'plan', 'auto', 'default', 'acceptEdits']);
	assert.equal(nextMode(DEFAULT_MODES, 'bypassPermissions')?.id, 'default', 'a mode not listed goes to the first');
	assert.equal(nextMode([{ id: 'default', name: 'Default' }], 'default'), undefined, 'nothing to switch to');
});

test('a plan\'s question holds the whole plan; its answers: Approve (default), Approve in acceptEdits or auto, Keep planning', () => {
	const params: BeforeToolCallParams = { sessionId: 's', toolCallId: 'p1', toolName: 'exit_plan_mode', args: { plan: LONG_PLAN } };
	const q = question(params);
	assert.equal(q.plan, LONG_PLAN, 'the plan is not cut');
	assert.equal(q.detail, LONG_PLAN);
	assert.equal(q.always, undefined);
	assert.deepEqual(q.choices, [ALLOW, DENY]);
	assert.deepEqual(q.planModes, ['acceptEdits', 'auto']);
	assert.deepEqual(answer(ALLOW, 'exit_plan_mode', q.choices), { decision: 'allow' });
	assert.deepEqual(answer(ALLOW, 'exit_plan_mode', q.choices, 'acceptEdits'), { decision: 'allow', mode: 'acceptEdits' });
	assert.deepEqual(answer(ALLOW, 'exit_plan_mode', q.choices, 'auto'), { decision: 'allow', mode: 'auto' });
	assert.deepEqual(answer(ALLOW, 'exit_plan_mode', q.choices, 'bypassPermissions'), { decision: 'allow' }, 'never a mode a plan may not go on in');
	assert.deepEqual(answer(ALLOW, 'write', q.choices, 'auto'), { decision: 'allow' }, 'mode is for plans only');
	assert.deepEqual(answer(DENY, 'exit_plan_mode', q.choices), { decision: 'deny' });
});

test('the chat shows a plan whole, rendered, with its choices; an approval names the mode pid goes on in', async () => {
	const chat = new ChatModel();
	chat.handle('toolStart', { sessionId: 's', toolCallId: 'p1', toolName: 'exit_plan_mode', args: { plan: LONG_PLAN } });
	const params: BeforeToolCallParams = { sessionId: 's', toolCallId: 'p1', toolName: 'exit_plan_mode', args: { plan: LONG_PLAN } };
	const answered = chat.askApproval(params, question(params), false);
	const card = chat.tool('p1');
	assert.ok(card);
	assert.equal(card.plan, LONG_PLAN);
	assert.equal(card.title, 'the plan: Plan: tidy the notes');
	assert.deepEqual(card.approval?.planModes?.map((m) => m.name), ['Accept edits', 'Auto']);
	const html = viewOf(card).html ?? '';
	assert.match(html, /^<h1>Plan: tidy the notes<\/h1>/, 'rendered as markdown');
	assert.match(html, /<li>Step 60: rewrite section 60/, 'to its last step');
	assert.match(html, /Last line: <strong>then stop<\/strong>/);
	assert.equal(chat.state.status, 'approval');
	assert.equal(chat.answerApproval('p1', ALLOW, undefined, 'bypassPermissions'), false, 'a mode the plan does not offer is refused');
	assert.equal(chat.answerApproval('p1', ALLOW, undefined, 'acceptEdits'), true);
	assert.deepEqual(await answered, { choice: ALLOW, mode: 'acceptEdits' });
	assert.equal(card.approval?.state, 'allowed');
	assert.equal(card.approval?.approvedMode?.name, 'Accept edits');
});

/** A scripted model that plans in plan mode: exit_plan_mode twice (kept, then approved), then a write. */
function planModel(plan1: string, plan2: string) {
	return {
		provider: 'script',
		turns: [
			{ content: [{ type: 'toolCall', id: 'p1', name: 'exit_plan_mode', arguments: { plan: plan1 } }] },
			{ content: [{ type: 'toolCall', id: 'p2', name: 'exit_plan_mode', arguments: { plan: plan2 } }] },
			{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'notes.md', content: 'tidy\n' } }] },
			{ content: text('Done as planned.') },
		],
	};
}

test('against pid: a mode picked before the session starts it; a plan kept with a reason, then approved into acceptEdits, whose write runs unasked', T, async (t) => {
	const h = start(t, { workspace: true, answer: () => new Promise<undefined>(() => {}), session: { model: planModel('1. Tidy.', LONG_PLAN) } });
	const pid = () => h.c.pid; // (not narrowed by the assertion below)
	assert.equal(h.c.chat.state.mode?.id, 'default', 'the button shows Default before a session');
	await h.c.setMode('plan');
	assert.equal(h.c.chat.state.mode?.name, 'Plan');
	assert.ok(h.c.pid === undefined, 'no pid is started for it: the next session/new carries it');

	const running = h.c.ask('tidy my notes');
	await until(() => h.c.chat.pendingApprovals().includes('p1'), 'the first plan in the chat');
	assert.equal(h.c.chat.state.mode?.id, 'plan', 'session/new started in plan mode');
	const sid = h.c.currentSession as string;
	assert.ok((await pid()?.listTools(sid))?.some((x) => x.name === 'exit_plan_mode'), 'pid offers exit_plan_mode');
	assert.ok(h.c.chat.answerApproval('p1', DENY, 'Say what the sections become.'));
	await until(() => h.c.chat.pendingApprovals().includes('p2'), 'the second plan in the chat');
	assert.equal(h.c.chat.tool('p1')?.status, 'denied');
	assert.match(h.c.chat.tool('p1')?.output ?? '', /did not approve the plan: Say what the sections become\. Keep planning/, 'the reason reached the model as typed');
	assert.equal(h.c.chat.state.mode?.id, 'plan', 'kept planning: still plan mode');
	assert.equal(h.c.chat.tool('p2')?.plan, LONG_PLAN, 'the whole plan on the card');
	assert.ok(h.c.chat.answerApproval('p2', ALLOW, undefined, 'acceptEdits'));
	const run = await within(running, 'the run', STEP_TIMEOUT_MS);
	assert.equal(run?.state, 'done', h.ui.lines.join('\n'));
	assert.equal(h.c.chat.state.mode?.id, 'acceptEdits', 'modeUpdate moved the button');
	assert.equal(h.c.chat.tool('w1')?.approval, undefined, 'the write ran unasked (acceptEdits)');
	assert.equal(fs.readFileSync(path.join(h.ws, 'notes.md'), 'utf8'), 'tidy\n');
	assert.ok(h.ui.lines.includes('pid: the session is now in Accept edits mode'), h.ui.lines.join('\n'));
	assert.ok((await pid()?.listTools(sid))?.some((x) => x.name === 'exit_plan_mode'), 'the tool list is the same in every mode (the prompt cache holds): exit_plan_mode stays offered');
	await h.shutdown();
});

test('against pid: Shift+Tab cycles the session\'s modes through session/setMode; the mode survives session/load in another pid', T, async (t) => {
	const h = start(t, { workspace: true, session: { model: { provider: 'script', turns: [{ content: text('hi') }] } } });
	assert.equal((await within(h.c.ask('hello'), 'the first prompt', STEP_TIMEOUT_MS))?.state, 'done');
	const sid = h.c.currentSession as string;
	const seen: string[] = [];
	for (let i = 0; i < 4; i++) {
		await h.c.cycleMode();
		seen.push(h.c.chat.state.mode?.id ?? '?');
	}
	assert.deepEqual(seen, ['acceptEdits', 'plan', 'auto', 'default']);
	assert.deepEqual(h.c.modes.available.map((m) => m.id), ['default', 'acceptEdits', 'plan', 'auto'], 'no bypassPermissions without the user setting');
	await assert.rejects(h.c.setMode('bypassPermissions'), /does not offer the mode "bypassPermissions"/);
	await h.c.setMode('plan');
	assert.ok((await h.c.pid?.listTools(sid))?.some((x) => x.name === 'exit_plan_mode'), 'pid is in plan mode');
	await h.shutdown();

	// Another pid (a restart of VS Code) loads the session: the button says Plan again.
	const h2 = start(t, { xdg: h.xdg, workspaceFolders: [{ uri: `file://${h.ws}`, name: 'ws' }] });
	assert.equal(h2.c.chat.state.mode?.id, 'default');
	await within(h2.c.resume(sid), 'session/load', STEP_TIMEOUT_MS);
	assert.equal(h2.c.chat.state.mode?.id, 'plan', 'session/load\'s modes');
	assert.equal(h2.c.chat.state.mode?.name, 'Plan');
	// A new session starts in default again.
	h2.c.newSession();
	assert.equal(h2.c.chat.state.mode?.id, 'default');
	await h2.shutdown();
});

test('a controller that replaces another (pid restarted for new settings) starts its session in the mode the chat shows', T, async (t) => {
	const chat = new ChatModel();
	chat.setState({ mode: { id: 'auto', name: 'Auto' } });
	const h = start(t, { workspace: true, chat, session: { model: { provider: 'script', turns: [{ content: text('hi') }] } } });
	assert.equal((await within(h.c.ask('hello'), 'the prompt', STEP_TIMEOUT_MS))?.state, 'done');
	assert.equal(chat.state.mode?.id, 'auto', 'pid answered session/new with the mode the chat showed');
	assert.equal(h.c.modes.current, 'auto');
	await h.shutdown();
});

test('against pid: before the first message the mode picker lists pid\'s own modes, bypassPermissions when the user settings allow it; picked, the first prompt runs in it', T, async (t) => {
	const h = start(t, {
		workspace: true,
		answer: () => {
			throw new Error('nothing asks in bypassPermissions');
		},
		session: { model: { provider: 'script', turns: [{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'a\n' } }] }, { content: text('done') }] } },
	});
	fs.mkdirSync(path.join(h.xdg, 'config', 'pid'), { recursive: true });
	fs.writeFileSync(path.join(h.xdg, 'config', 'pid', 'settings.json'), JSON.stringify({ allowBypassPermissions: true }));
	assert.deepEqual(h.c.modes.available.map((m) => m.id), ['default', 'acceptEdits', 'plan', 'auto'], 'without a session: the modes every pid offers');
	const offered = await within(h.c.offeredModes(), 'the modes pid offers', STEP_TIMEOUT_MS);
	assert.ok(offered.available.some((m) => m.id === 'bypassPermissions'), JSON.stringify(offered));
	assert.equal(offered.current, 'default');
	assert.equal(h.c.chat.all().filter((i) => i.kind === 'user').length, 0, 'no message sent');
	await h.c.setMode('bypassPermissions');
	const run = await within(h.c.ask('write a'), 'the prompt', STEP_TIMEOUT_MS);
	assert.equal(run?.state, 'done', h.ui.lines.join('\n'));
	assert.equal(fs.readFileSync(path.join(h.ws, 'a.txt'), 'utf8'), 'a\n', 'the write ran without asking');
	assert.equal(h.ui.asked.length, 0);
	assert.equal(h.c.chat.state.title, 'write a', 'the session made for the picker is titled by its first message');
	await h.shutdown();
});
