// The VS Code harness: a real VS Code (code-server 4.139.1, VS Code 1.139.1) with pid's
// extension installed from a .vsix built from editor/vscode, in headless Chromium driven through
// puppeteer-core, against the real pid binary.
//
// One VS Code serves a whole run (VSCodeServer: one code-server, one Chromium, the extension
// installed once): starting them, building and installing the extension took 15 to 30 s of
// each test on a loaded 2-core machine. Each test gets a window of its own (startVSCode): a
// fresh browser context (no storage, cache or service worker of an earlier window) opening a
// fresh workspace folder, so a fresh extension host and pid, with the user settings rewritten
// and VS Code's per-folder and global storage on the server emptied first, and pid's XDG
// folders its own. Windows are opened one at a time (a lock on the server), so what the
// server runs beyond what it ran before the window opened is the window's: its teardown
// proves all of it ended. test/e2e/run.js starts the server and hands it to the test
// processes (PID_E2E_VSCODE); a test file run on its own starts one for its process.
//
// The object startVSCode returns types into the workbench as a person would (F1, the command
// palette, input boxes), reads what the workbench shows (the output panel, notifications, pid's
// chat view), saves screenshots and tears the window down. Every wait is on the DOM's state
// (waitFor), never a fixed sleep.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { after } from 'node:test';
import puppeteer from 'puppeteer-core';
import { pidBin, safeName, screenshotDir, tempDir, Tracker, waitFor, withHarness } from './util.js';
import { SHARED_VSCODE_ENV, VSCodeServer } from './vscode-server.js';

export { buildVsix, SHARED_VSCODE_ENV, VSCodeServer } from './vscode-server.js';

/** The user settings every window starts with: a quiet workbench, nothing from the network. */
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
	// Also keeps VS Code's agent host (and the copilot runtime it starts) from running.
	'chat.disableAIFeatures': true,
	'git.enabled': false,
	'npm.autoDetect': 'off',
	'window.restoreWindows': 'none',
	'workbench.secondarySideBar.defaultVisibility': 'hidden',
	// Unsaved changes stay unsaved until a person (or pid's edit) saves them.
	'files.autoSave': 'off',
};

// The server this process uses: run.js's (PID_E2E_VSCODE), else one started by the first test
// that needs it and ended after the file's last test (a test file run on its own).
let shared;
let ownServer;

/** sharedServer returns the VS Code server this process's windows open on (see above). */
export function sharedServer() {
	if (!shared) {
		if (process.env[SHARED_VSCODE_ENV]) {
			shared = Promise.resolve(VSCodeServer.attach(process.env[SHARED_VSCODE_ENV]));
		} else {
			shared = VSCodeServer.start({ name: 'vscode-server' }).then((s) => (ownServer = s));
			// A server that failed to start is tried again by the next test.
			shared.catch(() => (shared = undefined));
		}
	}
	return shared;
}

// A file run on its own: the server it started ends after its last test, and the file fails if
// a process of it survives.
after(async () => {
	if (ownServer) {
		const report = await ownServer.close();
		ownServer = undefined;
		shared = undefined;
		if (report.leftover.length > 0) {
			throw new Error(`processes of the VS Code server survived its teardown: ${report.leftover.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`);
		}
	}
});

// --- a window per test --------------------------------------------------------------------------

/**
 * startVSCode opens a VS Code window for one test on the shared server (sharedServer()): pid's
 * extension, a fresh workspace folder, and waits until the workbench is ready.
 *
 * options:
 *   name       label for the temp folder and the failure screenshot (default 'vscode')
 *   model      pid.model: the model for new sessions, e.g. a scripted model
 *              {provider: 'script', turns: [...]} (see docs/protocol.md); nothing from the network
 *   settings   more user settings (merged over the quiet defaults and pid.path/pid.model)
 *   files      {relativePath: content} written into the workspace folder before start
 *   env        more environment for pid (code-server and its extension host are shared)
 *   viewport   {width, height} of the page (default 1280x800)
 *   bundled    leave pid.path unset: the extension runs the pid its VSIX carries (which runs
 *              with code-server's environment and XDG folders, not this window's)
 *
 * pid runs as the extension starts it, through `pid.path`: a script of this window's that sets
 * XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_DATA_HOME and XDG_CACHE_HOME to folders of this window
 * (and `env`) and then execs $PID_BIN (so the process is pid itself, with pid's command line),
 * so no user setting, remembered answer, trust or saved session leaks in or out.
 *
 * It throws, after tearing down what it started, when something cannot start; the message says
 * what to install or what the workbench showed.
 */
