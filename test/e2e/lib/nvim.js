// The Neovim harness: a real Neovim (Debian's 0.7.2) with pid's plugin (editor/nvim), running in
// a tmux pane of its own tmux server, against the real pid binary. startNvim() starts it; the
// object it returns types keys as a person would (tmux send-keys), reads the screen (tmux
// capture-pane), waits for the screen to show something, saves screens under .cache/e2e/screens/
// and tears it all down.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { pidBin, repoRoot, safeName, screenDir, tempDir, Tracker, waitFor, withHarness } from './util.js';

const execFileP = promisify(execFile);
const pluginDir = path.join(repoRoot, 'editor', 'nvim');

// The init file: the plugin from the repository, pid's options from a JSON file the harness
// writes (setup's cmd, env and session), nothing of the user's configuration.
const initLua = `-- Written by pid's e2e harness (test/e2e/lib/nvim.js).
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. 'I'
vim.o.more = false
vim.opt.rtp:prepend(vim.env.PID_E2E_PLUGIN)
local f = assert(io.open(vim.env.PID_E2E_SETUP, 'r'))
local opts = vim.json.decode(f:read('*a'))
f:close()
require('pid').setup(opts)
if vim.env.PID_E2E_INIT_EXTRA and vim.env.PID_E2E_INIT_EXTRA ~= '' then
  vim.cmd('luafile ' .. vim.fn.fnameescape(vim.env.PID_E2E_INIT_EXTRA))
end
`;

/**
 * startNvim starts Neovim with pid's plugin in a detached tmux session of its own tmux server
 * (its own socket: the user's tmux is never touched), and waits until Neovim shows its screen.
 *
 * options:
 *   name     label for the temp folder and the screens (default 'nvim')
 *   session  the plugin's `session` option (session/new params), e.g. {model: {provider:
 *            'script', turns: [...]}}: a scripted model, nothing from the network
 *   setup    more options for require('pid').setup (over cmd and session; its env is merged
 *            into pid's XDG folders)
 *   initLua  Lua run after setup (e.g. to replace vim.ui.select)
 *   files    {relativePath: content} written into the workspace folder (Neovim's cwd)
 *   file     the file Neovim opens (relative to the workspace), default none
 *   width, height   the pane's size (default 200x50)
 *
 * Neovim and pid get XDG folders of their own in the temp folder (pid through setup{env}), so
 * no user setting, remembered answer or saved session leaks in or out.
 */
