// Saved sessions: "pid: Resume Session"'s logic (list, pick, load, continue) against two real
// pid processes sharing one state folder, the transcript rendered like a live run, compaction
// lines, and a session another pid holds; the pure helpers alone.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { REQUEST_FAILED, INVALID_PARAMS } from '../client';
import { BusyError } from '../controller';
import type { SessionItem, SessionSummary } from '../protocol';
import { transcriptEntries, type Run } from '../run';
import { ResumeError, relativeTime, sessionPick, shortFolder } from '../sessions';
import { STEP_TIMEOUT_MS, ask, start, text, until, within, type Harness } from './harness';

const T = { timeout: 60_000 };

const END = 'pid: — end of the saved transcript: "pid: Ask" continues this session —';

/** The UI's lines from the resume header on (the header included). */
function resumedLines(h: Harness, sessionId: string): string[] {
	const i = h.ui.lines.findIndex((l) => l.startsWith(`pid: resumed session ${sessionId}`));
	assert.notEqual(i, -1, `no resume header in:\n${h.ui.lines.join('\n')}`);
	return h.ui.lines.slice(i);
}

async function listed(h: Harness, sessionId: string): Promise<SessionSummary> {
	const { sessions } = await within(h.c.listSessions(), 'session/list', STEP_TIMEOUT_MS);
	const s = sessions.find((x) => x.sessionId === sessionId);
	assert.ok(s, `session/list has no ${sessionId}: ${JSON.stringify(sessions)}`);
	return s;
}

test('resume in a second pid: listed with title and folder, the transcript shown as the live run was, the next prompt continues it', T, async (t) => {
	const h1 = start(t, {
		workspace: true,
		session: {
			model: { provider: 'script', turns: [
				{ content: [{ type: 'toolCall', id: 'c1', name: 'probe', arguments: { path: 'a.txt' } }] },
				{ content: text('probed') },
				{ content: text('second answer') },
			] },
			scriptedTools: [{ name: 'probe', steps: [{ result: { content: text('ok') } }] }],
		},
	});
	const run1 = await ask(h1, 'Probe it, please.');
	assert.equal(run1.answer, 'probed');
	const sid = h1.c.currentSession;
	assert.ok(sid, 'the first pid has a current session');
	await h1.shutdown();

	// A second pid with the same state folder and workspace, and no session params of its own:
	// the saved session brings its model and tools.
	const h2 = start(t, { xdg: h1.xdg, workspaceFolders: [{ uri: pathToFileURL(h1.ws).href, name: 'ws' }] });
	assert.equal(h2.c.currentSession, undefined);
	const s = await listed(h2, sid);
	assert.equal(s.title, 'Probe it, please.');
	assert.equal(s.cwd, h1.ws);
	assert.equal(s.messageCount, 4);

	// The QuickPick item: title, folder, when and how many messages.
	const pick = sessionPick(s, new Date(), { home: '/nonexistent-home' });
	assert.equal(pick.label, 'Probe it, please.');
	assert.equal(pick.description, h1.ws);
	assert.match(pick.detail, /^(just now|\d+ minutes? ago) · 4 messages$/);
	assert.equal(pick.sessionId, sid);

	const loaded = await within(h2.c.resume(pick.sessionId, pick.summary), 'session/load', STEP_TIMEOUT_MS);
	assert.equal(loaded.sessionId, sid);
	assert.deepEqual(loaded.messages.map((m) => m.role), ['user', 'assistant', 'toolResult', 'assistant']);
	assert.ok(loaded.tools.some((x) => x.name === 'probe'), 'the scripted tool is back');
	assert.equal(h2.c.currentSession, sid);

	// The output: a header, then the transcript exactly as the live run showed it, then a footer.
	const shown = resumedLines(h2, sid);
	assert.equal(shown[0], `pid: resumed session ${sid} "Probe it, please." (4 messages, in ${h1.ws})`);
	assert.deepEqual(shown.slice(1, -1), run1.lines(), 'the transcript reads as the live run did');
	assert.deepEqual(run1.lines(), ['> Probe it, please.', '[c1] probe started path="a.txt"', '[c1] probe done: ok', '\nprobed\n', '— done (stop) —']);
	assert.equal(shown.at(-1), END);

	// The next prompt continues it: no new session, the scripted model plays its third turn.
	const run2 = await ask(h2, 'Again?');
	assert.equal(run2.sessionId, sid);
	assert.equal(run2.answer, 'second answer');
	assert.ok(!h2.ui.lines.some((l) => l.startsWith('pid: new session')), h2.ui.lines.join('\n'));
	assert.equal((await listed(h2, sid)).messageCount, 6);
	await h2.shutdown();
});

