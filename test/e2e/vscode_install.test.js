// Installing pid into VS Code from one VSIX with nothing else (issue 34): the linux-x64 VSIX
// (vsce package --target linux-x64, carrying the pid under test as bin/pid) was installed into
// code-server with --install-extension, code-server runs with no Go and no pid on its PATH, and
// pid.path is unset: a session runs through the bundled binary, the log and "pid: Show Version"
// say so, and the installed extension declares extensionKind ["workspace"].

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { flat } from './lib/util.js';

const answer = 'Hello from the bundled pid.';

test('VS Code: the platform VSIX runs its bundled pid with pid.path unset and no pid or Go on PATH', { timeout: 180000 }, async () => {
	let bundled;
	let ranBundled = false;
	await withVSCode({ name: 'vscode-bundled', bundled: true, model: { provider: 'script', turns: [{ content: [{ type: 'text', text: answer }] }] } }, async (vs) => {
		assert.equal(vs.settings['pid.path'], undefined, 'pid.path is not set');
		// The extension as --install-extension put it: the linux-x64 package with its pid.
		const installed = fs.readdirSync(vs.dirs.extensions).filter((n) => n.startsWith('pid-agent.pid-vscode-'));
		assert.equal(installed.length, 1, `one pid extension installed: ${installed}`);
		const extDir = path.join(vs.dirs.extensions, installed[0]);
		// The platform VS Code recorded for it: in extensions.json's metadata, else in the
		// package's own manifest (.vsixmanifest, kept beside package.json).
		const registry = JSON.parse(fs.readFileSync(path.join(vs.dirs.extensions, 'extensions.json'), 'utf8'));
		const entry = registry.find((e) => e.identifier?.id === 'pid-agent.pid-vscode');
		const vsixManifest = path.join(extDir, '.vsixmanifest');
		const target = entry?.metadata?.targetPlatform ?? (fs.existsSync(vsixManifest) ? fs.readFileSync(vsixManifest, 'utf8').match(/TargetPlatform="([^"]+)"/)?.[1] : undefined);
		assert.equal(target, 'linux-x64', `the platform-specific package is the one installed: ${JSON.stringify(entry)}`);
		const manifest = JSON.parse(fs.readFileSync(path.join(extDir, 'package.json'), 'utf8'));
		assert.deepEqual(manifest.extensionKind, ['workspace']);
		bundled = path.join(extDir, 'bin', 'pid');
		assert.ok((fs.statSync(bundled).mode & 0o111) !== 0, `${bundled} is executable`);

		await vs.runCommand('pid: Ask');
		await vs.typeInQuickInput('say hello', { title: 'pid: Ask' });
		const chat = await vs.waitForChat((c) => c.status === 'idle' && c.items.some((i) => i.kind === 'assistant') && c, { what: 'the answer in the chat' });
		assert.deepEqual(chat.items.map((i) => [i.kind, i.text.trim()]), [['user', 'say hello'], ['assistant', answer]]);
		ranBundled = vs.processes().some((p) => p.cmd === bundled);

		await vs.runCommand('pid: Show Log');
		const log = flat(await vs.readOutputChannel('pid', { until: (t) => flat(t).includes('— done (stop) —') }));
		assert.ok(log.includes(`pid: started ${bundled} (pid `) && log.includes('; the binary bundled with the extension)'), `the log says the bundled pid started:\n${log}`);

		await vs.runCommand('pid: Show Version');
		const shown = await vs.waitForNotification('the binary bundled with the extension');
		assert.match(shown, /^pid \S+ \(\S+, go\S+, linux\/amd64\): /);
		assert.ok(shown.includes(bundled), `the notification names the bundled binary: ${shown}`);
		await vs.screenshot('vscode-bundled');
	});
	assert.ok(ranBundled, 'the pid process that ran the prompt is the bundled binary');
});