export async function startNvim(options = {}) {
	const name = safeName(options.name ?? 'nvim');
	const pid = pidBin();
	for (const tool of ['tmux', 'nvim']) {
		try {
			await execFileP(tool, tool === 'tmux' ? ['-V'] : ['--version']);
		} catch {
			throw new Error(`${tool} is not installed: run scripts/e2e/install.sh (or make e2e)`);
		}
	}
	const tmp = tempDir(name);
	const dirs = { tmp, workspace: path.join(tmp, 'workspace'), nvimXdg: path.join(tmp, 'nvim'), pidXdg: path.join(tmp, 'pid') };
	for (const d of Object.values(dirs)) {
		fs.mkdirSync(d, { recursive: true });
	}
	for (const [rel, content] of Object.entries(options.files ?? {})) {
		const p = path.join(dirs.workspace, rel);
		fs.mkdirSync(path.dirname(p), { recursive: true });
		fs.writeFileSync(p, content);
	}
	const pidEnv = { XDG_CONFIG_HOME: path.join(dirs.pidXdg, 'config'), XDG_STATE_HOME: path.join(dirs.pidXdg, 'state') };
	for (const d of Object.values(pidEnv)) {
		fs.mkdirSync(d, { recursive: true });
	}
	const setup = { cmd: [pid], session: options.session ?? {}, ...(options.setup ?? {}), env: { ...pidEnv, ...(options.setup?.env ?? {}) } };
	fs.writeFileSync(path.join(tmp, 'setup.json'), JSON.stringify(setup));
	fs.writeFileSync(path.join(tmp, 'init.lua'), initLua);
	let extra = '';
	if (options.initLua) {
		extra = path.join(tmp, 'extra.lua');
		fs.writeFileSync(extra, options.initLua);
	}
	const nvimXdg = {};
	for (const k of ['CONFIG', 'DATA', 'STATE', 'CACHE']) {
		nvimXdg[`XDG_${k}_HOME`] = path.join(dirs.nvimXdg, k.toLowerCase());
		fs.mkdirSync(nvimXdg[`XDG_${k}_HOME`], { recursive: true });
	}
	// tmux's settings: no status line (Neovim gets every row), Escape passed on at once, and a
	// pane that stays after Neovim exits so that its last screen can still be read.
	const tmuxConf = path.join(tmp, 'tmux.conf');
	fs.writeFileSync(tmuxConf, 'set -g status off\nset -sg escape-time 0\nset -g remain-on-exit on\nset -g history-limit 5000\n');

	const h = new NvimHarness({ dirs, name, socket: path.join(tmp, 'tmux.sock'), tmuxConf });
	// The tmux server copies the environment of the client that starts it into the pane.
	const env = {
		...process.env,
		...nvimXdg,
		TERM: 'xterm-256color',
		PID_E2E_PLUGIN: pluginDir,
		PID_E2E_SETUP: path.join(tmp, 'setup.json'),
		PID_E2E_INIT_EXTRA: extra,
	};
	delete env.TMUX;
	const width = options.width ?? 200;
	const height = options.height ?? 50;
	const nvimCmd = ['nvim', '-u', shq(path.join(tmp, 'init.lua')), '-i', 'NONE', '-n', ...(options.file ? [shq(options.file)] : [])].join(' ');
	try {
		await h._tmux(['new-session', '-d', '-s', 'e2e', '-x', String(width), '-y', String(height), '-c', dirs.workspace, `exec ${nvimCmd}`], env);
		const serverPid = Number((await h._tmux(['display-message', '-p', '-t', 'e2e', '#{pid}'])).trim());
		h.tracker.addRoot(serverPid);
		h.panePid = Number((await h._tmux(['display-message', '-p', '-t', 'e2e', '#{pane_pid}'])).trim());
		// Neovim is up once it has drawn its screen (the pane starts blank; an empty buffer shows
		// "~" lines, a file its text). An error in the init shows instead: fail with it.
		const first = await h.waitFor((s) => s.trim() !== '', { what: 'Neovim to draw its screen' });
		if (/Error detected while processing|E\d+: /.test(first)) {
			throw new Error(`Neovim reported an error at start:\n${first}`);
		}
	} catch (err) {
		await h.close().catch(() => {});
		throw err;
	}
	return h;
}

