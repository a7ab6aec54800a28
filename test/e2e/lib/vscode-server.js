// The VS Code a run shares (see vscode.js): code-server with pid's extension installed, and a
// headless Chromium. run.js starts one for the whole run; a test file run on its own gets one
// through vscode.js. Kept apart from vscode.js so that run.js can start it without loading
// node:test.

import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import puppeteer from 'puppeteer-core';
import { alive, cacheDir, isExecutable, node24Dir, pidBin, processKey, processTree, repoRoot, safeName, tempDir, Tracker, waitFor } from './util.js';

const codeServerBin = path.join(cacheDir, 'code-server', 'node_modules', '.bin', 'code-server');
const vsceBin = path.join(repoRoot, 'test', 'e2e', 'node_modules', '.bin', 'vsce');
const extensionSrc = path.join(repoRoot, 'editor', 'vscode');
const buildRoot = path.join(cacheDir, 'build');

/** The environment variable through which run.js hands its VS Code to the test processes. */
export const SHARED_VSCODE_ENV = 'PID_E2E_VSCODE';

/** The chromium binary: the real one behind Debian's wrapper script when it is there. */
export function chromiumBin() {
	for (const p of ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
		if (isExecutable(p)) {
			return p;
		}
	}
	throw new Error('chromium is not installed: run scripts/e2e/install.sh (or make e2e)');
}

/**
 * The environment code-server and its tools run in: Node 24 first on PATH, and no folder that
 * holds `go` or a `pid` (Go's own, GOPATH/bin): the extension finds no Go and no pid but the one
 * its VSIX carries, as on a machine where a person installed the VSIX alone (issue 34).
 */
function nodeEnv(extra = {}) {
	const kept = (process.env.PATH ?? '').split(':').filter((d) => d !== '' && !isExecutable(path.join(d, 'go')) && !isExecutable(path.join(d, 'pid')));
	return { ...process.env, PATH: [path.join(node24Dir, 'bin'), ...kept].join(':'), ...extra };
}

/** The platform of the VSIX the e2e builds and installs (vsce package --target). */
export const VSIX_TARGET = 'linux-x64';

/**
 * run runs a program to its end and resolves with its output; it rejects, with the output, when
 * the program fails or outlives timeoutMs (then it is killed).
 */
