// A smoke test of extension.ts, the only module that imports `vscode`: it is loaded here with
// a stand-in for the `vscode` module and its commands are run against the real pid. This
// checks the wiring (settings, commands, the log, the chat view's page and messages with an
// approval answered in it and never in a modal, the trust question, the Trusted Folders
// QuickPick, the Session History QuickPick, deactivate). VS Code itself is driven by the
// end-to-end tests (test/e2e/vscode_chat.test.js).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { PidClient } from '../client';
import { PID_BIN, STEP_TIMEOUT_MS, text, until, within } from './harness';

interface Modal {
	message: string;
	options: { modal?: boolean; detail?: string };
	items: string[];
}

interface Pick {
	label: string;
	description?: string;
	detail?: string;
}

interface Answers {
	input?: string;
	modal?: string;
	/** The answer to a non-modal warning (the trust question). */
	warning?: string;
	/** Picks from a QuickPick's items (undefined: dismissed). */
	pick?: (items: Pick[]) => Pick | undefined;
	/** Picks from a createQuickPick's items once it is no longer busy (undefined: dismissed). */
	pickLoaded?: (items: Pick[]) => Pick | undefined;
}

/** What a createQuickPick showed: its settings, and its items when it stopped being busy. */
interface LoadedPick {
	title?: string;
	placeholder?: string;
	matchOnDescription?: boolean;
	matchOnDetail?: boolean;
	items: Pick[];
	disposed: boolean;
}

/**
 * fakeQuickPick stands in for vscode.window.createQuickPick: when the extension sets busy to
 * false (everything is listed), answer picks an item (accept) or none (hide).
 */
function fakeQuickPick(record: LoadedPick[], answers: Answers) {
	const accept: (() => void)[] = [];
	const hide: (() => void)[] = [];
	const rec: LoadedPick = { items: [], disposed: false };
	let busy = false;
	let hidden = false;
	const qp = {
		title: undefined as string | undefined,
		placeholder: undefined as string | undefined,
		matchOnDescription: false,
		matchOnDetail: false,
		keepScrollPosition: false,
		items: [] as Pick[],
		selectedItems: [] as Pick[],
		activeItems: [] as Pick[],
		get busy() {
			return busy;
		},
		set busy(v: boolean) {
			const done = busy && !v;
			busy = v;
			if (done) {
				Object.assign(rec, { title: qp.title, placeholder: qp.placeholder, matchOnDescription: qp.matchOnDescription, matchOnDetail: qp.matchOnDetail, items: qp.items.slice() });
				record.push(rec);
				// As a person would: after the list has shown.
				setImmediate(() => {
					if (hidden) {
						return; // the extension closed it itself (nothing to pick)
					}
					const item = answers.pickLoaded?.(qp.items);
					if (item) {
						qp.selectedItems = [item];
						accept.forEach((l) => l());
					} else {
						qp.hide();
					}
				});
			}
		},
		onDidAccept: (l: () => void) => {
			accept.push(l);
			return { dispose() {} };
		},
		onDidHide: (l: () => void) => {
			hide.push(l);
			return { dispose() {} };
		},
		show() {},
		hide() {
			if (!hidden) {
				hidden = true;
				hide.forEach((l) => l());
			}
		},
		dispose() {
			rec.disposed = true;
		},
	};
	return qp;
}

/** A stand-in for vscode.window.createInputBox: what it shows, and a way to type into it and press Enter or Escape. */
interface FakeInputBox {
	title?: string;
	prompt?: string;
	value: string;
	ignoreFocusOut: boolean;
	shown: boolean;
	disposed: boolean;
	accept(): void;
	escape(): void;
}

function fakeInputBox(record: FakeInputBox[]) {
	const accept: (() => void)[] = [];
	const hide: (() => void)[] = [];
	const box = {
		title: undefined as string | undefined,
		prompt: undefined as string | undefined,
		value: '',
		ignoreFocusOut: false,
		shown: false,
		disposed: false,
		onDidAccept: (l: () => void) => {
			accept.push(l);
			return { dispose() {} };
		},
		onDidHide: (l: () => void) => {
			hide.push(l);
			return { dispose() {} };
		},
		show() {
			box.shown = true;
		},
		hide() {
			if (box.shown) {
				box.shown = false;
				hide.forEach((l) => l());
			}
		},
		dispose() {
			box.disposed = true;
			box.hide();
		},
		accept: () => accept.forEach((l) => l()),
		escape: () => box.hide(),
	};
	record.push(box);
	return box;
}

function fakeVscode(settings: Record<string, unknown>, folder: string, answers: Answers) {
	const inputBoxes: FakeInputBox[] = [];
	/** onExecute runs inside executeCommand (what happens while VS Code runs a command). */
	const hooks: { onExecute?: (args: unknown[]) => Promise<void> | void } = {};
	const commands = new Map<string, (...args: unknown[]) => unknown>();
	const output: string[] = [];
	const modals: Modal[] = [];
	const warnings: { message: string; items: string[] }[] = [];
	const picks: Pick[][] = [];
	const loadedPicks: LoadedPick[] = [];
	const infos: string[] = [];
	const errors: string[] = [];
	const grantListeners: (() => void)[] = [];
	const disposable = { dispose() {} };
	const uri = { scheme: 'file', fsPath: folder, toString: () => pathToFileURL(folder).href };
	const views = new Map<string, { resolveWebviewView(v: unknown): void }>();
	const executed: unknown[][] = [];
	const contentProviders = new Map<string, { provideTextDocumentContent(u: unknown): string }>();
	/** The documents opened (openTextDocument): their uri and text. */
	const documents: { uri: { scheme: string; path: string }; text: string }[] = [];
	const shownDocuments: unknown[] = [];
	const fakeUri = (p: string) => ({ scheme: 'file', fsPath: p, path: p, toString: () => pathToFileURL(p).href });
	const vscode = {
		version: '1.90.0-test',
		ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
		StatusBarAlignment: { Left: 1, Right: 2 },
		ThemeColor: class { constructor(readonly id: string) {} },
		ThemeIcon: class { constructor(readonly id: string) {} },
		Disposable: class { constructor(readonly dispose: () => void) {} },
		EventEmitter: class {
			readonly event = () => ({ dispose() {} });
			fire(): void {}
			dispose(): void {}
		},
		Uri: {
			joinPath: (base: { fsPath: string }, ...parts: string[]) => fakeUri(path.join(base.fsPath, ...parts)),
			file: (p: string) => fakeUri(p),
			from: (c: { scheme: string; path: string; query?: string }) => ({ ...c, fsPath: c.path, toString: () => `${c.scheme}:${c.path}?${c.query ?? ''}` }),
			parse: (s: string) => ({ toString: () => s }),
		},
		languages: { getDiagnostics: () => [], onDidChangeDiagnostics: () => ({ dispose() {} }), registerCodeLensProvider: () => ({ dispose() {} }) },
		env: { openExternal: async () => true },
		window: {
			registerWebviewViewProvider: (id: string, provider: { resolveWebviewView(v: unknown): void }) => {
				views.set(id, provider);
				return disposable;
			},
			createStatusBarItem: () => ({ text: '', tooltip: '', show() {}, hide() {}, dispose() {} }),
			get activeTextEditor() {
				return undefined;
			},
			createOutputChannel: () => ({ appendLine: (l: string) => output.push(l), append() {}, show() {}, dispose() {} }),
			showInputBox: async () => answers.input,
			showWarningMessage: async (message: string, options: Modal['options'] | string, ...items: string[]) => {
				if (typeof options === 'string') {
					warnings.push({ message, items: [options, ...items] });
					return answers.warning;
				}
				modals.push({ message, options, items });
				return answers.modal;
			},
			showQuickPick: async (items: Pick[]) => {
				picks.push(items);
				return answers.pick?.(items);
			},
			createQuickPick: () => fakeQuickPick(loadedPicks, answers),
			createInputBox: () => fakeInputBox(inputBoxes),
			showInformationMessage: async (m: string) => { infos.push(m); return undefined; },
			showTextDocument: async (doc: unknown) => {
				shownDocuments.push(doc);
				return {};
			},
			showErrorMessage: async (m: string) => { errors.push(m); return undefined; },
			withProgress: async (_o: unknown, task: (p: unknown, t: unknown) => Promise<unknown>) => task({ report() {} }, {}),
		},
		workspace: {
			isTrusted: true,
			onDidGrantWorkspaceTrust: (l: () => void) => {
				grantListeners.push(l);
				return disposable;
			},
			workspaceFolders: [{ uri, name: 'ws', index: 0 }],
			getConfiguration: (section: string) => ({
				get: (key: string, def?: unknown) => (`${section}.${key}` in settings ? settings[`${section}.${key}`] : def),
			}),
			onDidChangeConfiguration: () => disposable,
			onDidChangeWorkspaceFolders: () => disposable,
			registerTextDocumentContentProvider: (scheme: string, p: { provideTextDocumentContent(u: unknown): string }) => {
				contentProviders.set(scheme, p);
				return disposable;
			},
			openTextDocument: async (u: { scheme: string; path: string }) => {
				const doc = { uri: u, text: contentProviders.get(u.scheme)?.provideTextDocumentContent(u) ?? '' };
				documents.push(doc);
				return doc;
			},
			textDocuments: [] as unknown[],
		},
		commands: {
			registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => {
				commands.set(id, fn);
				return disposable;
			},
			executeCommand: async (...args: unknown[]) => {
				executed.push(args);
				await hooks.onExecute?.(args);
				return undefined;
			},
		},
	};
	const grantTrust = () => {
		vscode.workspace.isTrusted = true;
		for (const l of grantListeners) {
			l();
		}
	};
	return { vscode, commands, output, modals, warnings, picks, loadedPicks, infos, errors, grantTrust, views, executed, inputBoxes, hooks, documents, shownDocuments };
}