test('a session another live pid holds: said in words, the current session is unchanged; once closed there it loads', T, async (t) => {
	const h1 = start(t, { session: { model: { provider: 'script', turns: [{ content: text('one') }, { content: text('two') }] } } });
	await ask(h1, 'hold it');
	const sid = h1.c.currentSession;
	assert.ok(sid);

	const h2 = start(t, { xdg: h1.xdg, session: { model: { provider: 'script', turns: [{ content: text('mine') }] } } });
	await ask(h2, 'my own');
	const own = h2.c.currentSession;
	const err = await within(h2.c.resume(sid), 'session/load', STEP_TIMEOUT_MS).then(() => undefined, (e: unknown) => e);
	assert.ok(err instanceof ResumeError, `resume failed with ${String(err)}`);
	assert.equal(err.code, REQUEST_FAILED);
	assert.match(err.message, new RegExp(`^the session ${sid} is open in another pid \\(another editor window, or a pid still running\\): close it there, or quit that editor, then resume it again\\. pid says: .*process \\d+`));
	assert.ok(h2.ui.lines.includes(`! ${err.message}`), 'the output channel says it too');
	assert.equal(h2.c.currentSession, own, 'the current session is unchanged');

	// An id pid does not know: said in words.
	const unknown = await h2.c.resume('no-such-session').then(() => undefined, (e: unknown) => e);
	assert.ok(unknown instanceof ResumeError);
	assert.equal(unknown.code, INVALID_PARAMS);
	assert.match(unknown.message, /^pid has no saved session no-such-session any more/);

	// Closed in the first pid, the second loads it and closes its own previous session, which
	// the first pid can then load in turn.
	await h1.c.pid?.closeSession(sid);
	await within(h2.c.resume(sid), 'session/load after the close', STEP_TIMEOUT_MS);
	assert.equal(h2.c.currentSession, sid);
	const run = await ask(h2, 'again');
	assert.equal(run.answer, 'two', 'the model goes on with its second turn');
	assert.ok(own);
	await within(h1.c.resume(own), "the first pid loads the second's previous session", STEP_TIMEOUT_MS);
	assert.equal(h1.c.currentSession, own);
	await h1.shutdown();
	await h2.shutdown();
});

test('a session of a folder this window does not have: pid refuses, said in words with the folder', T, async (t) => {
	const h1 = start(t, { workspace: true, session: { model: { provider: 'script', turns: [{ content: text('one') }] } } });
	await ask(h1, 'elsewhere');
	const sid = h1.c.currentSession;
	assert.ok(sid);
	await h1.shutdown();
	const h2 = start(t, { xdg: h1.xdg, workspace: true });
	const s = await listed(h2, sid);
	assert.equal(s.cwd, h1.ws);
	const err = await h2.c.resume(sid, s).then(() => undefined, (e: unknown) => e);
	assert.ok(err instanceof ResumeError, String(err));
	assert.equal(err.code, INVALID_PARAMS);
	assert.ok(err.message.startsWith(`the session ${sid} worked in ${h1.ws} that is not a folder of this window, and pid's tools reach only this window's folders: open that folder (or add it to the workspace), then resume it again. pid says: `), err.message);
	assert.equal(h2.c.currentSession, undefined);
	await h2.shutdown();
});

