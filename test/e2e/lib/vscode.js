// The VS Code harness: a real VS Code (code-server 4.139.1, VS Code 1.139.1) with pid's
// extension installed from a .vsix built from editor/vscode, in headless Chromium driven through
// puppeteer-core, against the real pid binary. startVSCode() starts it; the object it returns
// types into the workbench as a person would (F1, the command palette, input boxes), reads what
// the workbench shows (the output panel, notifications), saves screenshots and tears it all down.
// Every wait is on the DOM's state (waitFor), never a fixed sleep.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import puppeteer from 'puppeteer-core';
import { cacheDir, isExecutable, node24Dir, pidBin, repoRoot, safeName, screenshotDir, tempDir, Tracker, waitFor, withHarness } from './util.js';

const codeServerBin = path.join(cacheDir, 'code-server', 'node_modules', '.bin', 'code-server');
const vsceBin = path.join(repoRoot, 'test', 'e2e', 'node_modules', '.bin', 'vsce');
const extensionSrc = path.join(repoRoot, 'editor', 'vscode');
const buildRoot = path.join(cacheDir, 'build');

/** The chromium binary: the real one behind Debian's wrapper script when it is there. */
function chromiumBin() {
	for (const p of ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
		if (isExecutable(p)) {
			return p;
		}
	}
	throw new Error('chromium is not installed: run scripts/e2e/install.sh (or make e2e)');
}

/** The environment code-server and its tools run in: Node 24 first on PATH. */
function nodeEnv(extra = {}) {
	return { ...process.env, PATH: `${path.join(node24Dir, 'bin')}:${process.env.PATH}`, ...extra };
}

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
 * buildVsix builds pid's extension from editor/vscode's current files into a .vsix (with
 * `vsce package`) and returns its path. The sources are copied to a folder of this process
 * under .cache/e2e/build/ (removed when the process exits) and built there with their own
 * `npm ci`, so that editor/vscode's out/ and node_modules are left alone and two test runs at
 * once do not build in the same folder. One build per test process (later calls share it).
 */
export function buildVsix() {
	vsixBuild ??= (async () => {
		for (const p of [vsceBin, path.join(node24Dir, 'bin', 'node')]) {
			if (!isExecutable(p)) {
				throw new Error(`${p} is missing: run scripts/e2e/install.sh (or make e2e)`);
			}
		}
		fs.mkdirSync(buildRoot, { recursive: true });
		const buildDir = fs.mkdtempSync(path.join(buildRoot, 'vscode-'));
		process.on('exit', () => fs.rmSync(buildDir, { recursive: true, force: true }));
		const skip = new Set(['node_modules', 'out']);
		for (const name of fs.readdirSync(extensionSrc)) {
			if (!skip.has(name) && !name.endsWith('.vsix')) {
				fs.cpSync(path.join(extensionSrc, name), path.join(buildDir, name), { recursive: true });
			}
		}
		const env = nodeEnv();
		await run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: buildDir, env });
		const vsix = path.join(buildDir, 'pid.vsix');
		await run(vsceBin, ['package', '--out', vsix], { cwd: buildDir, env });
		return vsix;
	})();
	return vsixBuild;
}

/** The user settings every harness starts with: a quiet workbench, nothing from the network. */
const quietSettings = {
	'workbench.startupEditor': 'none',
	'workbench.tips.enabled': false,
	'workbench.welcomePage.walkthroughs.openOnInstall': false,
	'workbench.enableExperiments': false,
	'telemetry.telemetryLevel': 'off',
	'update.mode': 'none',
	'extensions.autoCheckUpdates': false,
	'extensions.autoUpdate': false,
	'extensions.ignoreRecommendations': true,
	'security.workspace.trust.enabled': false,
	'chat.disableAIFeatures': true,
	'git.enabled': false,
	'npm.autoDetect': 'off',
	'window.restoreWindows': 'none',
	'workbench.secondarySideBar.defaultVisibility': 'hidden',
	// Unsaved changes stay unsaved until a person (or pid's edit) saves them.
	'files.autoSave': 'off',
};