/** A chat view's page as the extension sees it: its HTML, what it was sent, and a way to click. */
interface FakeView {
	html: string;
	options: { enableScripts?: boolean; localResourceRoots?: unknown[] };
	/** view.show's calls: preserveFocus of each (false: the view took the focus). */
	shows: boolean[];
	/** Every message the extension posted to the page. */
	posted: { type: string; text?: string; items?: unknown[]; ops?: { op: string; item?: { kind: string; toolCallId?: string; approval?: { state: string; always?: string }; html?: string } }[] }[];
	/** Sends a message from the page to the extension. */
	send(m: unknown): void;
	/** The tool items the extension sent, latest state of each. */
	tools(): Map<string, { kind: string; toolCallId?: string; approval?: { state: string; always?: string }; status?: string }>;
}

/** openView resolves the chat view with a stand-in webview (as VS Code does when the view is shown) and says it is ready. */
/** openView resolves pid's chat view as VS Code does and its page says ready (focused: holding the focus, as a page that took it while loading). */
function openView(fake: ReturnType<typeof fakeVscode>, ready: { focused?: boolean } = {}): FakeView {
	const provider = fake.views.get('pid.chat');
	assert.ok(provider, 'the chat view is registered as pid.chat');
	let onMessage: (m: unknown) => void = () => {};
	const posted: FakeView['posted'] = [];
	const webview = {
		options: {},
		html: '',
		cspSource: 'vscode-resource:',
		asWebviewUri: (u: { fsPath: string }) => `vscode-resource:${u.fsPath}`,
		postMessage: async (m: FakeView['posted'][number]) => {
			posted.push(JSON.parse(JSON.stringify(m)));
			return true;
		},
		onDidReceiveMessage: (l: (m: unknown) => void) => {
			onMessage = l;
			return { dispose() {} };
		},
	};
	const shows: boolean[] = [];
	const view = { webview, visible: true, show: (preserveFocus?: boolean) => shows.push(preserveFocus === true), onDidDispose: () => ({ dispose() {} }) };
	provider.resolveWebviewView(view);
	onMessage({ type: 'ready', ...ready });
	return {
		get html() {
			return webview.html;
		},
		get options() {
			return webview.options;
		},
		posted,
		shows,
		send: (m) => onMessage(m),
		tools() {
			const out = new Map();
			for (const p of posted) {
				const items = p.type === 'reset' ? (p.items ?? []) : (p.ops ?? []).filter((o) => o.op === 'upsert').map((o) => o.item);
				for (const it of items as { kind: string; toolCallId?: string }[]) {
					if (it?.kind === 'tool' && it.toolCallId) {
						out.set(it.toolCallId, it);
					}
				}
			}
			return out;
		},
	};
}

type Ext = typeof import('../extension');

/**
 * loadExtension loads a fresh extension.ts against fake (its `vscode` import resolves to it),
 * with pid's XDG folders in tmp, and activates it; everything is undone after the test.
 */