export async function startVSCode(options = {}) {
	const name = safeName(options.name ?? 'vscode');
	const pid = pidBin();
	const server = await sharedServer();
	const broken = server.problem();
	if (broken) {
		throw new Error(broken);
	}
	const t0 = Date.now();
	await server.acquire();
	try {
		const t1 = Date.now();
		const h = await openWindow(server, name, pid, options);
		/** How long the window waited for the server's lock, and took to open. */
		h.timing = { waitedMs: t1 - t0, openMs: Date.now() - t1 };
		return h;
	} catch (err) {
		server.release();
		throw err;
	}
}

/** openWindow does startVSCode's work once the window lock is held. */
async function openWindow(server, name, pid, options) {
	const tmp = tempDir(name);
	const dirs = {
		tmp,
		workspace: path.join(tmp, 'workspace'),
		xdg: path.join(tmp, 'xdg'),
		bin: path.join(tmp, 'bin'),
		// The server's: shared by the run's windows (readOutputLog reads this window's files only).
		userData: server.dirs.userData,
		extensions: server.dirs.extensions,
		chromiumProfile: server.dirs.chromiumProfile,
		logs: server.dirs.logs,
	};
	for (const d of [dirs.workspace, dirs.xdg, dirs.bin]) {
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
	const pidPath = path.join(dirs.bin, 'pid');
	const exports = Object.entries({ ...xdg, ...(options.env ?? {}) }).map(([k, v]) => `export ${k}=${shq(v)}\n`).join('');
	fs.writeFileSync(pidPath, `#!/bin/sh\n# pid for the e2e window "${name}": its own XDG folders (test/e2e/lib/vscode.js).\n${exports}exec ${shq(pid)} "$@"\n`, { mode: 0o755 });

	const settings = { ...quietSettings, ...(options.bundled ? {} : { 'pid.path': pidPath }), ...(options.model ? { 'pid.model': options.model } : {}), ...(options.settings ?? {}) };
	server.resetUserData(settings);

	const tracker = new Tracker({ exclude: server.baseline() });
	tracker.tmpDir = tmp;
	tracker.addRoot(server.server.pid);
	const h = new VSCodeHarness({ server, dirs, tracker, settings, xdg });
	try {
		await h._openWindow(options.viewport ?? { width: 1280, height: 800 });
	} catch (err) {
		err.message += `\n${server.serverLog()}`;
		// close() gives the lock back; the caller's release() then finds it given.
		const report = await h.close().catch(() => undefined);
		if (report?.leftover.length > 0) {
			err.message += `\nprocesses survived the teardown: ${report.leftover.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`;
		}
		throw err;
	}
	return h;
}

/**
 * pidIcon (run in the workbench's page) reports whether pid's view container is in the
 * activity bar, and clicks it when click is true.
 */
function pidIcon(click = false) {
	const icon = [...document.querySelectorAll('.part.activitybar .action-item .action-label')].find((a) => a.getAttribute('aria-label')?.startsWith('pid'));
	if (icon && click) {
		icon.click();
	}
	return Boolean(icon);
}

/** shq quotes s for sh. */
function shq(s) {
	return `'${String(s).replace(/'/g, `'\\''`)}'`;
}

/** outputLogs returns the paths of VS Code's output channel log files under userData/logs. */
function outputLogs(userData) {
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
			} else if (p.includes('output_logging') && e.name.endsWith('.log')) {
				found.push(p);
			}
		}
	};
	walk(path.join(userData, 'logs'));
	return found;
}

/** A VS Code window: see startVSCode. Its methods are called one at a time by one test. */
export class VSCodeHarness {
	constructor({ server, dirs, tracker, settings, xdg }) {
		/** The shared VS Code server the window is open on. */
		this.server = server;
		/**
		 * The folders: tmp (this window's), workspace, xdg (pid's), bin (the pid script); and the
		 * server's userData, extensions, chromiumProfile, logs.
		 */
		this.dirs = dirs;
		/** The XDG_* folders pid runs with. */
		this.xdg = xdg;
		/** The user settings written at start. */
		this.settings = settings;
		this.tracker = tracker;
		/** The puppeteer Page of the workbench (for what the helpers do not cover). */
		this.page = undefined;
		/** The puppeteer Browser (the shared Chromium) and this window's BrowserContext. */
		this.browser = undefined;
		this.context = undefined;
		/** The workbench's URL. */
		this.url = undefined;
		this._closed = false;
	}

	async _openWindow(viewport) {
		this.browser = await puppeteer.connect({ browserWSEndpoint: this.server.wsEndpoint, defaultViewport: viewport, protocolTimeout: 60000 });
		this.context = await this.browser.createBrowserContext();
		this.page = await this.context.newPage();
		await this.page.bringToFront();
		// Over loopback, compression only costs CPU: code-server would brotli-compress the 19 MB
		// workbench.js and the rest again for each window (a fresh context has no cache), about
		// 1 CPU-second of code-server's per window.
		await this.page.setExtraHTTPHeaders({ 'Accept-Encoding': 'identity' });
		// The output logs of earlier windows are not this window's.
		this._oldLogs = new Set(outputLogs(this.dirs.userData));
		this.url = `${this.server.url}/?folder=${encodeURIComponent(this.dirs.workspace)}`;
		await this.page.goto(this.url, { waitUntil: 'domcontentloaded', timeout: 60000 });
		await this.waitForReady();
	}

	/**
	 * waitForReady waits until the workbench is ready for keys: its parts are laid out, the
	 * status bar is shown, the explorer is there and pid's view container is in the activity
	 * bar (the workbench knows pid's extension, so the palette lists its commands).
	 */
	async waitForReady(timeout = 60000) {
		await waitFor(
			async () =>
				(await this.page.evaluate(() => {
					const wb = document.querySelector('.monaco-workbench');
					const status = document.querySelector('.part.statusbar');
					const explorer = document.querySelector('.explorer-folders-view, .explorer-viewlet');
					return Boolean(wb && status && status.getBoundingClientRect().height > 0 && explorer);
				})) && this.page.evaluate(pidIcon),
			{ timeout, what: 'the VS Code workbench to be ready', describe: () => this.describe() },
		);
	}

	/**
	 * reloadWindow reloads the window as a person does (Developer: Reload Window), waits for the
	 * new workbench (a minute: page.reload's 30 s ran out once on a loaded machine) and returns
	 * whether it came back with pid's chat view in the sidebar, as VS Code restores it. When it
	 * did not (VS Code keeps which view the sidebar shows in the browser's storage, written as
	 * the page goes), pid's view is opened from the activity bar, as a person would, and the
	 * test's output says so: what follows (the page ready, its chat) is pid's either way.
	 */
	async reloadWindow() {
		await Promise.all([this.page.waitForNavigation({ waitUntil: 'domcontentloaded', timeout: 60000 }), this.runCommand('Developer: Reload Window')]);
		this._chatFrame = undefined;
		const sidebar = () => this.page.evaluate(() => document.querySelector('.part.sidebar .composite.title')?.textContent ?? '');
		await waitFor(
			async () => (await this.page.evaluate(() => document.querySelector('.monaco-workbench .part.statusbar')?.getBoundingClientRect().height > 0)) && this.page.evaluate(pidIcon),
			{ timeout: 60000, what: 'the reloaded workbench', describe: () => this.describe() },
		);
		const restored = await waitFor(async () => /pid/i.test(await sidebar()), { timeout: 15000 }).then(() => true, () => false);
		if (!restored) {
			console.log(`# the reloaded window's sidebar showed ${JSON.stringify(await sidebar().catch(() => '?'))}, not pid's chat: opened from the activity bar`);
			await this.page.evaluate(pidIcon, true);
			await waitFor(async () => /pid/i.test(await sidebar()), { timeout: 15000, what: "pid's view in the sidebar after a click on its icon", describe: () => this.describe() });
		}
		return restored;
	}

	/** serverLog returns the end of code-server's output (for failure messages). */
	serverLog() {
		return this.server.serverLog();
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
		// The palette lists the commands known when it opens. waitForReady waited until the
		// workbench knew pid's extension; should the palette still not offer the command, it is
		// closed and opened again until it does (each step a wait on the DOM, bounded by timeout).
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
		// The server's log folder holds every window's: this window's files are those that were
		// not there when it opened (a reload of the window makes new ones too).
		const found = outputLogs(this.dirs.userData).filter((p) => p.endsWith(`-${name}.log`) && !this._oldLogs?.has(p));
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
	 * close ends what this window started and gives the shared server back: the window's
	 * browser context is closed (as a person closes the tab), its extension hosts get SIGTERM
	 * (what code-server does once a closed window's reconnection grace time ends; pid then
	 * sees its stdin close), then SIGTERM and SIGKILL for whatever of the window's processes is
	 * left; then its temp folder is removed (kept when E2E_KEEP=1). It returns the Tracker's
	 * report: `leftover` lists processes that survived even SIGKILL (orphans), `all` every
	 * process seen, `problem` says so when the shared server itself is gone. Safe to call twice.
	 */
	async close() {
		if (this._closed) {
			return this._report;
		}
		this._closed = true;
		const t0 = Date.now();
		const report = await this.tracker.stop(async () => {
			if (this.context) {
				let timer;
				await Promise.race([this.context.close().catch(() => {}), new Promise((r) => (timer = setTimeout(r, 10000)))]);
				clearTimeout(timer);
			}
			for (const p of this.tracker.track()) {
				if (p.cmd.includes('--type=extensionHost')) {
					try {
						process.kill(p.pid, 'SIGTERM');
					} catch {
						// Already gone.
					}
				}
			}
		});
		await this.browser?.disconnect().catch(() => {});
		const problem = this.server.problem();
		this._report = this.report = problem ? { ...report, problem } : report;
		this.server.release();
		if (process.env.E2E_KEEP !== '1') {
			fs.rmSync(this.dirs.tmp, { recursive: true, force: true });
		}
		if (this.timing) {
			this.timing.closeMs = Date.now() - t0;
			if (process.env.E2E_TIMING === '1') {
				const s = (ms) => (ms / 1000).toFixed(1);
				console.log(`# window ${path.basename(this.dirs.tmp)}: waited ${s(this.timing.waitedMs)} s for the server, opened in ${s(this.timing.openMs)} s, closed in ${s(this.timing.closeMs)} s`);
			}
		}
		return this._report;
	}
}

/**
 * withVSCode opens a VS Code window (startVSCode(options)), runs fn(vs), and tears it down
 * whatever happens. When fn throws, it first saves a screenshot (NAME-failure.png) and adds the
 * workbench's text, the last lines of pid's output channel and code-server's output to the
 * error. After teardown it throws if a
 * process the window started survived (an orphan). It returns fn's result.
 */
export async function withVSCode(options, fn) {
	return withHarness(await startVSCode(options), fn, async (vs, failure) => {
		const shot = await vs.screenshot(`${options.name ?? 'vscode'}-failure`);
		// pid's output channel says what the extension did and what failed (a daemon that did
		// not start, a request refused), which the workbench's text often does not.
		const log = vs.readOutputLog('pid').trimEnd().split('\n').slice(-40).join('\n');
		failure.message += `\n-- screenshot: ${shot}\n${await vs.describe()}\n-- pid's output channel, its last lines:\n${log}\n${vs.serverLog()}`;
	});
}
