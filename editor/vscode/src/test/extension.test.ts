// A smoke test of extension.ts, the only module that imports `vscode`: it is loaded here with
// a stand-in for the `vscode` module (a real VS Code cannot be downloaded in CI) and its
// commands are run against the real pid. This checks the wiring (settings, commands, the
// output channel, the modal approval with the diff, deactivate), not VS Code itself.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { PID_BIN, STEP_TIMEOUT_MS, text, within } from './harness';

interface Modal {
	message: string;
	options: { modal?: boolean; detail?: string };
	items: string[];
}

function fakeVscode(settings: Record<string, unknown>, folder: string, answers: { input?: string; modal?: string }) {
	const commands = new Map<string, (...args: unknown[]) => unknown>();
	const output: string[] = [];
	const modals: Modal[] = [];
	const infos: string[] = [];
	const errors: string[] = [];
	const disposable = { dispose() {} };
	const uri = { scheme: 'file', fsPath: folder, toString: () => pathToFileURL(folder).href };
	const vscode = {
		version: '1.90.0-test',
		ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
		window: {
			createOutputChannel: () => ({ appendLine: (l: string) => output.push(l), append() {}, show() {}, dispose() {} }),
			showInputBox: async () => answers.input,
			showWarningMessage: async (message: string, options: Modal['options'], ...items: string[]) => {
				modals.push({ message, options, items });
				return answers.modal;
			},
			showInformationMessage: async (m: string) => { infos.push(m); return undefined; },
			showErrorMessage: async (m: string) => { errors.push(m); return undefined; },
			withProgress: async (_o: unknown, task: (p: unknown, t: unknown) => Promise<unknown>) => task({ report() {} }, {}),
		},
		workspace: {
			workspaceFolders: [{ uri, name: 'ws', index: 0 }],
			getConfiguration: (section: string) => ({
				get: (key: string, def?: unknown) => (`${section}.${key}` in settings ? settings[`${section}.${key}`] : def),
			}),
			onDidChangeConfiguration: () => disposable,
			onDidChangeWorkspaceFolders: () => disposable,
		},
		commands: {
			registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => {
				commands.set(id, fn);
				return disposable;
			},
		},
	};
	return { vscode, commands, output, modals, infos, errors };
}

test('extension.ts with a stand-in vscode: pid: Ask runs a prompt, the modal shows the diff, deactivate stops pid', { timeout: 60_000 }, async (t) => {
	assert.ok(fs.existsSync(PID_BIN), `no pid binary at ${PID_BIN}: build it (go build -o bin/pid ./cmd/pid) or set PID_BIN`);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pid-vscode-ext-'));
	const ws = path.join(tmp, 'ws');
	fs.mkdirSync(ws);
	// The extension starts pid with this process's environment: keep pid's files in tmp.
	const saved = { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
	process.env.XDG_CONFIG_HOME = path.join(tmp, 'config');
	process.env.XDG_STATE_HOME = path.join(tmp, 'state');

	const fake = fakeVscode({
		'pid.path': PID_BIN,
		// The model comes from the setting (initializationOptions.model): a scripted one.
		'pid.model': { provider: 'script', turns: [
			{ content: [{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'hello.txt', content: 'hi\n' } }] },
			{ content: text('wrote hello.txt') },
		] },
	}, ws, { input: 'write hello', modal: 'Allow' });

	type Loader = (request: string, parent: unknown, isMain: boolean) => unknown;
	const mod = Module as unknown as { _load: Loader };
	const load = mod._load;
	mod._load = (request, parent, isMain) => (request === 'vscode' ? fake.vscode : load(request, parent, isMain));
	let ext: typeof import('../extension') | undefined;
	t.after(async () => {
		mod._load = load;
		await ext?.deactivate();
		for (const [k, v] of Object.entries(saved)) {
			if (v === undefined) {
				delete process.env[k];
			} else {
				process.env[k] = v;
			}
		}
		fs.rmSync(tmp, { recursive: true, force: true });
	});

	// require, not import(): the test is compiled to CommonJS, like the extension.
	ext = require('../extension') as typeof import('../extension');
	const subscriptions: { dispose(): void }[] = [];
	ext.activate({ subscriptions } as unknown as import('vscode').ExtensionContext);

	// The commands registered are the ones package.json contributes and activates on.
	const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8'));
	const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
	assert.deepEqual([...fake.commands.keys()].sort(), contributed);
	assert.deepEqual(pkg.activationEvents.slice().sort(), contributed.map((c: string) => `onCommand:${c}`));
	assert.equal(pkg.main, './out/extension.js');

	await fake.commands.get('pid.cancel')?.();
	assert.deepEqual(fake.infos, ['pid: nothing to cancel.']);

	await within(Promise.resolve(fake.commands.get('pid.ask')?.()), 'the pid.ask command', STEP_TIMEOUT_MS);
	assert.deepEqual(fake.errors, [], `no error shown; output:\n${fake.output.join('\n')}`);
	assert.equal(fake.modals.length, 1, 'one approval dialog');
	const m = fake.modals[0];
	assert.equal(m.message, 'pid wants to write hello.txt');
	assert.equal(m.options.modal, true);
	assert.match(m.options.detail ?? '', /\+\+\+ hello\.txt \(whole new content, 1 line\)\n\+hi$/);
	assert.deepEqual(m.items, ['Allow', 'Always allow', 'Deny']);
	assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), 'hi\n');
	for (const want of ['> write hello', '[w1] write waits for approval: pid wants to write hello.txt', '[w1] write allowed', '\nwrote hello.txt\n', '— done (stop) —']) {
		assert.ok(fake.output.includes(want), `the output channel shows ${JSON.stringify(want)}:\n${fake.output.join('\n')}`);
	}
	assert.ok(fake.output.some((l) => /^\[w1\] write done/.test(l)), fake.output.join('\n'));

	await within(ext.deactivate(), 'deactivate to stop pid', STEP_TIMEOUT_MS);
	ext = undefined;
});