test('compaction: shown live as it starts and ends, and in the loaded transcript where it happened', T, async (t) => {
	const big = 'x'.repeat(4000); // about 1000 tokens
	const h1 = start(t, {
		session: {
			model: { provider: 'script', contextWindow: 20000, compaction: { reserveTokens: 2000, keepRecentTokens: 1500 }, turns: [
				{ content: text('one'), usage: { input: 3000, output: 10 } },
				// Past the threshold (20000 - 2000): the next prompt compacts before its model call.
				{ content: text('two'), usage: { input: 19000, output: 10 } },
				{ content: text('three') },
			], summaries: [{ content: text('## Goal\nsummary one') }] },
		},
	});
	const runs: Run[] = [];
	for (const p of [`a ${big}`, `b ${big}`, `c ${big}`]) {
		runs.push(await ask(h1, p));
	}
	assert.deepEqual(runs.map((r) => r.answer), ['one', 'two', 'three']);
	const live = runs[2].lines();
	const starting = live.indexOf('pid: compacting the conversation (it neared the context window)…');
	const compacted = live.findIndex((l) => l.startsWith('pid: the conversation was compacted (it neared the context window, '));
	assert.ok(starting > 0 && compacted === starting + 1, `the compaction lines:\n${live.join('\n')}`);
	// compactionEnd's summary is the whole message the model now sees: the summary within pid's words.
	assert.match(live[compacted], /, \d+ tokens before\); the model now sees this summary instead of the older messages:\n[\s\S]*\n {4}## Goal\n {4}summary one\n/);
	assert.ok(compacted < live.indexOf('\nthree\n'), 'before the answer');
	const sid = h1.c.currentSession;
	assert.ok(sid);
	await h1.shutdown();

	const h2 = start(t, { xdg: h1.xdg });
	const loaded = await within(h2.c.resume(sid), 'session/load', STEP_TIMEOUT_MS);
	assert.deepEqual(loaded.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user', 'compaction', 'assistant']);
	// The transcript is the three live runs, less the line saying a compaction starts.
	const shown = resumedLines(h2, sid).slice(1, -1);
	// A loaded compaction has the model's summary alone, the live one the message the model saw: the same head.
	const head = (l: string) => (l.startsWith('pid: the conversation was compacted') ? l.split('\n')[0] : l);
	assert.deepEqual(shown.map(head), runs.flatMap((r) => r.lines()).filter((l) => !l.startsWith('pid: compacting')).map(head));
	assert.match(shown.find((l) => l.startsWith('pid: the conversation was compacted')) ?? '', /\n {4}## Goal\n {4}summary one$/);
	await h2.shutdown();
});

test('a resume while a prompt runs is refused; a prompt while a resume loads is refused', T, async (t) => {
	const h = start(t, {
		session: {
			model: { provider: 'script', turns: [{ content: [{ type: 'toolCall', id: 'z', name: 'sleepy', arguments: {} }] }, { content: text('after') }] },
			scriptedTools: [{ name: 'sleepy', steps: [{ update: { content: text('sleeping\n') } }, { sleepMs: 30_000 }, { result: { content: text('woke') } }] }],
		},
	});
	const pending = h.c.ask('sleep');
	await until(() => h.c.run?.entries.some((e) => e.kind === 'toolUpdate') ?? false, 'the tool to run');
	const sid = h.c.currentSession;
	assert.ok(sid);
	await assert.rejects(h.c.resume(sid), BusyError);
	h.c.cancel();
	await within(pending, 'the cancelled prompt', STEP_TIMEOUT_MS);

	// While a load runs, a prompt is refused (it would go to the session being replaced).
	const loading = h.c.resume(sid);
	assert.equal(h.c.busy, true);
	await assert.rejects(h.c.ask('now'), (e: unknown) => e instanceof BusyError && /loading a saved session/.test(e.message));
	await within(loading, 'the load', STEP_TIMEOUT_MS);
	assert.equal(h.c.busy, false);
	// A live session loads as it is: its cancelled exchange ends as the live run did.
	const shown = resumedLines(h, sid);
	const live = (h.ui.lines.slice(h.ui.lines.indexOf('> sleep')));
	assert.deepEqual(shown.slice(1, 5), ['> sleep', '[z] sleepy started', '[z] sleepy failed: Operation aborted', '— cancelled (aborted) —']);
	assert.ok(live.includes('— cancelled (aborted) —'), 'the live run ended so too');
	await h.shutdown();
});

test('transcriptEntries: errors, cut-off replies, unknown roles and results without a name', () => {
	const items = [
		{ role: 'user', content: text('hi') },
		{ role: 'assistant', content: [...text('Let me look.'), { type: 'toolCall', id: 'c', name: 'ls', arguments: {} }], stopReason: 'toolUse' },
		{ role: 'toolResult', toolCallId: 'c', content: text('a\nb'), isError: false },
		{ role: 'assistant', content: [], stopReason: 'error', errorMessage: 'the provider failed' },
		{ role: 'mystery' },
		null,
		{ role: 'user', content: text('again') },
		{ role: 'compaction', summary: '', tokensBefore: 0, firstKeptIndex: 6, reason: 'manual' },
	] as unknown as SessionItem[];
	assert.deepEqual(transcriptEntries(items).map((e) => e.line), [
		'> hi',
		'pid: Let me look.',
		'[c] ls started',
		'[c] ls done\n    a\n    b',
		'! the provider failed',
		'— failed (error) —',
		'> again',
		'pid: the conversation was compacted (on request); the model now sees this summary instead of the older messages: (empty)',
		'— ended before the model answered (pid stopped?) —',
	]);
	assert.deepEqual(transcriptEntries([]), []);
});

test('relativeTime and the pick item', () => {
	const now = new Date('2026-12-01T12:00:00Z');
	const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
	const m = 60_000;
	const h = 60 * m;
	const d = 24 * h;
	assert.equal(relativeTime(ago(10_000), now), 'just now');
	assert.equal(relativeTime(ago(-5 * m), now), 'just now', 'a time in the future');
	assert.equal(relativeTime(ago(m), now), '1 minute ago');
	assert.equal(relativeTime(ago(59 * m), now), '59 minutes ago');
	assert.equal(relativeTime(ago(3 * h + 5 * m), now), '3 hours ago');
	assert.equal(relativeTime(ago(d + h), now), 'yesterday');
	assert.equal(relativeTime(ago(3 * d), now), '3 days ago');
	assert.equal(relativeTime(ago(14 * d), now), '2 weeks ago');
	assert.equal(relativeTime(ago(65 * d), now), '2 months ago');
	assert.equal(relativeTime(ago(400 * d), now), 'last year');
	assert.equal(relativeTime('not a time', now), 'not a time');

	assert.equal(shortFolder('/home/me/src/x', '/home/me'), '~/src/x');
	assert.equal(shortFolder('/home/me', '/home/me'), '~');
	assert.equal(shortFolder('/home/mess', '/home/me'), '/home/mess');
	const p = sessionPick({ sessionId: 's', cwd: '/home/me/w', title: 'fix\nthe  bug', createdAt: ago(d), updatedAt: ago(3 * h), messageCount: 1 }, now, { home: '/home/me', current: 's' });
	assert.deepEqual([p.label, p.description, p.detail], ['fix the bug', '~/w', '3 hours ago · 1 message · the current session']);
	assert.equal(sessionPick({ sessionId: 't', cwd: '/w', title: '', createdAt: '', updatedAt: ago(0), messageCount: 0 }, now).label, '(no text)');
	const at = (cwd: string) => sessionPick({ sessionId: 'u', cwd, title: 'x', createdAt: '', updatedAt: ago(0), messageCount: 2 }, now, { folders: ['/w', '/v'] }).detail;
	assert.equal(at('/w'), 'just now · 2 messages');
	assert.equal(at('/v/sub'), 'just now · 2 messages');
	assert.equal(at('/ww'), 'just now · 2 messages · another folder: open it in this window to resume');
	assert.equal(at('/'), 'just now · 2 messages · another folder: open it in this window to resume');
});

test('listSessions follows nextCursor page by page, newest first, up to max', T, async (t) => {
	const h = start(t, { session: { model: { provider: 'script', turns: [{ content: text('ok') }] } } });
	const n = 55; // pid lists 50 a page
	for (let i = 0; i < n; i++) {
		h.c.newSession();
		await ask(h, `session ${i}`);
	}
	const pages: number[] = [];
	const all = await within(h.c.listSessions({ onPage: (p) => pages.push(p.length) }), 'session/list', STEP_TIMEOUT_MS);
	assert.deepEqual(pages, [50, 5]);
	assert.equal(all.more, false);
	assert.deepEqual(all.sessions.map((s) => s.title), Array.from({ length: n }, (_, i) => `session ${n - 1 - i}`), 'newest first');
	assert.equal(new Set(all.sessions.map((s) => s.sessionId)).size, n, 'no session twice');

	const some = await within(h.c.listSessions({ max: 52 }), 'session/list', STEP_TIMEOUT_MS);
	assert.equal(some.more, true, 'more than max');
	assert.deepEqual(some.sessions.map((s) => s.title), all.sessions.slice(0, 52).map((s) => s.title));
	await h.shutdown();
});

test('startAfter: a controller that replaces another starts pid once the old one is gone, then loads its session', T, async (t) => {
	const h1 = start(t, { session: { model: { provider: 'script', turns: [{ content: text('one') }, { content: text('two') }] } } });
	await ask(h1, 'first');
	const sid = h1.c.currentSession;
	assert.ok(sid);
	let release: () => void = () => {};
	const gate = new Promise<void>((resolve) => {
		release = resolve;
	});
	const stopped = gate.then(() => h1.shutdown());
	const h2 = start(t, { xdg: h1.xdg, startAfter: stopped });
	const resumed = h2.c.resume(sid);
	await new Promise((r) => setImmediate(r));
	const old = h1.c.pid;
	assert.ok(old?.alive, 'the old pid runs');
	assert.equal(h2.c.pid, undefined, 'no new pid yet');
	release();
	await within(resumed, 'the resume after the old pid stopped', STEP_TIMEOUT_MS);
	assert.equal(old.alive, false, 'the old pid had exited first');
	assert.equal(h2.c.currentSession, sid);
	assert.equal((await ask(h2, 'second')).answer, 'two');
	await h2.shutdown();
});

test('after a reload the empty chat offers the folder\'s last session with a Resume naming it; Resume loads it; a message sent instead takes the offer away', T, async (t) => {
	const model = { provider: 'script', turns: [{ content: text('answer one') }, { content: text('answer two') }] };
	// Two sessions in the folder, then a newer one in another folder (not offered here).
	const h1 = start(t, { workspace: true, session: { model } });
	await ask(h1, 'the older one');
	h1.c.newSession();
	await ask(h1, 'the newest one here');
	const sid = h1.c.currentSession;
	assert.ok(sid);
	await h1.shutdown();
	const other = start(t, { xdg: h1.xdg, workspace: true, session: { model } });
	await ask(other, 'in another folder');
	await other.shutdown();

	// A window reloaded: a new controller, an empty chat, no session yet.
	const folders = [{ uri: pathToFileURL(h1.ws).href, name: 'ws' }];
	const h2 = start(t, { xdg: h1.xdg, workspaceFolders: folders });
	assert.equal(h2.c.chat.empty, true);
	const offered = await within(h2.c.offerLastSession(), 'the offer', STEP_TIMEOUT_MS);
	assert.equal(offered?.sessionId, sid, 'the newest session of this folder');
	const items = h2.c.chat.all();
	assert.equal(items.length, 1, JSON.stringify(items));
	const notice = items[0];
	assert.equal(notice.kind, 'notice');
	assert.ok(notice.kind === 'notice');
	assert.match(notice.text, /^Your last session in this folder: "the newest one here" \((just now|\d+ minutes? ago), 2 messages\)\. Resume continues it; a new message starts a new session\.$/);
	assert.deepEqual(notice.actions, [{ label: 'Resume "the newest one here"', action: 'resumeSession', arg: sid }]);
	assert.equal(h2.c.currentSession, undefined, 'nothing is loaded before the click');
	assert.equal(await h2.c.offerLastSession(), undefined, 'offered once');

	const loaded = await within(h2.c.resumeOffered(sid), 'Resume of the offer', STEP_TIMEOUT_MS);
	assert.equal(loaded?.sessionId, sid);
	assert.equal(h2.c.currentSession, sid);
	const after = h2.c.chat.all();
	assert.ok(!after.some((i) => i.kind === 'notice' && i.actions.some((a) => a.action === 'resumeSession')), 'the offer is gone');
	assert.deepEqual(after.filter((i) => i.kind === 'user').map((i) => i.kind === 'user' && i.text), ['the newest one here']);
	assert.ok(after.some((i) => i.kind === 'notice' && i.text.startsWith('Resumed "the newest one here" (2 messages)')), JSON.stringify(after));
	assert.ok(resumedLines(h2, sid)[0].includes(`"the newest one here" (2 messages, in ${h1.ws})`), 'the log names it from the list');
	assert.equal((await ask(h2, 'go on')).sessionId, sid, 'the next message continues it');
	await h2.shutdown();

	// Reloaded again, and a message is sent instead: the offer leaves, a new session starts.
	const h3 = start(t, { xdg: h1.xdg, workspaceFolders: folders, session: { model } });
	assert.ok(await within(h3.c.offerLastSession(), 'the offer', STEP_TIMEOUT_MS));
	const run = await ask(h3, 'something new');
	assert.notEqual(run.sessionId, sid);
	assert.ok(!h3.c.chat.all().some((i) => i.kind === 'notice'), JSON.stringify(h3.c.chat.all()));
	await h3.shutdown();

	// A folder without saved sessions: nothing is offered, the chat stays empty.
	const h4 = start(t, { workspace: true });
	assert.equal(await within(h4.c.offerLastSession(), 'the offer', STEP_TIMEOUT_MS), undefined);
	assert.equal(h4.c.chat.empty, true);
	await h4.shutdown();
});