function loadExtension(t: import('node:test').TestContext, fake: ReturnType<typeof fakeVscode>, tmp: string, context: Partial<import('vscode').ExtensionContext> = {}): Ext {
	// The extension starts pid with this process's environment: keep pid's files in tmp.
	const saved = { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
	process.env.XDG_CONFIG_HOME = path.join(tmp, 'config');
	process.env.XDG_STATE_HOME = path.join(tmp, 'state');
	type Loader = (request: string, parent: unknown, isMain: boolean) => unknown;
	const mod = Module as unknown as { _load: Loader };
	const load = mod._load;
	mod._load = (request, parent, isMain) => (request === 'vscode' ? fake.vscode : load(request, parent, isMain));
	// A fresh copy (of every module that imports vscode): a cached one would hold an earlier test's fake.
	delete require.cache[require.resolve('../extension')];
	delete require.cache[require.resolve('../chatview')];
	const ext = require('../extension') as Ext;
	t.after(async () => {
		mod._load = load;
		await ext.deactivate();
		for (const [k, v] of Object.entries(saved)) {
			if (v === undefined) {
				delete process.env[k];
			} else {
				process.env[k] = v;
			}
		}
		fs.rmSync(tmp, { recursive: true, force: true });
	});
	ext.activate({ subscriptions: [], extensionUri: { fsPath: path.join(__dirname, '../..') }, ...context } as unknown as import('vscode').ExtensionContext);
	return ext;
}

/** fakeMemento stands in for an ExtensionContext's workspaceState (it outlives the extension, as VS Code's does a window reload). */
function fakeMemento() {
	const values = new Map<string, unknown>();
	return {
		values,
		keys: () => [...values.keys()],
		get: <T>(key: string, def?: T) => (values.has(key) ? (values.get(key) as T) : def),
		update: async (key: string, value: unknown) => {
			if (value === undefined) {
				values.delete(key);
			} else {
				values.set(key, value);
			}
		},
	};
}

test('extension.ts with a stand-in vscode: pid: Ask runs a prompt, its approval is answered in the chat view (never a modal), deactivate stops pid', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);

	const fake = fakeVscode({
		'pid.path': PID_BIN,
		// The model comes from the setting (initializationOptions.model): a scripted one.
		'pid.model': { provider: 'script', turns: [
			{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'hello.txt', content: 'hi\n' } }] },
			{ content: text('wrote **hello.txt**') },
		] },
	}, ws, { input: 'write hello', modal: 'Allow' });

	// require, not import(): the test is compiled to CommonJS, like the extension.
	const ext = loadExtension(t, fake, tmp);

	// The commands registered are the ones package.json contributes; each activates the extension.
	const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8'));
	const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
	assert.deepEqual([...fake.commands.keys()].sort(), contributed);
	assert.deepEqual(pkg.activationEvents.filter((e: string) => e.startsWith('onCommand:')).sort(), contributed.map((c: string) => `onCommand:${c}`));
	assert.ok(pkg.activationEvents.includes('onView:pid.chat'));
	assert.equal(pkg.main, './out/extension.js');
	// Every keybinding names a contributed command.
	for (const k of pkg.contributes.keybindings) {
		assert.ok(contributed.includes(k.command), k.command);
	}

	// The chat view's page: a strict policy (no inline script, nothing remote), the extension's own files.
	const view = openView(fake);
	assert.equal(view.options.enableScripts, true);
	const csp = /Content-Security-Policy" content="([^"]+)"/.exec(view.html)?.[1] ?? '';
	assert.match(csp, /default-src 'none'/);
	assert.match(csp, /script-src 'nonce-[A-Za-z0-9+/=]+'/);
	assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
	assert.doesNotMatch(view.html, /<script>|<script(?![^>]*nonce=)[^>]*>|autofocus/, 'every script has the nonce; nothing is focused on load');
	// Its script and style are files the build made, in folders the page may load from; the
	// script is a classic one (the page has no `exports` nor `require`).
	const roots = (view.options.localResourceRoots ?? []).map((r) => (r as { fsPath: string }).fsPath);
	const loaded = [...view.html.matchAll(/(?:src|href)="vscode-resource:([^"]+)"/g)].map((m) => m[1]);
	assert.deepEqual(loaded.map((f) => path.basename(f)).sort(), ['chat.css', 'chat.js']);
	for (const f of loaded) {
		assert.ok(fs.existsSync(f), `the page loads ${f}, which the build did not make`);
		assert.ok(roots.some((r) => f.startsWith(r + path.sep)), `${f} is outside the page's resource roots ${roots.join(', ')}`);
	}
	const script = fs.readFileSync(loaded.find((f) => f.endsWith('.js')) ?? '', 'utf8');
	assert.ok(!/\bexports\b|\brequire\(|^\s*(import|export)\s/m.test(script), 'the page script is a classic script: it has no exports, require, import or export');
	assert.match(script, /postMessage/);
	assert.equal(view.posted[0]?.type, 'reset', 'the page gets the whole chat when it is ready');

	await fake.commands.get('pid.cancel')?.();
	assert.deepEqual(fake.infos, ['pid: nothing to cancel.']);

	const asked = Promise.resolve(fake.commands.get('pid.ask')?.());
	// The approval arrives in the chat view, on the write's card, with what Allow always covers.
	await until(() => view.tools().get('w1')?.approval?.state === 'pending', `the approval in the chat view:\n${JSON.stringify(view.posted, null, 1).slice(-3000)}`);
	const card = view.tools().get('w1');
	assert.equal(card?.approval?.always, 'write calls on the path `hello.txt` in this workspace');
	assert.equal(card?.status, 'waiting');
	assert.equal(fake.modals.length, 0, 'no modal dialog');
	assert.ok(!fs.existsSync(path.join(ws, 'hello.txt')), 'nothing written before the answer');
	view.send({ type: 'approve', toolCallId: 'w1', choice: 'Allow' });
	await within(asked, 'the pid.ask command', STEP_TIMEOUT_MS);

	assert.deepEqual(fake.errors, [], `no error shown; output:\n${fake.output.join('\n')}`);
	assert.equal(fake.modals.length, 0, 'no modal dialog');
	assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), 'hi\n');
	assert.equal(view.tools().get('w1')?.approval?.state, 'allowed');
	assert.equal(view.tools().get('w1')?.status, 'done');
	const answers = view.posted.flatMap((p) => (p.ops ?? []).map((o) => o.item)).filter((i) => i?.kind === 'assistant');
	assert.equal(answers.at(-1)?.html, '<p>wrote <strong>hello.txt</strong></p>\n', 'the answer is rendered markdown');
	for (const want of ['> write hello', '[w1] write waits for approval: pid wants to write hello.txt', '[w1] write allowed', '\nwrote **hello.txt**\n', '— done (stop) —']) {
		assert.ok(fake.output.includes(want), `the log shows ${JSON.stringify(want)}:\n${fake.output.join('\n')}`);
	}
	assert.ok(fake.output.some((l) => /^\[w1\] write done/.test(l)), fake.output.join('\n'));

	assert.deepEqual(fake.warnings, [], 'no trust question: the folder has no settings');

	await within(ext.deactivate(), 'deactivate to stop pid', STEP_TIMEOUT_MS);
});