function run(cmd, args, { cwd, env, timeoutMs = 120000 } = {}) {
	return new Promise((resolve, reject) => {
		const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
		let out = '';
		child.stdout.on('data', (d) => (out += d));
		child.stderr.on('data', (d) => (out += d));
		const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
		child.on('error', (err) => {
			clearTimeout(timer);
			reject(new Error(`${cmd} could not start: ${err.message}`));
		});
		child.on('close', (code, signal) => {
			clearTimeout(timer);
			if (code === 0) {
				resolve(out);
			} else {
				reject(new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${signal ?? `exit code ${code}`}):\n${out}`));
			}
		});
	});
}

let vsixBuild;

/**
 * sourceKey returns a hash of what a build of the extension is made from: editor/vscode's files
 * (names, contents, link targets; not node_modules, out, bin or .vsix files), test/e2e's lock
 * (vsce's version) and the pid binary it carries.
 */
function sourceKey() {
	const h = crypto.createHash('sha256');
	h.update(fs.readFileSync(path.join(repoRoot, 'test', 'e2e', 'package-lock.json')));
	h.update(fs.readFileSync(pidBin()));
	const walk = (dir, rel) => {
		for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
			const r = rel ? `${rel}/${e.name}` : e.name;
			if (!rel && (e.name === 'node_modules' || e.name === 'out' || e.name === 'bin' || e.name.endsWith('.vsix'))) {
				continue;
			}
			const p = path.join(dir, e.name);
			if (e.isDirectory()) {
				h.update(`dir\0${r}\0`);
				walk(p, r);
			} else if (e.isSymbolicLink()) {
				h.update(`link\0${r}\0${fs.readlinkSync(p)}\0`);
			} else {
				h.update(`file\0${r}\0${fs.statSync(p).size}\0`);
				h.update(fs.readFileSync(p));
			}
		}
	};
	walk(extensionSrc, '');
	return h.digest('hex').slice(0, 20);
}

/**
 * buildVsix builds pid's extension from editor/vscode's current files into the linux-x64 .vsix
 * (`vsce package --target linux-x64`, as `make vsix` does) carrying the pid under test
 * (PID_BIN) as bin/pid, and returns its path. The sources are copied to a folder of this process
 * under .cache/e2e/build/ (removed when the process exits) and built there with their own
 * `npm ci`, so that editor/vscode's out/ and node_modules are left alone and two test runs at
 * once do not build in the same folder. The .vsix is kept as .cache/e2e/build/pid-KEY.vsix,
 * KEY a hash of the sources (sourceKey): a later run with the same sources installs it without
 * building (a build took 20 to 40 s on a loaded 2-core machine). One build per process (later
 * calls share it): the process that starts the VS Code server (run.js, or a test file run on
 * its own).
 */
export function buildVsix() {
	vsixBuild ??= (async () => {
		for (const p of [vsceBin, path.join(node24Dir, 'bin', 'node')]) {
			if (!isExecutable(p)) {
				throw new Error(`${p} is missing: run scripts/e2e/install.sh (or make e2e)`);
			}
		}
		fs.mkdirSync(buildRoot, { recursive: true });
		const cached = path.join(buildRoot, `pid-${sourceKey()}.vsix`);
		if (fs.existsSync(cached)) {
			return cached;
		}
		const buildDir = fs.mkdtempSync(path.join(buildRoot, 'vscode-'));
		process.on('exit', () => fs.rmSync(buildDir, { recursive: true, force: true }));
		const skip = new Set(['node_modules', 'out', 'bin']);
		for (const name of fs.readdirSync(extensionSrc)) {
			if (!skip.has(name) && !name.endsWith('.vsix')) {
				fs.cpSync(path.join(extensionSrc, name), path.join(buildDir, name), { recursive: true });
			}
		}
		const env = nodeEnv();
		await run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: buildDir, env, timeoutMs: 480000 });
		fs.mkdirSync(path.join(buildDir, 'bin'));
		fs.copyFileSync(pidBin(), path.join(buildDir, 'bin', 'pid'));
		fs.chmodSync(path.join(buildDir, 'bin', 'pid'), 0o755);
		const vsix = path.join(buildDir, 'pid.vsix');
		await run(vsceBin, ['package', '--target', VSIX_TARGET, '--out', vsix], { cwd: buildDir, env, timeoutMs: 480000 });
		// Into place whole (a rename), so that a run starting meanwhile never installs half a file;
		// builds of sources a day old go.
		const tmp = `${cached}.${process.pid}.tmp`;
		fs.copyFileSync(vsix, tmp);
		fs.renameSync(tmp, cached);
		for (const name of fs.readdirSync(buildRoot)) {
			const p = path.join(buildRoot, name);
			if (/^pid-[0-9a-f]+\.vsix$/.test(name) && p !== cached && Date.now() - fs.statSync(p).mtimeMs > 86400000) {
				fs.rmSync(p, { force: true });
			}
		}
		return cached;
	})();
	return vsixBuild;
}

// --- the shared VS Code: one code-server and one Chromium for a run ---------------------------

/**
 * VSCodeServer is the VS Code a run shares: code-server (with pid's extension installed) on a
 * free loopback port and a headless Chromium whose DevTools the test processes connect to.
 * VSCodeServer.start() starts one and owns it (close() ends it); VSCodeServer.attach(info)
 * uses one another process started (run.js: info comes from toEnv() through PID_E2E_VSCODE).
 * Windows on it are opened one at a time: acquire() and release() around each.
 */
export class VSCodeServer {
	constructor({ dirs, url, wsEndpoint, server, browser, owner }) {
		/** tmp, userData, extensions, xdg (code-server's own), chromiumProfile, logs. */
		this.dirs = dirs;
		/** code-server's base URL, http://127.0.0.1:PORT. */
		this.url = url;
		/** Chromium's DevTools endpoint (puppeteer.connect({browserWSEndpoint})). */
		this.wsEndpoint = wsEndpoint;
		/** {pid, start} of code-server and of Chromium. */
		this.server = server;
		this.browser = browser;
		this.owner = owner;
		this.tracker = undefined;
		this._closed = false;
	}

	/**
	 * start builds and installs pid's extension, starts code-server and Chromium and returns the
	 * server once both listen. On failure it ends what it started and throws with code-server's
	 * output.
	 */
	static async start({ name = 'vscode-server' } = {}) {
		for (const p of [codeServerBin, path.join(node24Dir, 'bin', 'node')]) {
			if (!isExecutable(p)) {
				throw new Error(`${p} is missing: run scripts/e2e/install.sh (or make e2e)`);
			}
		}
		const chromium = chromiumBin();
		const tmp = tempDir(safeName(name));
		const dirs = {
			tmp,
			userData: path.join(tmp, 'user-data'),
			extensions: path.join(tmp, 'extensions'),
			xdg: path.join(tmp, 'xdg'),
			chromiumProfile: path.join(tmp, 'chromium'),
			logs: path.join(tmp, 'logs'),
		};
		for (const d of Object.values(dirs)) {
			fs.mkdirSync(d, { recursive: true });
		}
		// code-server writes its config and logs into the XDG folders: not the user's.
		const xdg = {};
		for (const k of ['CONFIG', 'STATE', 'DATA', 'CACHE']) {
			xdg[`XDG_${k}_HOME`] = path.join(dirs.xdg, k.toLowerCase());
			fs.mkdirSync(xdg[`XDG_${k}_HOME`], { recursive: true });
		}
		const env = nodeEnv(xdg);
		const common = ['--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];
		const tracker = new Tracker();
		tracker.tmpDir = tmp;
		const s = new VSCodeServer({ dirs, owner: true });
		s.tracker = tracker;
		try {
			// Chromium starts while the extension is built and installed (code-server starts once
			// it is installed: it reads its extensions when it starts).
			const browser = s._startChromium(chromium);
			const server = (async () => {
				const vsix = await buildVsix();
				await run(codeServerBin, [...common, '--install-extension', vsix, '--force'], { env, cwd: tmp });
				await s._startCodeServer(env, common);
			})();
			const results = await Promise.allSettled([browser, server]);
			for (const r of results) {
				if (r.status === 'rejected') {
					throw r.reason;
				}
			}
		} catch (err) {
			err.message += `\n${s.serverLog()}`;
			await s.close().catch(() => {});
			throw err;
		}
		return s;
	}

	/** attach returns the server described by info (toEnv()'s JSON); this process does not own it. */
	static attach(info) {
		const i = typeof info === 'string' ? JSON.parse(info) : info;
		return new VSCodeServer({ ...i, owner: false });
	}

	/** toEnv returns what attach needs, as JSON (the value of PID_E2E_VSCODE). */
	toEnv() {
		const { dirs, url, wsEndpoint, server, browser } = this;
		return JSON.stringify({ dirs, url, wsEndpoint, server, browser });
	}

	async _startCodeServer(env, common) {
		const logFile = path.join(this.dirs.logs, 'code-server.log');
		const log = fs.openSync(logFile, 'a');
		const child = spawn(
			codeServerBin,
			[
				...common,
				'--bind-addr', '127.0.0.1:0',
				'--auth', 'none',
				'--disable-telemetry',
				'--disable-update-check',
				'--disable-workspace-trust',
				'--disable-getting-started-override',
				'--ignore-last-opened',
			],
			{ env, cwd: this.dirs.tmp, detached: true, stdio: ['ignore', log, log] },
		);
		fs.closeSync(log);
		this.tracker.addRoot(child.pid);
		let exited;
		child.on('exit', (code, signal) => (exited = signal ?? `exit code ${code}`));
		const port = await waitFor(
			() => {
				if (exited) {
					throw new Error(`code-server exited (${exited})`);
				}
				return fs.readFileSync(logFile, 'utf8').match(/HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1];
			},
			{ timeout: 60000, what: 'code-server to listen' },
		);
		this.server = { pid: child.pid, start: processTree([child.pid])[0]?.start };
		this.url = `http://127.0.0.1:${port}`;
	}

	async _startChromium(chromium) {
		const args = [
			'--headless=new',
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--no-default-browser-check',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
			'--disable-extensions',
			'--disable-dev-shm-usage',
			'--password-store=basic',
			`--user-data-dir=${this.dirs.chromiumProfile}`,
			'--remote-debugging-address=127.0.0.1',
			'--remote-debugging-port=0',
			'about:blank',
		];
		const log = fs.openSync(path.join(this.dirs.logs, 'chromium.log'), 'a');
		const child = spawn(chromium, args, { detached: true, stdio: ['ignore', log, log] });
		fs.closeSync(log);
		this.tracker.addRoot(child.pid);
		let exited;
		child.on('exit', (code, signal) => (exited = signal ?? `exit code ${code}`));
		// With port 0 Chromium picks a free port and writes it, then its browser target's path,
		// into DevToolsActivePort.
		const portFile = path.join(this.dirs.chromiumProfile, 'DevToolsActivePort');
		const m = await waitFor(
			() => {
				if (exited) {
					throw new Error(`chromium exited (${exited}); see ${path.join(this.dirs.logs, 'chromium.log')}`);
				}
				return fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').match(/^(\d+)\n(\/devtools\/browser\/\S+)/);
			},
			{ timeout: 30000, what: 'chromium to listen for DevTools' },
		);
		this.browser = { pid: child.pid, start: processTree([child.pid])[0]?.start };
		this.wsEndpoint = `ws://127.0.0.1:${m[1]}${m[2]}`;
	}

	/** serverLog returns the end of code-server's output (for failure messages). */
	serverLog() {
		let text = '';
		try {
			text = fs.readFileSync(path.join(this.dirs.logs, 'code-server.log'), 'utf8');
		} catch {
			// Not started yet.
		}
		return `-- code-server's output (end):\n${text.split('\n').slice(-30).join('\n')}`;
	}

	/** problem says what is wrong with the server (code-server or Chromium gone), or ''. */
	problem() {
		const gone = [];
		for (const [what, p] of [['code-server', this.server], ['Chromium', this.browser]]) {
			if (!p?.pid || alive([p]).length === 0) {
				gone.push(what);
			}
		}
		return gone.length > 0 ? `the shared VS Code is broken: ${gone.join(' and ')} no longer run${gone.length === 1 ? 's' : ''}\n${this.serverLog()}` : '';
	}

	/** baseline returns the processKeys of what the server runs now (no window open: its own). */
	baseline() {
		return new Set(processTree([this.server.pid]).map(processKey));
	}

	/**
	 * acquire waits until no other window is open on the server (a lock file naming the process
	 * holding it; a lock of a process that is gone is taken over) and takes it. Windows of two
	 * test processes at once would each count the other's processes as their own.
	 */
	async acquire({ timeout = 600000 } = {}) {
		const lock = path.join(this.dirs.tmp, 'window.lock');
		await waitFor(
			() => {
				try {
					fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
					return true;
				} catch (err) {
					if (err.code !== 'EEXIST') {
						throw err;
					}
				}
				const holder = Number(fs.readFileSync(lock, 'utf8')) || 0;
				let holderAlive = holder > 0;
				try {
					process.kill(holder, 0);
				} catch {
					holderAlive = false;
				}
				if (!holderAlive) {
					fs.rmSync(lock, { force: true });
				}
				return false;
			},
			{ timeout, what: 'the shared VS Code to be free (another test holds its window lock)' },
		);
		this._locked = true;
	}

	/** release gives the window lock back (see acquire). */
	release() {
		if (this._locked) {
			this._locked = false;
			fs.rmSync(path.join(this.dirs.tmp, 'window.lock'), { force: true });
		}
	}

	/**
	 * resetUserData puts the server's user data back to a fresh window's: the user settings are
	 * `settings` only, and VS Code's server-side storage (per-folder and global storage, local
	 * history, keybindings, snippets, tasks) is gone. Called with the window lock held, no window
	 * open. What a window keeps in the browser (its global and workspace state, caches) dies
	 * with its browser context.
	 */
	resetUserData(settings) {
		const user = path.join(this.dirs.userData, 'User');
		fs.mkdirSync(user, { recursive: true });
		for (const name of ['workspaceStorage', 'globalStorage', 'History', 'snippets', 'keybindings.json', 'tasks.json', 'mcp.json', 'profiles', 'prompts']) {
			fs.rmSync(path.join(user, name), { recursive: true, force: true });
		}
		fs.writeFileSync(path.join(user, 'settings.json'), JSON.stringify(settings, null, 2));
	}

	/**
	 * close ends the server if this process owns it: Chromium through DevTools, then SIGTERM to
	 * code-server's process group, then SIGTERM and SIGKILL for what is left, and removes its
	 * temp folder (kept with E2E_KEEP=1). It returns the Tracker's report ({leftover} must be
	 * empty); for a server this process does not own it returns an empty one.
	 */
	async close() {
		if (!this.owner) {
			return { afterGentle: [], afterTerm: [], leftover: [], all: [] };
		}
		if (this._closed) {
			return this._report;
		}
		this._closed = true;
		this._report = await this.tracker.stop(async () => {
			if (this.wsEndpoint) {
				let timer;
				const b = await puppeteer.connect({ browserWSEndpoint: this.wsEndpoint }).catch(() => undefined);
				await Promise.race([b?.close(), new Promise((r) => (timer = setTimeout(r, 5000)))]);
				clearTimeout(timer);
			}
			if (this.server?.pid) {
				try {
					process.kill(-this.server.pid, 'SIGTERM');
				} catch {
					// Already gone.
				}
			}
		});
		if (process.env.E2E_KEEP !== '1') {
			fs.rmSync(this.dirs.tmp, { recursive: true, force: true });
		}
		return this._report;
	}
}

