// Workspace trust and the scope of "always" answers: TrustAsker alone, then the controller
// against the real pid with a workspace whose .pid/settings.json allows writes under notes/.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ALLOW, ALWAYS_ALLOW, DENY } from '../approval';
import type { RequestTrustParams, SessionNewParams } from '../protocol';
import { KEEP_RESTRICTED, MAX_IGNORED_SHOWN, TRUST, TrustAsker, trustPrompt, type TrustPrompt } from '../trust';
import { ask, start, text, until } from './harness';

const T = { timeout: 60_000 };

// --- TrustAsker, with a scripted environment ---

function env(answers: (string | undefined | Error)[], trusted = true) {
	const shown: TrustPrompt[] = [];
	const e = {
		trusted,
		shown,
		isTrusted: () => e.trusted,
		show: async (p: TrustPrompt) => {
			shown.push(p);
			const a = answers.shift();
			if (a instanceof Error) {
				throw a;
			}
			return a;
		},
	};
	return e;
}

const q = (folder: string, ignored = ['model']): RequestTrustParams => ({ folder, ignored });

test('trustPrompt names the folder and what trusting it would enable', () => {
	const p = trustPrompt(q('/w', ['model', 'permissions.tools["bash"][0] allow "npm test"']));
	assert.equal(p.folder, '/w');
	assert.deepEqual(p.choices, [TRUST, KEEP_RESTRICTED]);
	assert.match(p.message, /^pid: the workspace folder \/w is not trusted, so pid ignores what its \.pid\/settings\.json would enable: model; permissions\.tools\["bash"\]\[0\] allow "npm test"\. Trust this folder/);
	const many = Array.from({ length: MAX_IGNORED_SHOWN + 3 }, (_, i) => `s${i}`);
	const m = trustPrompt(q('/w', many)).message;
	assert.ok(m.includes(`s${MAX_IGNORED_SHOWN - 1}; and 3 more.`), m);
	assert.ok(!m.includes(`s${MAX_IGNORED_SHOWN};`), m);
});

test('TrustAsker: Restricted Mode answers false without asking', async () => {
	const e = env([TRUST], false);
	const a = new TrustAsker(e);
	assert.equal(await a.ask(q('/w')), false);
	assert.equal(e.shown.length, 0);
	assert.equal(a.declinedFolder('/w'), false, 'not remembered: the user was not asked');
	e.trusted = true;
	assert.equal(await a.ask(q('/w')), true, 'asked once VS Code trusts the workspace');
	assert.equal(e.shown.length, 1);
});

test('TrustAsker: a decline (or dismissal) is remembered per folder until forget; a trust is not', async () => {
	const e = env([KEEP_RESTRICTED, undefined, TRUST, TRUST]);
	const a = new TrustAsker(e);
	assert.equal(await a.ask(q('/a')), false);
	assert.equal(await a.ask(q('/a')), false, 'declined: not asked again');
	assert.equal(e.shown.length, 1);
	assert.equal(await a.ask(q('/b')), false, 'dismissed');
	assert.equal(e.shown.length, 2, 'another folder is asked about');
	a.forget('/a');
	assert.equal(await a.ask(q('/a')), true, 'asked again after forget');
	assert.equal(await a.ask(q('/a')), true, 'a trust answer is not remembered: pid keeps it');
	assert.deepEqual(e.shown.map((p) => p.folder), ['/a', '/b', '/a', '/a']);
});

test('TrustAsker: concurrent questions about one folder share one prompt; a failing prompt is false', async () => {
	let release: (v: string) => void = () => {};
	const shown: string[] = [];
	const a = new TrustAsker({
		isTrusted: () => true,
		show: (p) => {
			shown.push(p.folder);
			return new Promise<string>((resolve) => (release = resolve));
		},
	});
	const one = a.ask(q('/w'));
	const two = a.ask(q('/w'));
	release(TRUST);
	assert.deepEqual(await Promise.all([one, two]), [true, true]);
	assert.deepEqual(shown, ['/w']);

	const failing = new TrustAsker(env([new Error('no window')]));
	assert.equal(await failing.ask(q('/x')), false);
});

// --- against pid ---

const SETTINGS = JSON.stringify({ permissions: { tools: { write: [{ pattern: 'notes/**', decision: 'allow' }] } } });
const IGNORED = ['permissions.tools["write"][0] allow "notes/**"'];

const writeSession = (id: string, file: string): SessionNewParams => ({
	model: { provider: 'script', turns: [
		{ content: [{ type: 'toolCall', id, name: 'write', arguments: { path: file, content: `${id}\n` } }] },
		{ content: text('written') },
	] },
});