test('extension.ts: no trust question in Restricted Mode; once trusted, a non-modal one; Trusted Folders revokes', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(path.join(ws, '.pid'), { recursive: true });
	fs.writeFileSync(path.join(ws, '.pid', 'settings.json'), JSON.stringify({ permissions: { tools: { write: [{ pattern: 'notes/**', decision: 'allow' }] } } }));
	const folder = fs.realpathSync(ws);
	const answers: Answers = { input: 'hi', warning: 'Trust folder' };
	const fake = fakeVscode({
		'pid.path': PID_BIN,
		'pid.model': { provider: 'script', turns: [{ content: text('hello') }] },
	}, ws, answers);
	fake.vscode.workspace.isTrusted = false;
	const ext = loadExtension(t, fake, tmp);
	const ask = () => within(Promise.resolve(fake.commands.get('pid.ask')?.()), 'the pid.ask command', STEP_TIMEOUT_MS);
	const shown = (line: string) => until(() => fake.output.some((l) => l.endsWith(line)), `the output channel to show ${JSON.stringify(line)}\n${fake.output.join('\n')}`);

	// Restricted Mode: pid's question is answered "not trusted" without asking.
	await ask();
	await shown(`pid: ${folder} stays restricted: its settings may only narrow what pid does`);
	assert.equal(fake.warnings.length, 0, 'nobody was asked');

	// VS Code trusts the workspace: pid restarts at the next prompt, asks again, and the user
	// is asked with a non-modal warning.
	fake.grantTrust();
	await ask();
	await shown(`pid: ${folder} is trusted: its settings apply in full from now on`);
	assert.equal(fake.warnings.length, 1, fake.output.join('\n'));
	const w = fake.warnings[0];
	assert.deepEqual(w.items, ['Trust folder', 'Keep restricted']);
	assert.ok(w.message.includes(folder), w.message);
	assert.ok(w.message.includes('permissions.tools["write"][0] allow "notes/**"'), w.message);
	assert.equal(fake.modals.length, 0);

	// pid: Trusted Folders lists it; picking it revokes it.
	answers.pick = (items) => items.find((i) => i.label === folder);
	await within(Promise.resolve(fake.commands.get('pid.trustedFolders')?.()), 'the Trusted Folders command', STEP_TIMEOUT_MS);
	assert.equal(fake.picks.length, 1);
	assert.deepEqual(fake.picks[0].map((i) => [i.label, i.description?.startsWith('trusted since ')]), [[folder, true]]);
	assert.deepEqual(fake.errors, []);
	assert.ok(fake.infos.includes(`pid: ${folder} is no longer trusted: its .pid/settings.json may only narrow what pid does.`), fake.infos.join('\n'));

	// Listed again: the folder is offered for trust; dismissing changes nothing.
	answers.pick = () => undefined;
	await within(Promise.resolve(fake.commands.get('pid.trustedFolders')?.()), 'the Trusted Folders command', STEP_TIMEOUT_MS);
	assert.deepEqual(fake.picks[1].map((i) => [i.label, i.description]), [[folder, 'not trusted']]);
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));

	await within(ext.deactivate(), 'deactivate to stop pid', STEP_TIMEOUT_MS);
});

test('extension.ts: pid: Resume Session lists the saved sessions, loads the picked one into the output, and pid: Ask continues it', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const answers: Answers = { input: 'first question' };
	const fake = fakeVscode({
		'pid.path': PID_BIN,
		'pid.model': { provider: 'script', turns: [{ content: text('first answer') }, { content: text('second answer') }] },
	}, ws, answers);
	const ext = loadExtension(t, fake, tmp);
	const activate = () => ext.activate({ subscriptions: [], extensionUri: { fsPath: path.join(__dirname, '../..') } } as unknown as import('vscode').ExtensionContext);
	const run = (id: string) => within(Promise.resolve(fake.commands.get(id)?.()), `the ${id} command`, STEP_TIMEOUT_MS);

	// No saved session yet: said so, nothing loaded.
	answers.pickLoaded = () => assert.fail('nothing to pick');
	await run('pid.resumeSession');
	assert.deepEqual(fake.infos, ['pid: there are no saved sessions yet.']);
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));

	await run('pid.ask');
	assert.ok(fake.output.includes('\nfirst answer\n'), fake.output.join('\n'));
	const live = fake.output.slice(fake.output.indexOf('> first question'), fake.output.indexOf('— done (stop) —') + 1);
	// VS Code restarts: a new pid, no session.
	await within(ext.deactivate(), 'deactivate to stop pid', STEP_TIMEOUT_MS);
	activate();
	fake.output.length = 0;

	answers.pickLoaded = (items) => items.find((i) => i.label === 'first question');
	await run('pid.resumeSession');
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
	const qp = fake.loadedPicks.at(-1);
	assert.ok(qp, 'a QuickPick was shown');
	assert.equal(qp.title, 'pid: Session History');
	assert.equal(qp.disposed, true, 'and disposed');
	assert.ok(qp.matchOnDescription && qp.matchOnDetail, 'filters on folder and time too');
	assert.deepEqual(qp.items.map((i) => [i.label, i.description]), [['first question', ws]]);
	assert.match(qp.items[0].detail ?? '', /^(just now|\d+ minutes? ago) · 2 messages$/);
	const header = fake.output.findIndex((l) => /^pid: resumed session \S+ "first question" \(2 messages, in /.test(l));
	assert.notEqual(header, -1, fake.output.join('\n'));
	assert.deepEqual(fake.output.slice(header + 1, header + 1 + live.length), live, 'the transcript reads as the live run did');
	assert.equal(fake.output[header + 1 + live.length], 'pid: — end of the saved transcript: "pid: Ask" continues this session —');

	answers.input = 'second question';
	await run('pid.ask');
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
	assert.ok(fake.output.includes('\nsecond answer\n'), `the saved model plays its next turn:\n${fake.output.join('\n')}`);
	assert.ok(!fake.output.some((l) => l.startsWith('pid: new session')), 'no new session');

	// Dismissing the pick loads nothing.
	const before = fake.output.length;
	answers.pickLoaded = () => undefined;
	await run('pid.resumeSession');
	assert.equal(fake.loadedPicks.at(-1)?.items[0]?.detail?.endsWith('· 4 messages · the current session'), true, JSON.stringify(fake.loadedPicks.at(-1)?.items));
	assert.equal(fake.output.length, before, 'nothing written');

	// Held by another pid (another window): an error in words, and the output says it too.
	const sid = (fake.loadedPicks.at(-1)?.items[0] as { sessionId?: string } | undefined)?.sessionId;
	assert.ok(sid);
	await within(ext.deactivate(), 'deactivate to stop pid', STEP_TIMEOUT_MS);
	const holder = await PidClient.start({ command: PID_BIN, env: { ...process.env }, onBeforeToolCall: () => ({ decision: 'deny' }) });
	t.after(() => holder.kill());
	await within(holder.loadSession(sid), 'the other pid to load the session', STEP_TIMEOUT_MS);
	activate();
	answers.pickLoaded = (items) => items[0];
	await run('pid.resumeSession');
	const errors = fake.errors as string[]; // (deepEqual above narrowed it to never[])
	assert.equal(errors.length, 1, fake.output.join('\n'));
	assert.match(errors[0], new RegExp(`^pid: the session ${sid} is open in another pid \\(another editor window, or a pid still running\\): close it there, or quit that editor, then resume it again\\.`));
	assert.ok(fake.output.includes(`! ${errors[0].slice('pid: '.length)}`), fake.output.join('\n'));
	await holder.shutdown();

	await within(ext.deactivate(), 'deactivate to stop pid', STEP_TIMEOUT_MS);
});

