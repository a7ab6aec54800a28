// The instruction files pid gives the model (AGENTS.md, CLAUDE.md): named in the chat when a
// session starts and when one is loaded, from session/new's and session/load's `instructions`.
// The helpers alone, then the controller against the real pid with a trusted workspace.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ChatModel, instructionViews, instructionsLine, sizeText, type ChatItem, type InstructionsItem } from '../chat';
import { STEP_TIMEOUT_MS, ask, start, text, within } from './harness';

const T = { timeout: 60_000 };

test('sizeText: bytes, then KB and MB of 1024 with one decimal below 10', () => {
	assert.deepEqual(
		[0, 1, 1000, 1024, 1229, 10 * 1024 + 300, 40 * 1024, 5 * 1024 * 1024 + 200 * 1024].map(sizeText),
		['0 bytes', '1 byte', '1000 bytes', '1 KB', '1.2 KB', '10 KB', '40 KB', '5.2 MB'],
	);
});

test('instructionViews: relative to the outermost folder that holds the file, else absolute; entries without a path dropped', () => {
	const files = [
		{ path: '/home/me/.config/pid/AGENTS.md', bytes: 12, truncated: false },
		{ path: '/w/AGENTS.md', bytes: 1229, truncated: false },
		{ path: '/w/sub/CLAUDE.md', bytes: 40 * 1024, truncated: true },
		{ bytes: 3, truncated: false } as unknown as { path: string; bytes: number; truncated: boolean },
	];
	// The chat's folder is the cwd (/w/sub); the workspace folder /w names the files.
	const views = instructionViews(files, ['/w', '/w/sub']);
	assert.deepEqual(views, [
		{ path: '/home/me/.config/pid/AGENTS.md', label: '/home/me/.config/pid/AGENTS.md', size: '12 bytes', truncated: false },
		{ path: '/w/AGENTS.md', label: 'AGENTS.md', size: '1.2 KB', truncated: false },
		{ path: '/w/sub/CLAUDE.md', label: 'sub/CLAUDE.md', size: '40 KB', truncated: true },
	]);
	assert.equal(instructionsLine(views.slice(1)), 'Instructions: AGENTS.md (1.2 KB), sub/CLAUDE.md (40 KB, cut to 32 KiB)');
	assert.deepEqual(instructionViews(undefined, ['/w']), []);
});

test('chat: an instructions line only when there are files', () => {
	const chat = new ChatModel();
	chat.folder = '/w';
	assert.equal(chat.instructions(undefined), undefined);
	assert.equal(chat.instructions([]), undefined);
	assert.equal(chat.all().length, 0);
	const item = chat.instructions([{ path: '/w/AGENTS.md', bytes: 5, truncated: false }]);
	assert.deepEqual(chat.all(), [item]);
	assert.deepEqual(item?.files.map((f) => f.label), ['AGENTS.md']);
});

/** A workspace with AGENTS.md at its root and a CLAUDE.md over 32 KiB in sub/, the user's own AGENTS.md, and user settings trusting the workspace. */
function trustedWorkspace(t: TestContext) {
	const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-instr-')));
	t.after(() => fs.rmSync(base, { recursive: true, force: true }));
	const ws = path.join(base, 'ws');
	const sub = path.join(ws, 'sub');
	fs.mkdirSync(sub, { recursive: true });
	const agents = 'Run the tests before you say it works.\n'.repeat(30);
	fs.writeFileSync(path.join(ws, 'AGENTS.md'), agents);
	const claude = 'x'.repeat(40 * 1024);
	fs.writeFileSync(path.join(sub, 'CLAUDE.md'), claude);
	const xdg = path.join(base, 'xdg');
	const config = path.join(xdg, 'config', 'pid');
	fs.mkdirSync(config, { recursive: true });
	fs.writeFileSync(path.join(config, 'AGENTS.md'), 'Answer in English.\n');
	fs.writeFileSync(path.join(config, 'settings.json'), JSON.stringify({ trustedFolders: [ws] }));
	return {
		ws,
		sub,
		xdg,
		workspaceFolders: [{ uri: pathToFileURL(ws).href, name: 'ws' }],
		expected: [
			{ path: path.join(config, 'AGENTS.md'), label: path.join(config, 'AGENTS.md'), size: '19 bytes', truncated: false },
			{ path: path.join(ws, 'AGENTS.md'), label: 'AGENTS.md', size: sizeText(Buffer.byteLength(agents)), truncated: false },
			{ path: path.join(sub, 'CLAUDE.md'), label: 'sub/CLAUDE.md', size: '40 KB', truncated: true },
		],
	};
}

function instructionsItems(items: ChatItem[]): InstructionsItem[] {
	return items.filter((i): i is InstructionsItem => i.kind === 'instructions');
}

test('a new session in a trusted workspace shows its instruction files before the first message; a loaded one after its transcript', T, async (t) => {
	const w = trustedWorkspace(t);
	const h1 = start(t, {
		xdg: w.xdg,
		workspaceFolders: w.workspaceFolders,
		cwd: w.sub,
		session: { model: { provider: 'script', turns: [{ content: text('noted') }] } },
	});
	assert.equal((await ask(h1, 'hi')).answer, 'noted');
	const items = h1.c.chat.all();
	const shown = instructionsItems(items);
	assert.equal(shown.length, 1, JSON.stringify(items));
	assert.deepEqual(shown[0].files, w.expected);
	assert.deepEqual(items.slice(0, 2).map((i) => i.kind), ['instructions', 'user'], 'the line comes before the first message');
	const line = `pid: ${instructionsLine(w.expected)}`;
	assert.ok(h1.ui.lines.includes(line), `the log has "${line}":\n${h1.ui.lines.join('\n')}`);
	assert.ok(line.includes('AGENTS.md (1.1 KB), sub/CLAUDE.md (40 KB, cut to 32 KiB)'), line);
	assert.equal(h1.ui.trustAsked.length, 0, 'trusted by the user settings: no question');
	const sid = h1.c.currentSession;
	assert.ok(sid);
	await h1.shutdown();

	// A second pid loads it: the files as read at load, after the transcript.
	const h2 = start(t, { xdg: w.xdg, workspaceFolders: w.workspaceFolders, cwd: w.sub });
	await within(h2.c.resume(sid), 'session/load', STEP_TIMEOUT_MS);
	const loaded = h2.c.chat.all();
	const again = instructionsItems(loaded);
	assert.equal(again.length, 1, JSON.stringify(loaded));
	assert.deepEqual(again[0].files, w.expected);
	const at = loaded.indexOf(again[0]);
	assert.deepEqual(loaded.slice(0, at).map((i) => i.kind), ['user', 'assistant'], 'after the transcript');
	await h2.shutdown();
});

test('no instruction files (untrusted workspace, no user file): no line', T, async (t) => {
	const h = start(t, { workspace: true, session: { model: { provider: 'script', turns: [{ content: text('ok') }] } } });
	fs.writeFileSync(path.join(h.ws, 'AGENTS.md'), 'Never read: the folder is not trusted.\n');
	assert.equal((await ask(h, 'hi')).answer, 'ok');
	assert.deepEqual(instructionsItems(h.c.chat.all()), []);
	assert.ok(!h.ui.lines.some((l) => l.startsWith('pid: Instructions:')), h.ui.lines.join('\n'));
	await h.shutdown();
});