test('trust declined: the folder\'s allow rule is ignored, so a write of notes/a.txt asks', T, async (t) => {
	const h = start(t, { workspace: true, workspaceSettings: SETTINGS, trust: () => false, answer: () => ALLOW, session: writeSession('w1', 'notes/a.txt') });
	const folder = fs.realpathSync(h.ws);
	const run = await ask(h, 'write a');
	await until(() => h.ui.lines.includes(`pid: ${folder} stays restricted: its settings may only narrow what pid does`), 'the declined trust question to be logged');
	assert.deepEqual(h.ui.trustAsked, [{ folder, ignored: IGNORED }], 'one trust question naming the folder and the ignored rule');

	assert.equal(h.ui.asked.length, 1, 'the write asked for approval');
	const { q: a } = h.ui.asked[0];
	assert.equal(a.toolCallId, 'w1');
	assert.deepEqual(a.choices, [ALLOW, ALWAYS_ALLOW, DENY]);
	assert.deepEqual(a.always, { tool: 'write', pattern: 'notes/a.txt', description: 'write calls on the path `notes/a.txt` in this workspace' });
	assert.ok(a.detail.endsWith('Always allow covers: write calls on the path `notes/a.txt` in this workspace.'), a.detail);
	assert.equal(run.tools.get('w1')?.status, 'ok', run.lines().join('\n'));
	assert.equal(fs.readFileSync(path.join(h.ws, 'notes', 'a.txt'), 'utf8'), 'w1\n');
	assert.deepEqual(await h.c.trustedFolders(), []);

	// Another session in the same folder: pid does not ask about the folder again, and the
	// rule stays ignored.
	h.c.newSession(writeSession('w2', 'notes/b.txt'));
	const run2 = await ask(h, 'write b');
	assert.equal(run2.tools.get('w2')?.status, 'ok', run2.lines().join('\n'));
	assert.deepEqual(h.ui.asked.map((x) => x.q.toolCallId), ['w1', 'w2'], 'the second write asked too');
	assert.equal(h.ui.trustAsked.length, 1, 'asked once per folder per daemon');
	await h.shutdown();
});

test('trust granted: once pid says so, a write of notes/ in a new session does not ask; revoked, it asks again', T, async (t) => {
	const h = start(t, {
		workspace: true,
		workspaceSettings: SETTINGS,
		trust: () => true,
		answer: () => DENY,
		// The first session writes nothing: its prompt may run before the trust answer.
		session: { model: { provider: 'script', turns: [{ content: text('hello') }] } },
	});
	const folder = fs.realpathSync(h.ws);
	assert.equal((await ask(h, 'hi')).answer, 'hello');
	const inForce = `pid: ${folder} is trusted: its settings apply in full from now on`;
	await until(() => h.ui.lines.some((l) => l.endsWith(inForce)), "pid's window/logMessage saying the trust is in force");
	assert.deepEqual(h.ui.trustAsked, [{ folder, ignored: IGNORED }]);
	assert.ok(h.ui.lines.includes(`pid: trusting ${folder}`), h.ui.lines.join('\n'));
	const listed = await h.c.trustedFolders();
	assert.deepEqual(listed.map((f) => f.folder), [folder]);
	assert.ok(!Number.isNaN(Date.parse(listed[0].trustedAt)), `trustedAt is a date: ${listed[0].trustedAt}`);

	h.c.newSession(writeSession('w1', 'notes/a.txt'));
	const run = await ask(h, 'write a');
	assert.equal(h.ui.asked.length, 0, 'the folder\'s allow rule applies: no approval');
	assert.equal(run.tools.get('w1')?.status, 'ok', run.lines().join('\n'));
	assert.equal(fs.readFileSync(path.join(h.ws, 'notes', 'a.txt'), 'utf8'), 'w1\n');

	await h.c.revokeTrust(folder);
	assert.deepEqual(await h.c.trustedFolders(), []);
	h.c.newSession(writeSession('w2', 'notes/b.txt'));
	const run2 = await ask(h, 'write b');
	assert.deepEqual(h.ui.asked.map((x) => x.q.toolCallId), ['w2'], 'revoked: the write asks (and is denied)');
	assert.equal(run2.tools.get('w2')?.status, 'error');
	assert.equal(fs.existsSync(path.join(h.ws, 'notes', 'b.txt')), false);
	await assert.rejects(h.c.revokeTrust(folder), (err: { code?: number }) => err.code === -32602, 'revoking a folder that is not trusted');
	assert.equal(h.ui.trustAsked.length, 1, 'pid did not ask about the folder again');
	await h.shutdown();
});