test('extension.ts: the approval commands (and their keys) answer the first pending question: Allow always only when offered, Deny with the reason typed on the card; pid.approvalPending says when they apply', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const fake = fakeVscode({
		'pid.path': PID_BIN,
		'pid.model': { provider: 'script', turns: [
			{ content: [{ type: 'toolCall', id: 'b1', name: 'bash', arguments: { command: 'echo $(date) > stamp.txt' } }] },
			{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'hello.txt', content: 'hi\n' } }] },
			{ content: text('done') },
		] },
	}, ws, { input: 'go' });
	loadExtension(t, fake, tmp);
	const run = (id: string) => Promise.resolve(fake.commands.get(id)?.());
	const pendingKey = () => fake.executed.filter((a) => a[0] === 'setContext' && a[1] === 'pid.approvalPending').map((a) => a[2]);

	// Each command has a key, enabled only while a question waits.
	const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8'));
	const keys = Object.fromEntries(pkg.contributes.keybindings.filter((k: { command: string }) => k.command.startsWith('pid.approval.')).map((k: { command: string; key: string; when: string }) => [k.command, [k.key, k.when]]));
	assert.deepEqual(keys, {
		'pid.approval.allow': ['ctrl+alt+y', 'pid.approvalPending'],
		'pid.approval.allowAlways': ['ctrl+alt+shift+y', 'pid.approvalPending'],
		'pid.approval.deny': ['ctrl+alt+shift+n', 'pid.approvalPending'],
	});

	// Nothing waits: said so.
	await run('pid.approval.allow');
	assert.deepEqual(fake.infos, ['pid: no call is waiting for your approval.']);

	const view = openView(fake);
	const asked = run('pid.ask');
	await until(() => view.tools().get('b1')?.approval?.state === 'pending', 'the bash approval');
	assert.deepEqual(pendingKey(), [true]);
	// `echo $(date)` cannot be covered by a rule: Allow always is refused, the question stays.
	await run('pid.approval.allowAlways');
	assert.equal(fake.infos.at(-1), 'pid: Allow always is not offered for this call (pid cannot limit it to calls like this one): allow it once or deny it.');
	assert.equal(view.tools().get('b1')?.approval?.state, 'pending');
	// The reason typed on the card goes with the key's Deny.
	view.send({ type: 'reason', toolCallId: 'b1', text: 'not the date' });
	await run('pid.approval.deny');
	await until(() => view.tools().get('b1')?.approval?.state === 'denied', 'the bash call denied');
	assert.equal((view.tools().get('b1')?.approval as { reason?: string } | undefined)?.reason, 'not the date');
	assert.ok(!fs.existsSync(path.join(ws, 'stamp.txt')), 'the denied command did not run');

	await until(() => view.tools().get('w1')?.approval?.state === 'pending', 'the write approval');
	await run('pid.approval.allow');
	await within(asked, 'the pid.ask command', STEP_TIMEOUT_MS);
	assert.equal(view.tools().get('w1')?.approval?.state, 'allowed');
	assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), 'hi\n');
	// The reason as typed: pid frames it for the model, once (a pid from before it did sends it bare).
	assert.ok(fake.output.some((l) => /^\[b1\] bash failed: (The user denied this call of bash: )?not the date\.?$/.test(l)), fake.output.join('\n'));
	assert.equal(pendingKey().at(-1), false, 'the keys are off once nothing waits');
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
});

test('extension.ts: a call asking to leave the sandbox while the chat is hidden: a warning notification (never modal) says so; the Allow always key answers it, for exactly this command', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const fake = fakeVscode({
		'pid.path': PID_BIN,
		'pid.session': { mode: 'auto' },
		'pid.model': { provider: 'script', turns: [
			{ content: [{ type: 'toolCall', id: 'e1', name: 'bash', arguments: { command: 'touch ../outside.txt', unsandboxed: true, justification: 'next to the workspace' } }] },
			{ content: text('done') },
		] },
	}, ws, { input: 'go' });
	loadExtension(t, fake, tmp);
	const run = (id: string) => Promise.resolve(fake.commands.get(id)?.());
	// The chat view is never opened: the question waits in a chat nobody sees.
	const asked = run('pid.ask');
	await until(() => fake.warnings.length > 0, 'the notification');
	assert.deepEqual(fake.warnings, [{ message: 'pid asks to run a command outside the sandbox (with your full rights and the network): answer in the chat (Ctrl+Alt+Y allows once, Ctrl+Alt+Shift+N denies).', items: ['Show Chat'] }]);
	assert.deepEqual(fake.modals, [], 'never a modal dialog');
	assert.ok(!fs.existsSync(path.join(tmp, 'outside.txt')), 'nothing ran yet');
	await run('pid.approval.allowAlways');
	await within(asked, 'the pid.ask command', STEP_TIMEOUT_MS);
	assert.ok(fs.existsSync(path.join(tmp, 'outside.txt')), 'allowed always (exactly this command, this session), it ran outside the sandbox');
	assert.ok(fake.output.some((l) => l.startsWith('[e1] bash done (ran outside the sandbox)')), fake.output.join('\n'));
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
});

test('extension.ts: pid: Focus Chat before the chat\'s page is ready: an input box takes what is typed meanwhile, and it moves into the prompt box (with the focus) once the page is ready; a view shown otherwise takes no focus', { timeout: 60_000 }, async (t) => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const fake = fakeVscode({ 'pid.path': PID_BIN }, ws, {});
	loadExtension(t, fake, tmp);
	// The keys typed while VS Code opens the view go to the input box shown at once; the view
	// opens without taking the focus from it (<view>.open with preserveFocus).
	fake.hooks.onExecute = async (args) => {
		if (args[0] === 'pid.chat.open') {
			assert.equal(fake.inputBoxes.length, 1, 'the input box is shown before the view starts to open');
			fake.inputBoxes[0].value = 'fix the';
		}
	};
	await fake.commands.get('pid.focusChat')?.();
	assert.deepEqual(fake.executed.filter((a) => String(a[0]).startsWith('pid.chat.')), [['pid.chat.open', { preserveFocus: true }]]);
	assert.equal(fake.inputBoxes.length, 1);
	const box = fake.inputBoxes[0];
	assert.equal(box.shown, true);
	assert.equal(box.value, 'fix the');
	assert.equal(box.ignoreFocusOut, true);
	assert.match(box.prompt ?? '', /The chat is opening: what you type here moves into its prompt box/);
	box.value = 'fix the flaky';
	// The page is ready without the focus: the view takes it while the box is still open, and
	// what reached the box until then (the workbench's word comes back with the command's) counts.
	fake.hooks.onExecute = async (args) => {
		if (args[0] === 'pid.chat.focus') {
			assert.equal(box.disposed, false, 'the input box is still open while the focus moves to the view');
			box.value = 'fix the flaky test';
		}
	};
	const view = openView(fake);
	assert.match(view.html, /<body data-focus-prompt="1">/);
	await until(() => box.disposed, 'the input box to close once the page is ready');
	assert.deepEqual(fake.executed.filter((a) => String(a[0]).startsWith('pid.chat.')).map((a) => a[0]), ['pid.chat.open', 'pid.chat.focus'], 'the view takes the focus from the input box');
	assert.deepEqual(view.posted.map((p) => p.type).slice(0, 2), ['reset', 'focusPrompt']);
	assert.equal(view.posted[1].text, 'fix the flaky test', 'what was typed moves into the prompt box');
	// Shown again without being asked for (a reload): no focus, no input box.
	const again = openView(fake);
	assert.match(again.html, /<body>/);
	assert.ok(!again.posted.some((p) => p.type === 'focusPrompt'));
	assert.equal(fake.inputBoxes.length, 1);
});