/** shq quotes s for the shell tmux runs the command with. */
function shq(s) {
	return `'${String(s).replace(/'/g, `'\\''`)}'`;
}

/** A running Neovim in tmux: see startNvim. Its methods are called one at a time by one test. */
export class NvimHarness {
	constructor({ dirs, name, socket, tmuxConf }) {
		/** The temp folders: tmp, workspace (Neovim's cwd), nvimXdg, pidXdg. */
		this.dirs = dirs;
		this.name = name;
		this.socket = socket;
		this.tmuxConf = tmuxConf;
		this.tracker = new Tracker();
		this.tracker.tmpDir = dirs.tmp;
		this.panePid = undefined;
		this._closed = false;
	}

	async _tmux(args, env) {
		const { stdout } = await execFileP('tmux', ['-S', this.socket, '-f', this.tmuxConf, ...args], { env: env ?? process.env, timeout: 10000 });
		return stdout;
	}

	/**
	 * sendKeys types keys into Neovim as a person would. Each argument is one tmux key: text
	 * is typed literally ({literal: true}, the default for strings without a tmux key name),
	 * key names such as 'Enter', 'Escape', 'C-c', 'Up' are pressed. Example:
	 *   await nv.sendKeys(':PidAsk hello', 'Enter')
	 * Keys are queued in the pane's input in order; sendKeys returns once tmux took them, not
	 * once Neovim acted on them: wait for the screen (waitFor) before reading it.
	 */
	async sendKeys(...keys) {
		const named = /^(Enter|Escape|Tab|BTab|BSpace|Space|Up|Down|Left|Right|Home|End|PageUp|PageDown|PPage|NPage|F\d{1,2}|[CMS]-.+)$/;
		for (const k of keys) {
			if (named.test(k)) {
				await this._tmux(['send-keys', '-t', 'e2e', k]);
			} else {
				await this._tmux(['send-keys', '-t', 'e2e', '-l', k]);
			}
		}
	}

	/**
	 * capture returns the pane's screen now, as text (tmux capture-pane -p: one line per row,
	 * trailing blanks cut). With a name it also saves it as .cache/e2e/screens/NAME.txt.
	 */
	async capture(name) {
		this.tracker.track();
		const out = (await this._tmux(['capture-pane', '-p', '-t', 'e2e'])).replace(/\s+$/, '');
		if (name !== undefined) {
			await this.saveScreen(name, out);
		}
		return out;
	}

	/**
	 * saveScreen writes the screen now (or `screen`, when given) to
	 * .cache/e2e/screens/NAME.txt and returns the path.
	 */
	async saveScreen(name, screen) {
		fs.mkdirSync(screenDir, { recursive: true });
		const p = path.join(screenDir, `${safeName(name)}.txt`);
		fs.writeFileSync(p, `${screen ?? (await this.capture())}\n`);
		return p;
	}

	/**
	 * waitFor polls the screen until predicate(screen) is truthy and returns the screen. It is
	 * a wait on what the screen shows, bounded by `timeout` (ms), not an assumption about when
	 * Neovim gets there; on timeout it throws with the last screen. A string predicate means
	 * "the screen contains it".
	 */
	async waitFor(predicate, { timeout = 15000, what } = {}) {
		const test = typeof predicate === 'string' ? (s) => s.includes(predicate) : predicate;
		let last = '';
		return waitFor(
			async () => {
				last = await this.capture();
				return test(last) && last;
			},
			{ timeout, interval: 50, what: what ?? (typeof predicate === 'string' ? JSON.stringify(predicate) : 'the screen'), describe: () => `-- the screen:\n${last}` },
		);
	}

	/** processes returns the live processes this harness started (tmux's server, Neovim, pid). */
	processes() {
		return this.tracker.track();
	}

	/**
	 * close ends the tmux server (Neovim gets SIGHUP and exits; pid exits when its stdin
	 * closes), then SIGTERM and SIGKILL for anything left, and removes the temp folder (kept
	 * when E2E_KEEP=1). It returns the Tracker's report (`leftover` must be empty). Safe to
	 * call twice.
	 */
	async close() {
		if (this._closed) {
			return this._report;
		}
		this._closed = true;
		this._report = this.report = await this.tracker.stop(async () => {
			await this._tmux(['kill-server']).catch(() => {});
		});
		if (process.env.E2E_KEEP !== '1') {
			fs.rmSync(this.dirs.tmp, { recursive: true, force: true });
		}
		return this._report;
	}
}

/**
 * withNvim starts a Neovim (startNvim(options)), runs fn(nv), and tears it down whatever
 * happens. When fn throws, it first saves the screen (NAME-failure.txt) and adds it to the
 * error. After teardown it throws if a process it started survived (an orphan). It returns
 * fn's result.
 */
export async function withNvim(options, fn) {
	return withHarness(await startNvim(options), fn, async (nv, failure) => {
		const screen = await nv.capture();
		const p = await nv.saveScreen(`${options.name ?? 'nvim'}-failure`, screen);
		// A failed waitFor already shows the screen; other failures get it here.
		failure.message += failure.message.includes('-- the screen:') ? `\n-- screen saved: ${p}` : `\n-- the screen (saved: ${p}):\n${screen}`;
	});
}

/**
 * panes splits a screen of two side-by-side windows (the code on the left, pid's chat on the
 * right, as :PidAsk opens it) at their vertical separator: the column where most rows have
 * "│". It returns {left, right}: the rows of each side, trailing blanks cut. Without a
 * separator, left is every row and right is empty.
 */
export function panes(screen) {
	const rows = screen.split('\n');
	const counts = new Map();
	for (const r of rows) {
		const chars = [...r];
		chars.forEach((ch, i) => {
			if (ch === '│') {
				counts.set(i, (counts.get(i) ?? 0) + 1);
			}
		});
	}
	let col = -1;
	let best = 0;
	for (const [i, n] of counts) {
		if (n > best) {
			best = n;
			col = i;
		}
	}
	if (col < 0 || best < rows.length / 2) {
		return { left: rows.map((r) => r.trimEnd()), right: [] };
	}
	const left = [];
	const right = [];
	for (const r of rows) {
		const chars = [...r];
		left.push(chars.slice(0, col).join('').trimEnd());
		right.push(chars.slice(col + 1).join('').trimEnd());
	}
	return { left, right };
}