test('"Always allow" is offered for `npm test` with what it covers, not for `echo $(date)`', T, async (t) => {
	const h = start(t, {
		workspace: true,
		answer: () => DENY,
		session: { model: { provider: 'script', turns: [
			{ content: [{ type: 'toolCall', id: 'b1', name: 'bash', arguments: { command: 'echo $(date)' } }] },
			{ content: [{ type: 'toolCall', id: 'b2', name: 'bash', arguments: { command: 'npm test' } }] },
			{ content: text('both denied') },
		] } },
	});
	const run = await ask(h, 'run them');
	assert.equal(run.answer, 'both denied');
	assert.deepEqual(h.ui.asked.map((x) => x.q.toolCallId), ['b1', 'b2']);
	const [echo, npm] = h.ui.asked.map((x) => x.q);
	assert.deepEqual(echo.choices, [ALLOW, DENY], 'no "Always allow" for a command pid cannot scope');
	assert.equal(echo.always, undefined);
	assert.match(echo.detail, /Always allow is not offered/);
	assert.deepEqual(npm.choices, [ALLOW, ALWAYS_ALLOW, DENY]);
	assert.deepEqual(npm.always, { tool: 'bash', pattern: 'npm test', description: 'bash commands starting with `npm test` in this workspace' });
	assert.ok(npm.detail.endsWith('\n\nAlways allow covers: bash commands starting with `npm test` in this workspace.'), npm.detail);
	assert.deepEqual([run.tools.get('b1')?.status, run.tools.get('b2')?.status], ['error', 'error'], 'both denied, neither ran');
	assert.equal(h.ui.trustAsked.length, 0, 'no settings, no trust question');
	await h.shutdown();
});

test('an "Always allow" answer is logged with what it covers, and kept exactly that wide', T, async (t) => {
	const h = start(t, {
		workspace: true,
		answer: (a) => (a.always ? ALWAYS_ALLOW : DENY),
		session: { model: { provider: 'script', turns: [
			{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: '1\n' } }] },
			{ content: [{ type: 'toolCall', id: 'w2', name: 'write', arguments: { path: 'a.txt', content: '2\n' } }] },
			{ content: [{ type: 'toolCall', id: 'w3', name: 'write', arguments: { path: 'b.txt', content: '3\n' } }] },
			{ content: text('done') },
		] } },
	});
	const run = await ask(h, 'write');
	assert.ok(run.lines().includes('[w1] write always allowed: write calls on the path `a.txt` in this workspace'), run.lines().join('\n'));
	assert.deepEqual(h.ui.asked.map((x) => x.q.toolCallId), ['w1', 'w3'], 'a.txt is remembered; b.txt is not covered');
	assert.equal(fs.readFileSync(path.join(h.ws, 'a.txt'), 'utf8'), '2\n');
	assert.equal(fs.readFileSync(path.join(h.ws, 'b.txt'), 'utf8'), '3\n');
	await h.shutdown();
});

test('trustPrompt names what the folder really holds: an AGENTS.md alone is an instruction file, not a .pid/settings.json; skills and agents by name', () => {
	const only = trustPrompt(q('/w', ['instructions: AGENTS.md'])).message;
	assert.equal(only, 'pid: the workspace folder /w is not trusted, so pid does not give the model its instruction file AGENTS.md. Trust this folder to let it apply (a cloned repository can use its instructions to steer what the model does)?');
	assert.ok(!only.includes('settings'), only);
	const mixed = trustPrompt(q('/w', ['model', 'instructions: AGENTS.md', 'instructions: sub/CLAUDE.md', 'skill: deploy (.pid/skills/deploy/SKILL.md)'])).message;
	assert.equal(
		mixed,
		'pid: the workspace folder /w is not trusted, so pid ignores what its .pid/settings.json would enable: model, and does not give the model its instruction files AGENTS.md, sub/CLAUDE.md, and leaves out its skill deploy (.pid/skills/deploy/SKILL.md). Trust this folder to let them apply (a cloned repository can use its settings to pick the model or allow commands, and its instructions to steer what the model does)?',
	);
});

test('against pid: a folder that holds only AGENTS.md is asked about by its instruction file, and the log says so', { timeout: 60_000 }, async (t) => {
	const h = start(t, { workspace: true, trust: () => false, session: { model: { provider: 'script', turns: [{ content: text('hi') }] } } });
	fs.writeFileSync(path.join(h.ws, 'AGENTS.md'), '# Rules\nBe brief.\n');
	await ask(h, 'hello');
	await until(() => h.ui.trustAsked.length === 1, 'the trust question');
	assert.deepEqual(h.ui.trustAsked[0].ignored, ['instructions: AGENTS.md']);
	const m = trustPrompt(h.ui.trustAsked[0]).message;
	assert.match(m, /so pid does not give the model its instruction file AGENTS\.md\. Trust this folder/);
	assert.ok(!m.includes('.pid/settings.json'), m);
	assert.ok(h.ui.lines.some((l) => l.endsWith('is not trusted, so pid does not give the model its instruction file AGENTS.md')), h.ui.lines.join('\n'));
	await h.shutdown();
});