test('extension.ts: in a VS Code without <view>.open, pid: Focus Chat opens the view with its focus command, then gives the focus back to a fresh input box holding what was typed', { timeout: 60_000 }, async (t) => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const fake = fakeVscode({ 'pid.path': PID_BIN }, ws, {});
	loadExtension(t, fake, tmp);
	fake.hooks.onExecute = async (args) => {
		if (args[0] === 'pid.chat.open') {
			throw new Error("command 'pid.chat.open' not found");
		}
		if (args[0] === 'pid.chat.focus') {
			fake.inputBoxes[0].value = 'fix';
		}
	};
	await fake.commands.get('pid.focusChat')?.();
	assert.deepEqual(fake.executed.map((a) => a[0]).filter((c) => String(c).startsWith('pid.chat.') || c === 'workbench.action.focusActiveEditorGroup'), ['pid.chat.open', 'pid.chat.focus', 'workbench.action.focusActiveEditorGroup']);
	assert.equal(fake.inputBoxes.length, 2);
	assert.equal(fake.inputBoxes[0].disposed, true);
	assert.equal(fake.inputBoxes[1].shown, true);
	assert.equal(fake.inputBoxes[1].value, 'fix', 'what was typed is carried over');
	const view = openView(fake);
	await until(() => fake.inputBoxes[1].disposed, 'the input box to close once the page is ready');
	assert.deepEqual(view.posted.filter((p) => p.type === 'focusPrompt').map((p) => p.text), ['fix']);
});

test('extension.ts: pid: Focus Chat, and the page took the focus as it loaded: the focus is left there (moving it again blurs the page and loses keys); what the input box got before moves into the prompt box', { timeout: 60_000 }, async (t) => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const fake = fakeVscode({ 'pid.path': PID_BIN }, ws, {});
	loadExtension(t, fake, tmp);
	await fake.commands.get('pid.focusChat')?.();
	const box = fake.inputBoxes[0];
	box.value = 'fix the flaky t';
	fake.hooks.onExecute = async (args) => {
		if (args[0] === 'setContext' && args[1] === 'pid.chatOpening' && !box.disposed) {
			box.value = 'fix the flaky te'; // a key the workbench had before the page took the focus
		}
	};
	const before = fake.executed.length;
	const view = openView(fake, { focused: true });
	await until(() => box.disposed, 'the input box to close once the page is ready');
	const after = fake.executed.slice(before).map((a) => a[0]);
	assert.ok(!after.some((c) => String(c).startsWith('pid.chat.')), `no focus command: ${JSON.stringify(after)}`);
	assert.deepEqual(view.shows, [], 'the view is not shown again (that would move the focus)');
	assert.deepEqual(view.posted.filter((p) => p.type === 'focusPrompt').map((p) => p.text), ['fix the flaky te']);
});

test('extension.ts: Enter in the input box of a chat still loading sends the text as a message', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const fake = fakeVscode({ 'pid.path': PID_BIN, 'pid.model': { provider: 'script', turns: [{ content: text('heard') }] } }, ws, {});
	loadExtension(t, fake, tmp);
	await fake.commands.get('pid.focusChat')?.();
	const box = fake.inputBoxes.at(-1);
	assert.ok(box && !box.disposed);
	box.value = 'say heard';
	box.accept();
	assert.equal(box.disposed, true);
	await until(() => fake.output.includes('\nheard\n'), `the answer:\n${fake.output.join('\n')}`);
	assert.ok(fake.output.includes('> say heard'), fake.output.join('\n'));
	const view = openView(fake);
	assert.ok(!view.posted.some((p) => p.type === 'focusPrompt' && p.text), 'nothing left to move into the prompt box');
});

test('extension.ts: what the prompt box holds unsent outlives a reload: of the chat\'s page (the page loaded again gets it back, each tab its own) and of the window (kept in the workspace\'s state); a message sent leaves nothing', { timeout: 60_000 }, async (t) => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const fake = fakeVscode({ 'pid.path': PID_BIN, 'pid.model': { provider: 'script', turns: [{ content: text('heard') }] } }, ws, {});
	const workspaceState = fakeMemento();
	const ext = loadExtension(t, fake, tmp, { workspaceState } as unknown as Partial<import('vscode').ExtensionContext>);
	type Posted = { type: string; draft?: string; tabs?: { id: string; shown: boolean }[] };
	const resets = (v: FakeView) => (v.posted as Posted[]).filter((p) => p.type === 'reset');
	const view = openView(fake);
	assert.equal(resets(view)[0]?.draft, '', 'nothing typed yet');
	// The person types; the page says so as the box changes.
	view.send({ type: 'draft', text: 'fix the fla' });
	view.send({ type: 'draft', text: 'fix the flaky test' });
	// The page reloads (its document is made again): its first reset brings the text back.
	const again = openView(fake);
	assert.equal(resets(again)[0]?.draft, 'fix the flaky test', 'the page loaded again gets the text back');
	// Each tab its own: a second tab starts empty, the first one's text comes back with it.
	again.send({ type: 'newTab' });
	await until(() => (resets(again).at(-1)?.tabs ?? []).length === 2, 'the second tab shown');
	assert.equal(resets(again).at(-1)?.draft, '', 'a new tab: an empty box');
	again.send({ type: 'draft', text: 'in tab two' });
	const first = resets(again).at(-1)?.tabs?.[0]?.id ?? '';
	const second = resets(again).at(-1)?.tabs?.[1]?.id ?? '';
	again.send({ type: 'showTab', id: first });
	await until(() => resets(again).at(-1)?.tabs?.[0]?.shown === true, 'the first tab shown again');
	assert.equal(resets(again).at(-1)?.draft, 'fix the flaky test');
	again.send({ type: 'showTab', id: second });
	await until(() => resets(again).at(-1)?.tabs?.[1]?.shown === true, 'the second tab shown again');
	assert.equal(resets(again).at(-1)?.draft, 'in tab two');
	assert.equal(workspaceState.get('pid.chat.draft'), 'in tab two', "the shown tab's text is in the workspace's state");
	again.send({ type: 'showTab', id: first });
	await until(() => resets(again).at(-1)?.tabs?.[0]?.shown === true, 'the first tab shown');

	// The window reloads: a fresh extension host; the shown tab's text comes back from the workspace's state.
	await within(ext.deactivate(), 'deactivate to stop pid', STEP_TIMEOUT_MS);
	delete require.cache[require.resolve('../extension')];
	delete require.cache[require.resolve('../chatview')];
	const ext2 = require('../extension') as Ext;
	t.after(() => ext2.deactivate());
	ext2.activate({ subscriptions: [], extensionUri: { fsPath: path.join(__dirname, '../..') }, workspaceState } as unknown as import('vscode').ExtensionContext);
	const reloaded = openView(fake);
	assert.equal(resets(reloaded)[0]?.draft, 'fix the flaky test', 'after a window reload the box holds what it held');

	// Sent: the page clears its box and says so; nothing comes back at the next reload.
	reloaded.send({ type: 'send', text: 'fix the flaky test', mode: 'steer' });
	reloaded.send({ type: 'draft', text: '' });
	await until(() => fake.output.includes('\nheard\n'), `the answer:\n${fake.output.join('\n')}`);
	assert.equal(resets(openView(fake))[0]?.draft, '');
	assert.deepEqual(workspaceState.keys(), [], "nothing left in the workspace's state");
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
});