/**
 * startVSCode starts code-server with pid's extension (built by buildVsix) on a free loopback
 * port, opens its workbench in headless Chromium and waits until the workbench is ready.
 *
 * options:
 *   name       label for the temp folder and the logs (default 'vscode')
 *   model      pid.model: the model for new sessions, e.g. a scripted model
 *              {provider: 'script', turns: [...]} (see docs/protocol.md); nothing from the network
 *   settings   more user settings (merged over the quiet defaults and pid.path/pid.model)
 *   files      {relativePath: content} written into the workspace folder before start
 *   env        more environment for code-server, which its extension host and pid inherit
 *   viewport   {width, height} of the page (default 1280x800)
 *
 * pid runs as the extension starts it, with XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_DATA_HOME and
 * XDG_CACHE_HOME in this harness's temp folder (code-server's environment, which pid inherits),
 * so no user setting, remembered answer or saved session leaks in or out.
 *
 * It throws, after tearing down what it started, when something cannot start; the message says
 * what to install or what the workbench showed.
 */
export async function startVSCode(options = {}) {
	const name = safeName(options.name ?? 'vscode');
	for (const p of [codeServerBin, path.join(node24Dir, 'bin', 'node')]) {
		if (!isExecutable(p)) {
			throw new Error(`${p} is missing: run scripts/e2e/install.sh (or make e2e)`);
		}
	}
	const chromium = chromiumBin();
	const pid = pidBin();
	const vsix = await buildVsix();

	const tmp = tempDir(name);
	const dirs = {
		tmp,
		userData: path.join(tmp, 'user-data'),
		extensions: path.join(tmp, 'extensions'),
		workspace: path.join(tmp, 'workspace'),
		xdg: path.join(tmp, 'xdg'),
		chromiumProfile: path.join(tmp, 'chromium'),
		logs: path.join(tmp, 'logs'),
	};
	for (const d of Object.values(dirs)) {
		fs.mkdirSync(d, { recursive: true });
	}
	for (const [rel, content] of Object.entries(options.files ?? {})) {
		const p = path.join(dirs.workspace, rel);
		fs.mkdirSync(path.dirname(p), { recursive: true });
		fs.writeFileSync(p, content);
	}
	const xdg = {
		XDG_CONFIG_HOME: path.join(dirs.xdg, 'config'),
		XDG_STATE_HOME: path.join(dirs.xdg, 'state'),
		XDG_DATA_HOME: path.join(dirs.xdg, 'data'),
		XDG_CACHE_HOME: path.join(dirs.xdg, 'cache'),
	};
	for (const d of Object.values(xdg)) {
		fs.mkdirSync(d, { recursive: true });
	}
	const env = nodeEnv({ ...xdg, ...(options.env ?? {}) });

	const settings = { ...quietSettings, 'pid.path': pid, ...(options.model ? { 'pid.model': options.model } : {}), ...(options.settings ?? {}) };
	fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
	fs.writeFileSync(path.join(dirs.userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));

	const common = ['--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];
	try {
		await run(codeServerBin, [...common, '--install-extension', vsix, '--force'], { env, cwd: tmp });
	} catch (err) {
		fs.rmSync(tmp, { recursive: true, force: true });
		throw err;
	}

	const tracker = new Tracker();
	tracker.tmpDir = tmp;
	const h = new VSCodeHarness({ dirs, tracker, settings, xdg });
	try {
		await h._startServer(env, common);
		await h._startBrowser(chromium, options.viewport ?? { width: 1280, height: 800 });
		await h._openWorkbench();
	} catch (err) {
		await h.close().catch(() => {});
		err.message += `\n${h.serverLog()}`;
		throw err;
	}
	return h;
}

/** A running VS Code: see startVSCode. Its methods are called one at a time by one test. */
export class VSCodeHarness {
	constructor({ dirs, tracker, settings, xdg }) {
		/** The temp folders: tmp, userData, extensions, workspace, xdg, chromiumProfile, logs. */
		this.dirs = dirs;
		/** The XDG_* folders pid runs with. */
		this.xdg = xdg;
		/** The user settings written at start. */
		this.settings = settings;
		this.tracker = tracker;
		/** The puppeteer Page of the workbench (for what the helpers do not cover). */
		this.page = undefined;
		this.browser = undefined;
		/** The workbench's URL. */
		this.url = undefined;
		this._serverLog = [];
		this._closed = false;
	}

	async _startServer(env, common) {
		const logFile = fs.createWriteStream(path.join(this.dirs.logs, 'code-server.log'));
		const server = spawn(
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
				this.dirs.workspace,
			],
			{ env, cwd: this.dirs.workspace, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
		);
		this.server = server;
		this.tracker.addRoot(server.pid);
		let exited;
		server.on('exit', (code, signal) => (exited = signal ?? `exit code ${code}`));
		const onData = (d) => {
			logFile.write(d);
			this._serverLog.push(String(d));
			if (this._serverLog.length > 200) {
				this._serverLog.shift();
			}
		};
		server.stdout.on('data', onData);
		server.stderr.on('data', onData);
		const port = await waitFor(
			() => {
				if (exited) {
					throw new Error(`code-server exited (${exited})`);
				}
				return this._serverLog.join('').match(/HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1];
			},
			{ timeout: 30000, what: 'code-server to listen' },
		);
		this.url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(this.dirs.workspace)}`;
	}

	async _startBrowser(chromium, viewport) {
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
			`--window-size=${viewport.width},${viewport.height}`,
			'about:blank',
		];
		const log = fs.openSync(path.join(this.dirs.logs, 'chromium.log'), 'a');
		const browserProc = spawn(chromium, args, { detached: true, stdio: ['ignore', log, log] });
		fs.closeSync(log);
		this.browserProc = browserProc;
		this.tracker.addRoot(browserProc.pid);
		let exited;
		browserProc.on('exit', (code, signal) => (exited = signal ?? `exit code ${code}`));
		// With port 0 Chromium picks a free port and writes it into DevToolsActivePort.
		const portFile = path.join(this.dirs.chromiumProfile, 'DevToolsActivePort');
		const port = await waitFor(
			() => {
				if (exited) {
					throw new Error(`chromium exited (${exited}); see ${path.join(this.dirs.logs, 'chromium.log')}`);
				}
				const m = fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').match(/^(\d+)\n/);
				return m && m[1];
			},
			{ timeout: 30000, what: 'chromium to listen for DevTools' },
		);
		this.browser = await puppeteer.connect({ browserURL: `http://127.0.0.1:${port}`, defaultViewport: viewport, protocolTimeout: 60000 });
		const pages = await this.browser.pages();
		this.page = pages[0] ?? (await this.browser.newPage());
	}

	async _openWorkbench() {
		await this.page.goto(this.url, { waitUntil: 'domcontentloaded', timeout: 60000 });
		await this.waitForReady();
	}

	/**
	 * waitForReady waits until the workbench is ready for keys: its parts are laid out, the
	 * status bar is shown and the explorer is there. Extensions' commands may be registered a
	 * little later: runCommand waits for the command it runs.
	 */
	async waitForReady(timeout = 60000) {
		await waitFor(
			() =>
				this.page.evaluate(() => {
					const wb = document.querySelector('.monaco-workbench');
					const status = document.querySelector('.part.statusbar');
					const explorer = document.querySelector('.explorer-folders-view, .explorer-viewlet');
					return Boolean(wb && status && status.getBoundingClientRect().height > 0 && explorer);
				}),
			{ timeout, what: 'the VS Code workbench to be ready', describe: () => this.describe() },
		);
	}

	/** serverLog returns the end of code-server's output (for failure messages). */
	serverLog() {
		return `-- code-server's output (end):\n${this._serverLog.join('').split('\n').slice(-30).join('\n')}`;
	}

	/** describe returns the workbench's visible text (for failure messages). */
	async describe() {
		const text = await this.page.evaluate(() => document.querySelector('.monaco-workbench')?.innerText ?? document.body?.innerText ?? '');
		return `-- the workbench shows:\n${text.slice(0, 4000)}`;
	}

	/** processes returns the live processes this harness started (code-server, Chromium, pid...). */
	processes() {
		return this.tracker.track();
	}

	/**
	 * quickInput returns the quick input widget's state when it is shown, else undefined:
	 * {title, value, placeholder, message, rows: [aria-labels of the visible rows]}.
	 */
	async quickInput() {
		return this.page.evaluate(() => {
			const w = document.querySelector('.quick-input-widget');
			if (!w || w.style.display === 'none' || w.getBoundingClientRect().height === 0) {
				return undefined;
			}
			const input = w.querySelector('.quick-input-box input');
			return {
				title: w.querySelector('.quick-input-title')?.textContent ?? '',
				value: input?.value ?? '',
				placeholder: input?.getAttribute('placeholder') ?? '',
				message: w.querySelector('.quick-input-message')?.textContent ?? '',
				focused: document.activeElement === input,
				rows: [...w.querySelectorAll('.quick-input-list .monaco-list-row')].map((r) => r.getAttribute('aria-label') ?? r.textContent ?? ''),
			};
		});
	}

	/**
	 * runCommand runs a command by its title as the Command Palette shows it ("pid: Ask"): F1,
	 * type the title, wait for the row whose label starts with it, Enter. It throws when the
	 * palette does not offer the command.
	 */
	async runCommand(title, { timeout = 30000 } = {}) {
		// The palette lists the commands known when it opens; an extension's commands are known
		// once the extension host has registered it. Until the palette offers the command, it
		// is closed and opened again (a wait on that condition, bounded by timeout).
		const deadline = Date.now() + timeout;
		for (let attempt = 1; ; attempt++) {
			await this._closeQuickInput();
			await this.page.keyboard.press('F1');
			await waitFor(async () => {
				const q = await this.quickInput();
				return q?.focused && q.value.startsWith('>');
			}, { timeout: Math.max(1000, deadline - Date.now()), what: 'the Command Palette to open', describe: () => this.describe() });
			await this.page.keyboard.type(title);
			const q = await waitFor(
				async () => {
					const q = await this.quickInput();
					return q && q.value === `>${title}` && q.rows.length > 0 && q;
				},
				{ timeout: Math.max(1000, deadline - Date.now()), what: `the Command Palette to list commands for "${title}"`, describe: async () => JSON.stringify(await this.quickInput()) },
			);
			// A row's label is the command's title, then ", " and what else the row shows
			// (its keybinding, "recently used", "similar commands").
			const first = q.rows[0].toLowerCase();
			if (first === title.toLowerCase() || first.startsWith(`${title.toLowerCase()},`)) {
				break;
			}
			if (Date.now() >= deadline) {
				throw new Error(`the Command Palette does not offer "${title}" (attempt ${attempt}; it lists ${JSON.stringify(q.rows.slice(0, 5))})`);
			}
			await new Promise((r) => setTimeout(r, 250));
		}
		await this.page.keyboard.press('Enter');
		await waitFor(async () => (await this.quickInput())?.value !== `>${title}`, { timeout: 10000, what: `"${title}" to run (the palette to close)` });
	}

	/**
	 * typeInQuickInput waits for a quick input (an input box or a quick pick) whose title
	 * contains `title` when given (else any, with an empty value), types text into it and
	 * presses Enter (unless enter is false). It returns the quick input's state before Enter.
	 */
	async typeInQuickInput(text, { title, enter = true, timeout = 20000 } = {}) {
		const q = await waitFor(
			async () => {
				const q = await this.quickInput();
				return q && q.focused && (title === undefined ? q.value === '' : q.title.includes(title)) && q;
			},
			{ timeout, what: `a quick input${title ? ` titled "${title}"` : ''}`, describe: async () => `${JSON.stringify(await this.quickInput())}\n${await this.describe()}` },
		);
		await this.page.keyboard.type(text);
		await waitFor(async () => (await this.quickInput())?.value === text, { timeout, what: `the quick input to hold "${text}"` });
		const before = await this.quickInput();
		if (enter) {
			await this.page.keyboard.press('Enter');
			await waitFor(async () => (await this.quickInput())?.value !== text, { timeout, what: 'the quick input to take the text' });
		}
		return before ?? q;
	}

	/** _closeQuickInput presses Escape while a quick input is shown. */
	async _closeQuickInput() {
		if (await this.quickInput()) {
			await this.page.keyboard.press('Escape');
			await waitFor(async () => !(await this.quickInput()), { timeout: 5000, what: 'the quick input to close' });
		}
	}

	/**
	 * outputPanel returns the output panel's state: {channel: the selected channel's name,
	 * text: the lines its editor shows, in order}, or undefined while it is not shown. Only the
	 * lines in view are in the DOM (the editor renders what is visible); scrolled-away lines are
	 * not in the text (readOutputLog has the whole channel).
	 */
	async outputPanel() {
		return this.page.evaluate(() => {
			const panel = document.querySelector('.part.panel');
			if (!panel || panel.getBoundingClientRect().height === 0) {
				return undefined;
			}
			const editor = panel.querySelector('.monaco-editor');
			if (!editor) {
				return undefined;
			}
			const lines = [...editor.querySelectorAll('.view-lines .view-line')]
				.map((el) => ({ top: parseFloat(el.style.top) || 0, text: el.textContent.replace(/\u00a0/g, ' ') }))
				.sort((a, b) => a.top - b.top)
				.map((l) => l.text);
			// The channel picker in the panel's title bar.
			const select = panel.querySelector('select.monaco-select-box, .monaco-select-box');
			let channel = '';
			if (select && select.tagName === 'SELECT') {
				channel = select.options[select.selectedIndex]?.text ?? '';
			} else if (select) {
				channel = select.textContent ?? select.getAttribute('title') ?? '';
			}
			return { channel, text: lines.join('\n') };
		});
	}

	/**
	 * readOutputChannel waits until the output panel shows the channel `name` (the extension
	 * shows it when a prompt starts) and returns the text it shows (see outputPanel). With
	 * `until` (a string or a predicate on the text) it waits until the text has it.
	 */
	async readOutputChannel(name, { until, timeout = 30000 } = {}) {
		const ok = (p) => {
			if (!p || p.channel.trim() !== name) {
				return false;
			}
			if (until === undefined) {
				return true;
			}
			return typeof until === 'function' ? until(p.text) : p.text.includes(until);
		};
		const p = await waitFor(async () => {
			this.tracker.track();
			const p = await this.outputPanel();
			return ok(p) && p;
		}, { timeout, what: `the output panel to show channel "${name}"${until !== undefined ? ` with ${typeof until === 'function' ? until.toString() : JSON.stringify(until)}` : ''}`, describe: async () => `-- output panel: ${JSON.stringify(await this.outputPanel())}\n-- log file: ${this.readOutputLog(name)}` });
		return p.text;
	}

	/**
	 * readOutputLog returns the whole text of the output channel `name` as VS Code logged it
	 * (extension output channels are backed by files in the window's log folder), or '' when
	 * the channel has no file yet. It does not wait; use it for text scrolled out of view.
	 */
	readOutputLog(name) {
		const logs = path.join(this.dirs.userData, 'logs');
		const found = [];
		const walk = (d) => {
			let entries = [];
			try {
				entries = fs.readdirSync(d, { withFileTypes: true });
			} catch {
				return;
			}
			for (const e of entries) {
				const p = path.join(d, e.name);
				if (e.isDirectory()) {
					walk(p);
				} else if (e.name.endsWith(`-${name}.log`) && p.includes('output_logging')) {
					found.push(p);
				}
			}
		};
		walk(logs);
		found.sort((a, b) => fs.statSync(a).mtimeMs - fs.statSync(b).mtimeMs);
		return found.length > 0 ? fs.readFileSync(found[found.length - 1], 'utf8') : '';
	}

	/**
	 * notifications returns the messages of the notification toasts shown now (from
	 * showInformationMessage, showWarningMessage, showErrorMessage without `modal`), oldest
	 * first.
	 */
	async notifications() {
		return this.page.evaluate(() =>
			[...document.querySelectorAll('.notifications-toasts .notification-toast .notification-list-item-message')].map((m) =>
				m.textContent.replace(/\u00a0/g, ' '),
			),
		);
	}

	/**
	 * waitForNotification waits until a toast's message contains `text` (a string) or matches it
	 * (a RegExp), and returns that message.
	 */
	async waitForNotification(text, { timeout = 20000 } = {}) {
		const hit = (m) => (text instanceof RegExp ? text.test(m) : m.includes(text));
		return waitFor(async () => (await this.notifications()).find(hit), {
			timeout,
			what: `a notification with ${text}`,
			describe: async () => `-- notifications: ${JSON.stringify(await this.notifications())}`,
		});
	}

	/**
	 * dialog returns the modal dialog shown now as {message, detail, buttons}, or undefined.
	 * detail keeps the dialog's line breaks; buttons are the labels in the order shown (pid's
	 * approval dialog is one: showWarningMessage with modal).
	 */
	async dialog() {
		return this.page.evaluate(() => {
			const d = document.querySelector('.monaco-dialog-box');
			if (!d) {
				return undefined;
			}
			return {
				message: d.querySelector('.dialog-message-text')?.innerText ?? '',
				detail: d.querySelector('.dialog-message-detail')?.innerText ?? '',
				buttons: [...d.querySelectorAll('.dialog-buttons .monaco-button')].map((b) => b.textContent ?? ''),
			};
		});
	}

	/**
	 * waitForDialog waits until a modal dialog whose message contains `message` (any dialog
	 * when omitted) is shown, and returns it (see dialog()).
	 */
	async waitForDialog(message, { timeout = 20000 } = {}) {
		return waitFor(
			async () => {
				const d = await this.dialog();
				return d && (message === undefined || d.message.includes(message)) && d;
			},
			{ timeout, what: `a dialog${message ? ` saying "${message}"` : ''}`, describe: () => this.describe() },
		);
	}

	/**
	 * clickDialogButton clicks the button labelled `label` of the modal dialog shown now (as a
	 * person would, with the mouse) and waits until the dialog is gone. It throws when there is
	 * no dialog or no such button.
	 */
	async clickDialogButton(label, { timeout = 10000 } = {}) {
		const buttons = await this.page.$$('.monaco-dialog-box .dialog-buttons .monaco-button');
		let target;
		for (const b of buttons) {
			if ((await b.evaluate((el) => el.textContent)) === label) {
				target = b;
			}
		}
		if (!target) {
			throw new Error(`the dialog has no button "${label}": ${JSON.stringify(await this.dialog())}`);
		}
		await target.click();
		await waitFor(async () => !(await this.dialog()), { timeout, what: `the dialog to close after "${label}"` });
	}

	// --- pid's chat view (a webview: an iframe in an iframe of the workbench) -----------------

	/**
	 * chatFrame waits until pid's chat view is loaded (its page got the chat: its body has a
	 * status) and returns the puppeteer Frame of its page. The view must be open (openChat).
	 */
	async chatFrame({ timeout = 30000 } = {}) {
		if (this._chatFrame && !this._chatFrame.detached) {
			try {
				if (await this._chatFrame.evaluate(() => Boolean(document.getElementById('pid-chat') && document.body.dataset.status))) {
					return this._chatFrame;
				}
			} catch {
				// Detached or reloaded: look again.
			}
		}
		this._chatFrame = await waitFor(
			async () => {
				for (const f of this.page.frames()) {
					try {
						if (await f.evaluate(() => Boolean(document.getElementById('pid-chat') && document.body.dataset.status))) {
							return f;
						}
					} catch {
						// A frame that went away, or one of another origin still loading.
					}
				}
				return undefined;
			},
			{ timeout, what: "pid's chat view to load", describe: () => this.describe() },
		);
		return this._chatFrame;
	}

	/** openChat runs "pid: Focus Chat" and returns the chat view's Frame once it is loaded. */
	async openChat() {
		await this.runCommand('pid: Focus Chat');
		return this.chatFrame();
	}

	/**
	 * chat returns what the chat view shows: {status (idle, working, approval, stopped...),
	 * sessionId, statusLine, text (the whole conversation's visible text), items: [{id, kind,
	 * classes, text, html (answers), toolName, status (tools), approval: {state, text,
	 * buttons, scope}}], queue: [texts], chips: [labels]}.
	 */
	async chat() {
		const f = await this.chatFrame();
		return f.evaluate(() => {
			const items = [...document.querySelectorAll('#log > .item')].map((n) => {
				const it = { id: n.id, kind: n.dataset.kind, classes: n.className, text: n.innerText };
				if (n.dataset.kind === 'user') {
					// The message as written: without its "Rewind to here" button, which it may have.
					const rewind = n.querySelector('button.rewind');
					it.rewind = Boolean(rewind);
					if (rewind) {
						it.text = it.text.replace(rewind.innerText, '').replace(/^\s*\n/, '');
					}
				}
				if (n.dataset.kind === 'assistant') {
					it.html = n.querySelector('.md')?.innerHTML ?? '';
					it.streaming = n.classList.contains('streaming');
				}
				if (n.dataset.kind === 'tool') {
					it.toolCallId = n.dataset.toolCallId;
					// The card's own parts (:scope >), not those of the steps folded under a task's card.
					it.toolName = n.querySelector(':scope > .tool-head .tool-name')?.textContent ?? '';
					it.title = n.querySelector(':scope > .tool-head .tool-title')?.textContent ?? '';
					it.status = (n.className.match(/status-(\w+)/) ?? [])[1];
					it.lastLine = n.querySelector(':scope > .tool-last')?.textContent;
					it.output = n.querySelector(':scope > details.output .output-text')?.textContent;
					const a = n.querySelector(':scope > .approval');
					if (a) {
						it.approval = {
							state: (a.className.match(/state-(\w+)/) ?? [])[1],
							text: a.innerText,
							buttons: [...a.querySelectorAll('.buttons button')].map((b) => b.textContent),
							scope: a.querySelector('.scope')?.textContent,
						};
					}
				}
				if (n.dataset.kind === 'notice') {
					it.buttons = [...n.querySelectorAll('button')].map((b) => b.textContent);
				}
				if (n.dataset.kind === 'changes') {
					it.files = [...n.querySelectorAll('.file')].map((r) => ({ name: r.querySelector('.file-name')?.textContent, text: r.innerText, buttons: [...r.querySelectorAll('button')].map((b) => b.textContent) }));
				}
				return it;
			});
			return {
				status: document.body.dataset.status,
				sessionId: document.body.dataset.sessionId || undefined,
				statusLine: document.getElementById('statusline')?.textContent ?? '',
				text: document.getElementById('log')?.innerText ?? '',
				items,
				queue: [...document.querySelectorAll('#queue > .item')].map((n) => n.innerText),
				chips: [...document.querySelectorAll('#chips .chip')].map((c) => c.firstChild?.textContent ?? c.textContent),
			};
		});
	}

	/**
	 * waitForChat waits until predicate(chat()) is truthy and returns that value; on timeout
	 * the error shows what the chat view showed last.
	 */
	async waitForChat(predicate, { timeout = 30000, what = 'the chat view to show something' } = {}) {
		let last;
		return waitFor(
			async () => {
				this.tracker.track();
				last = await this.chat();
				return predicate(last);
			},
			{ timeout, what, describe: async () => `-- the chat view shows: ${JSON.stringify(last, null, 1)?.slice(0, 6000)}` },
		);
	}

	/**
	 * clickInChat clicks (with the mouse, as a person would) the element of the chat view that
	 * matches selector and, when text is given, whose text is text. It throws when there is
	 * none.
	 */
	async clickInChat(selector, text) {
		const f = await this.chatFrame();
		const handles = await f.$$(selector);
		for (const h of handles) {
			if (text === undefined || (await h.evaluate((e) => e.textContent)) === text) {
				await h.click();
				return;
			}
		}
		throw new Error(`the chat view has no ${selector}${text !== undefined ? ` saying "${text}"` : ''}: ${JSON.stringify(await this.chat()).slice(0, 3000)}`);
	}

	/**
	 * sendInChat clicks into the chat view's prompt box, types text and presses Enter (with
	 * modifier held, e.g. 'Alt', when given), as a person would.
	 */
	async sendInChat(text, { modifier } = {}) {
		await this.clickInChat('#prompt');
		await this.page.keyboard.type(text);
		const f = await this.chatFrame();
		await waitFor(() => f.evaluate((t) => document.getElementById('prompt').value === t, text), { timeout: 10000, what: `the prompt box to hold "${text}"` });
		if (modifier) {
			await this.page.keyboard.down(modifier);
		}
		await this.page.keyboard.press('Enter');
		if (modifier) {
			await this.page.keyboard.up(modifier);
		}
		await waitFor(() => f.evaluate(() => document.getElementById('prompt').value === ''), { timeout: 10000, what: 'the prompt box to send' });
	}

	// --- editors -------------------------------------------------------------------------------

	/**
	 * openFile opens a workspace file in an editor through Quick Open (Ctrl+P, its name,
	 * Enter), as a person would, and waits until its tab is the active one with the focus in
	 * its text.
	 */
	async openFile(rel) {
		await this._closeQuickInput();
		await this.page.keyboard.down('Control');
		await this.page.keyboard.press('p');
		await this.page.keyboard.up('Control');
		await waitFor(async () => (await this.quickInput())?.focused, { timeout: 10000, what: 'Quick Open to open' });
		await this.page.keyboard.type(rel);
		await waitFor(async () => {
			const q = await this.quickInput();
			return q && q.value === rel && q.rows.some((r) => r.includes(path.basename(rel)));
		}, { timeout: 15000, what: `Quick Open to list ${rel}`, describe: async () => JSON.stringify(await this.quickInput()) });
		await this.page.keyboard.press('Enter');
		await waitFor(async () => {
			const e = await this.activeEditor();
			return e && e.title === path.basename(rel) && e.focused;
		}, { timeout: 15000, what: `an editor of ${rel} with the focus`, describe: async () => JSON.stringify(await this.activeEditor()) });
	}

	/**
	 * activeEditor returns the active text editor of the editor area: {title (its tab's),
	 * dirty, focused (the keyboard focus is in its text), text (the lines it shows)}, or
	 * undefined when there is none.
	 */
	async activeEditor() {
		return this.page.evaluate(() => {
			const tab = document.querySelector('.part.editor .tab.active');
			const group = document.querySelector('.part.editor .editor-group-container.active') ?? document.querySelector('.part.editor');
			const editor = group?.querySelector('.editor-instance .monaco-editor');
			if (!tab || !editor) {
				return undefined;
			}
			const lines = [...editor.querySelectorAll('.view-lines .view-line')]
				.map((el) => ({ top: parseFloat(el.style.top) || 0, text: el.textContent.replace(/\u00a0/g, ' ') }))
				.sort((a, b) => a.top - b.top)
				.map((l) => l.text);
			return {
				title: tab.getAttribute('data-resource-name') ?? tab.innerText.replace(/\s+/g, ''),
				dirty: tab.classList.contains('dirty'),
				focused: editor.contains(document.activeElement),
				text: lines.join('\n'),
			};
		});
	}

	/** waitForEditor waits until predicate(activeEditor()) is truthy and returns the editor's state. */
	async waitForEditor(predicate, { timeout = 20000, what = 'the editor to show something' } = {}) {
		let last;
		return waitFor(async () => {
			last = await this.activeEditor();
			return last && predicate(last) && last;
		}, { timeout, what, describe: async () => `-- the editor: ${JSON.stringify(last)}\n${await this.describe()}` });
	}

	/**
	 * screenshot saves what a person would see into .cache/e2e/screenshots/NAME.png and returns
	 * the path.
	 */
	async screenshot(name) {
		fs.mkdirSync(screenshotDir, { recursive: true });
		const p = path.join(screenshotDir, `${safeName(name)}.png`);
		await this.page.screenshot({ path: p });
		return p;
	}

	/**
	 * close ends everything this harness started: Chromium (closed through DevTools),
	 * code-server and what it started (the extension host, pid), with SIGTERM then SIGKILL for
	 * what is left; then removes the temp folder (kept when E2E_KEEP=1). It returns the
	 * Tracker's report: `leftover` lists processes that survived even SIGKILL (orphans), `all`
	 * every process seen. Safe to call twice.
	 */
	async close() {
		if (this._closed) {
			return this._report;
		}
		this._closed = true;
		this._report = this.report = await this.tracker.stop(async () => {
			if (this.browser) {
				let timer;
				await Promise.race([this.browser.close(), new Promise((r) => (timer = setTimeout(r, 5000)))]);
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

/**
 * withVSCode starts a VS Code (startVSCode(options)), runs fn(vs), and tears it down whatever
 * happens. When fn throws, it first saves a screenshot (NAME-failure.png) and adds the
 * workbench's text and code-server's output to the error. After teardown it throws if a
 * process it started survived (an orphan). It returns fn's result.
 */
export async function withVSCode(options, fn) {
	return withHarness(await startVSCode(options), fn, async (vs, failure) => {
		const shot = await vs.screenshot(`${options.name ?? 'vscode'}-failure`);
		failure.message += `\n-- screenshot: ${shot}\n${await vs.describe()}\n${vs.serverLog()}`;
	});
}