test('extension.ts: after a restart the chat view offers the workspace\'s last session, naming it; its Resume loads it into the chat', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const fake = fakeVscode({
		'pid.path': PID_BIN,
		'pid.model': { provider: 'script', turns: [{ content: text('first answer') }, { content: text('second answer') }] },
	}, ws, { input: 'remember the plan' });
	const ext = loadExtension(t, fake, tmp);
	await within(Promise.resolve(fake.commands.get('pid.ask')?.()), 'pid.ask', STEP_TIMEOUT_MS);
	// VS Code restarts (or the window reloads): a fresh extension, its chat view shown.
	await within(ext.deactivate(), 'deactivate to stop pid', STEP_TIMEOUT_MS);
	delete require.cache[require.resolve('../extension')];
	const ext2 = require('../extension') as Ext;
	t.after(() => ext2.deactivate());
	ext2.activate({ subscriptions: [], extensionUri: { fsPath: path.join(__dirname, '../..') } } as unknown as import('vscode').ExtensionContext);
	const view = openView(fake);
	type Notice = { kind: string; text?: string; actions?: { label: string; action: string; arg?: string }[] };
	const notices = () => view.posted.flatMap((p) => (p.ops ?? []).map((o) => o.item as Notice | undefined)).filter((i): i is Notice => i?.kind === 'notice');
	await until(() => notices().length > 0, `the offer in the chat view:\n${JSON.stringify(view.posted)}\n${fake.output.join('\n')}`);
	const offer = notices()[0];
	assert.match(offer.text ?? '', /^Your last session in this folder: "remember the plan" \((just now|\d+ minutes? ago), 2 messages\)/);
	assert.equal(offer.actions?.[0]?.label, 'Resume "remember the plan"');
	view.send({ type: 'action', action: offer.actions?.[0]?.action, arg: offer.actions?.[0]?.arg });
	await until(() => fake.output.some((l) => /^pid: resumed session \S+ "remember the plan" \(2 messages, in /.test(l)), `the session loaded:\n${fake.output.join('\n')}`);
	await until(() => notices().some((n) => n.text?.startsWith('Resumed "remember the plan" (2 messages)')), 'the chat says it resumed');
	// (Each item by its id, as the page keeps it: an item is sent again when it changes.)
	const users = new Map(view.posted.flatMap((p) => (p.ops ?? []).map((o) => o.item as { kind: string; id?: string; text?: string } | undefined)).filter((i) => i?.kind === 'user').map((i) => [i?.id, i]));
	assert.deepEqual([...users.values()].map((i) => i?.text), ['remember the plan'], 'the transcript is in the chat');
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
});

test('extension.ts: the chat view\'s mode: Shift+Tab (cycleMode) and pid: Set Mode switch it, before and during a session; the page is told each time', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const answers: Answers = { input: 'hello' };
	const fake = fakeVscode({
		'pid.path': PID_BIN,
		'pid.model': { provider: 'script', turns: [{ content: text('hi') }] },
	}, ws, answers);
	loadExtension(t, fake, tmp);
	const view = openView(fake);
	/** The mode the page was last told (reset or a state op). */
	const shownMode = () => {
		let mode: { id: string; name: string } | undefined;
		for (const p of view.posted as { type: string; state?: { mode?: { id: string; name: string } }; ops?: { op: string; state?: { mode?: { id: string; name: string } } }[] }[]) {
			if (p.type === 'reset') {
				mode = p.state?.mode;
			}
			for (const o of p.ops ?? []) {
				if (o.op === 'state') {
					mode = o.state?.mode;
				}
			}
		}
		return mode?.id;
	};
	assert.equal(shownMode(), 'default', 'the page shows Default at once');
	// Before a session: Shift+Tab in the prompt box, then the picker.
	view.send({ type: 'cycleMode' });
	await until(() => shownMode() === 'acceptEdits', 'Shift+Tab to show Accept edits');
	answers.pick = (items) => items.find((i) => i.label === 'Plan');
	// The mode button runs pid.setMode (the stand-in's executeCommand only records it: run it here).
	view.send({ type: 'command', command: 'mode' });
	await until(() => fake.executed.some((e) => e[0] === 'pid.setMode'), 'the mode button to run pid.setMode');
	await within(Promise.resolve(fake.commands.get('pid.setMode')?.()), 'pid.setMode', STEP_TIMEOUT_MS);
	assert.equal(shownMode(), 'plan', 'the picker set Plan');
	const offered = fake.picks.at(-1) ?? [];
	assert.deepEqual(offered.map((i) => i.label), ['Default', 'Accept edits', 'Plan', 'Auto']);
	assert.equal(offered.find((i) => i.label === 'Accept edits')?.description, 'acceptEdits · current');
	assert.match(offered.find((i) => i.label === 'Plan')?.detail ?? '', /Nothing changes files/);
	// The session starts in plan mode; Shift+Tab then goes through session/setMode.
	await within(Promise.resolve(fake.commands.get('pid.ask')?.()), 'pid.ask', STEP_TIMEOUT_MS);
	assert.equal(shownMode(), 'plan');
	view.send({ type: 'cycleMode' });
	await until(() => shownMode() === 'auto', `Shift+Tab to show Auto:\n${fake.output.join('\n')}`);
	await fake.commands.get('pid.setMode')?.('default');
	assert.equal(shownMode(), 'default', 'pid.setMode with an argument sets it without asking');
	assert.ok(fake.output.includes('pid: the session is now in Auto mode'), fake.output.join('\n'));
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
});

test('extension.ts: "Rewind to here" on a message: the diff since is shown first, then files / conversation / both; the chat is redrawn and the message goes back into the prompt box', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const answers: Answers = { input: 'write one', modal: 'Allow' };
	const fake = fakeVscode({
		'pid.path': PID_BIN,
		'pid.editorFiles': false,
		'pid.model': { provider: 'script', turns: [
			{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'one\n' } }] },
			{ content: text('wrote one') },
			{ content: [{ type: 'toolCall', id: 'w2', name: 'write', arguments: { path: 'a.txt', content: 'two\n' } }] },
			{ content: text('wrote two') },
		] },
	}, ws, answers);
	loadExtension(t, fake, tmp);
	const view = openView(fake);
	type User = { kind: string; id: string; text: string; checkpointId?: string };
	/** The items the page holds now, by id (a reset starts over; a removal drops one). */
	const items = () => {
		const m = new Map<string, { kind: string; id: string; text?: string; checkpointId?: string }>();
		for (const p of view.posted as { type: string; items?: User[]; ops?: { op: string; item?: User; id?: string }[] }[]) {
			if (p.type === 'reset') {
				m.clear();
				for (const it of p.items ?? []) {
					m.set(it.id, it);
				}
			}
			for (const o of p.ops ?? []) {
				if (o.op === 'upsert' && o.item) {
					m.set(o.item.id, o.item);
				} else if (o.op === 'remove' && o.id) {
					m.delete(o.id);
				}
			}
		}
		return [...m.values()];
	};
	const users = () => items().filter((i) => i.kind === 'user') as User[];
	const ask = async (p: string) => {
		answers.input = p;
		const asked = Promise.resolve(fake.commands.get('pid.ask')?.());
		await until(() => view.tools().get(p === 'write one' ? 'w1' : 'w2')?.approval?.state === 'pending', 'the write\'s approval');
		view.send({ type: 'approve', toolCallId: p === 'write one' ? 'w1' : 'w2', choice: 'Allow' });
		await within(asked, 'pid.ask', STEP_TIMEOUT_MS);
	};
	await ask('write one');
	await ask('make it two');
	await until(() => users().length === 2 && users().every((u) => u.checkpointId), `both messages with their checkpoint: ${JSON.stringify(users())}`);
	assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'two\n');

	answers.pick = (list) => list.find((i) => i.label === 'Files and conversation');
	view.send({ type: 'rewind', id: users()[1].id });
	await until(() => users().length === 1, `the chat redrawn without the rewound message: ${JSON.stringify(items())}\n${fake.output.join('\n')}`);
	// The diff was shown first, as a diff document named after the message.
	const doc = fake.documents.at(-1);
	assert.ok(doc, 'a document was opened');
	assert.equal(doc.uri.scheme, 'pid-snapshot');
	assert.match(doc.uri.path, /Rewind to before make it two\.diff$/);
	assert.match(doc.text, /^# Rewind to before "make it two"/);
	assert.match(doc.text, /-one\n\+two/);
	assert.equal(fake.shownDocuments.length, 1);
	// The choices, with what each does.
	const offered = fake.picks.at(-1) ?? [];
	assert.deepEqual(offered.map((i) => [i.label, i.description]), [['Files and conversation', '1 file back as before'], ['Files only', '1 file back as before'], ['Conversation only', undefined]]);
	assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'one\n', 'the file is back');
	assert.deepEqual(users().map((u) => u.text), ['write one']);
	await until(() => items().some((i) => i.kind === 'notice' && /^Rewound to before "make it two": restored a\.txt; the conversation goes on from just before it\.$/.test(i.text ?? '')), `the report in the chat: ${JSON.stringify(items())}`);
	// The rewound message is back in the prompt box, to edit and send again.
	await until(() => view.posted.some((p) => p.type === 'focusPrompt' && p.text === 'make it two'), `the message back in the prompt box: ${JSON.stringify(view.posted.filter((p) => p.type === 'focusPrompt'))}`);
	assert.deepEqual(fake.warnings, [], 'nothing was left as it was');
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
});

test("extension.ts: tabs in the chat view: + opens a second conversation with its own session while the first one's question waits; the page gets the tab bar; the question in the tab not shown is said with the tab's name, and the keys show that tab before they answer", { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const fake = fakeVscode({
		'pid.path': PID_BIN,
		'pid.model': { provider: 'script', turns: [
			{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'one.txt', content: '1\n' } }] },
			{ content: text('wrote one') },
		] },
	}, ws, {});
	loadExtension(t, fake, tmp);
	const run = (id: string) => Promise.resolve(fake.commands.get(id)?.());
	const view = openView(fake);
	type Posted = { type: string; tabs?: { id: string; name: string; status: string; shown: boolean }[]; items?: unknown[] };
	const lastTabs = () => (view.posted as Posted[]).filter((p) => p.type === 'tabs' || p.type === 'reset').at(-1)?.tabs ?? [];

	// One tab: no bar.
	assert.deepEqual(lastTabs(), []);
	view.send({ type: 'send', text: 'write one', mode: 'steer' });
	await until(() => view.tools().get('w1')?.approval?.state === 'pending', "the first tab's approval");

	// +: a second tab, shown (an empty chat), the first one's question still waiting.
	view.send({ type: 'newTab' });
	await until(() => lastTabs().length === 2, 'the tab bar');
	assert.deepEqual(lastTabs().map((x) => [x.name, x.status, x.shown]), [['write one', 'approval', false], ['Chat 2', 'idle', true]]);
	const reset = (view.posted as Posted[]).filter((p) => p.type === 'reset').at(-1);
	assert.deepEqual(reset?.items, [], 'the new tab shows its own, empty chat');
	await until(() => fake.infos.some((m) => m === 'pid is waiting for your approval in the chat "write one" (Ctrl+Alt+Y allows, Ctrl+Alt+Shift+N denies).'), `the notification naming the tab: ${JSON.stringify(fake.infos)}`);

	// The second tab runs a command of its own session meanwhile.
	view.send({ type: 'send', text: '/plan', mode: 'steer' });
	await until(() => (view.posted as { ops?: { item?: { kind: string; text?: string } }[] }[]).some((p) => (p.ops ?? []).some((o) => o.item?.kind === 'command' && o.item.text === 'No plan yet.')), "the second tab's /plan");

	// The keys: the question is in the tab not shown, which is shown; the next key answers it.
	await run('pid.approval.allow');
	assert.equal(fake.infos.at(-1), 'pid: the question waiting is in the chat "write one", shown now: the key answers it once you have read it.');
	assert.deepEqual(lastTabs().map((x) => x.shown), [true, false]);
	assert.ok(!fs.existsSync(path.join(ws, 'one.txt')), 'not answered unseen');
	await run('pid.approval.allow');
	await until(() => fs.existsSync(path.join(ws, 'one.txt')), 'the write, allowed');
	await until(() => lastTabs()[0]?.status === 'idle', 'the first tab idle');

	// ×: the second tab closed; one tab left, no bar.
	const second = lastTabs()[1];
	view.send({ type: 'closeTab', id: second.id });
	await until(() => lastTabs().length === 0, 'the bar gone with the second tab');
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
});

test('extension.ts: "pid: Rewind to Here…" from the command palette lists the chat\'s messages newest first, as typed, and rewinds to the one picked', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	const answers: Answers = {};
	const fake = fakeVscode({
		'pid.path': PID_BIN,
		'pid.session': { permissions: { default: 'allow' } },
		'pid.model': { provider: 'script', turns: [
			{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'one\n' } }] },
			{ content: text('wrote one') },
			{ content: [{ type: 'toolCall', id: 'w2', name: 'write', arguments: { path: 'a.txt', content: 'two\n' } }] },
			{ content: text('wrote two') },
		] },
	}, ws, answers);
	loadExtension(t, fake, tmp);
	const view = openView(fake);
	const run = (id: string) => Promise.resolve(fake.commands.get(id)?.());
	// Nothing to rewind to yet: said so.
	await run('pid.rewind');
	assert.match(fake.infos.at(-1) ?? '', /^pid: no message of this chat can be rewound to/);
	for (const p of ['write one', 'make it two']) {
		answers.input = p;
		await within(run('pid.ask'), 'pid.ask', STEP_TIMEOUT_MS);
	}
	const cps = () => (view.posted as { type: string; ops?: { item?: { kind: string; checkpointId?: string } }[] }[]).flatMap((p) => p.ops ?? []).filter((o) => o.item?.kind === 'user' && o.item.checkpointId).length;
	await until(() => cps() >= 2, 'both messages with their checkpoint');
	answers.pick = (list) => list.find((i) => i.label === 'write one') ?? list.find((i) => i.label === 'Files only');
	await within(run('pid.rewind'), 'pid.rewind', STEP_TIMEOUT_MS);
	const lists = fake.picks.map((l) => l.map((i) => i.label));
	assert.deepEqual(lists.at(-2), ['make it two', 'write one'], 'the messages, newest first');
	assert.deepEqual(lists.at(-1), ['Files and conversation', 'Files only', 'Conversation only']);
	assert.ok(!fs.existsSync(path.join(ws, 'a.txt')), 'back to before "write one": the file it created is gone');
	assert.deepEqual(fake.errors, [], fake.output.join('\n'));
});
