// The end-to-end run (`make e2e`): one VS Code for every VS Code test, and the two editors'
// tests side by side.
//
//   node run.js [FILE.test.js ...]      (default: every *.test.js here)
//
// Two lanes run at once, each running its files one after the other, each file a
// `node --test FILE` of its own:
//   - vscode: the vscode*.test.js files, on one VS Code (VSCodeServer: one code-server, one
//     Chromium, pid's extension built and installed once) that this process starts and hands
//     to them through PID_E2E_VSCODE; each test opens a window of its own on it (see
//     lib/vscode.js). Starting a code-server, a Chromium and an extension build per test was
//     most of what the VS Code tests cost.
//   - nvim: every other file (Neovim in tmux: a tmux server per test), started at once, while
//     the VS Code server is still starting.
// Each lane's output is printed as it comes, each line marked with its lane. After both, the
// VS Code server is ended; the run fails if a file failed or a process of the server survived
// its teardown. Each file's time and each lane's are printed at the end: the figures that
// E2E_TIMEOUT is sized from (README.md, "The time budget").

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHARED_VSCODE_ENV, VSCodeServer } from './lib/vscode-server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const started = Date.now();
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

const files = process.argv.slice(2).map((f) => path.basename(f));
const all = files.length > 0 ? files : fs.readdirSync(here).filter((f) => f.endsWith('.test.js')).sort();
const lanes = [
	{ name: 'vscode', files: all.filter((f) => f.startsWith('vscode')) },
	{ name: 'nvim', files: all.filter((f) => !f.startsWith('vscode')) },
].filter((l) => l.files.length > 0);
const width = Math.max(...lanes.map((l) => l.name.length));

/** printer prints text's lines as they come, each marked with the lane's name. */
function printer(name) {
	let rest = '';
	const mark = `${name.padEnd(width)} │ `;
	return {
		write(chunk) {
			rest += chunk;
			const lines = rest.split('\n');
			rest = lines.pop();
			if (lines.length > 0) {
				process.stdout.write(lines.map((l) => mark + l).join('\n') + '\n');
			}
		},
		flush() {
			if (rest !== '') {
				process.stdout.write(mark + rest + '\n');
				rest = '';
			}
		},
	};
}

const children = new Set();

/**
 * failingPart returns what node's spec reporter printed of a file's failures: from its
 * "failing tests" summary to the end (or the output's last lines when there is none), at most
 * 120 lines.
 */
function failingPart(text) {
	const at = text.lastIndexOf('✖ failing tests:');
	const lines = (at >= 0 ? text.slice(at) : text).trimEnd().split('\n');
	if (lines.length <= 120) {
		return lines.join('\n');
	}
	return at >= 0 ? [...lines.slice(0, 119), `… (${lines.length - 119} lines more, in the lane's output)`].join('\n') : ['… (the lines before, in the lane\'s output)', ...lines.slice(-119)].join('\n');
}

/**
 * briefly returns the gist of failingPart's text for the very end of a long run: each failed
 * test's name and the first lines of its error, without stack frames.
 */
function briefly(text) {
	const lines = text.split('\n');
	const out = [];
	for (let i = 0; i < lines.length; i++) {
		if (!/^✖ (?!failing tests:)/.test(lines[i])) {
			continue;
		}
		out.push(lines[i]);
		let kept = 0;
		for (let j = i + 1; j < lines.length && kept < 8 && !/^(✖|test at )/.test(lines[j]); j++) {
			if (lines[j].trim() !== '' && !/^\s+at /.test(lines[j])) {
				out.push(lines[j].length > 300 ? `${lines[j].slice(0, 300)}…` : lines[j]);
				kept++;
			}
		}
	}
	return out.length > 0 ? out.join('\n') : lines.slice(-8).join('\n');
}

/** runFile runs `node --test FILE` and resolves with {file, code, ms, output}. */
function runFile(file, env, out) {
	const start = Date.now();
	let output = '';
	return new Promise((resolve) => {
		const child = spawn(process.execPath, ['--test', '--test-reporter=spec', '--test-force-exit', file], {
			cwd: here,
			env,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		children.add(child);
		const take = (d) => {
			out.write(d);
			output += d;
		};
		child.stdout.on('data', take);
		child.stderr.on('data', take);
		child.on('error', (err) => out.write(`${file}: could not start node: ${err.message}\n`));
		child.on('close', (code, signal) => {
			children.delete(child);
			out.flush();
			resolve({ file, code: code ?? (signal ? 128 : 1), ms: Date.now() - start, output });
		});
	});
}

/** runLane runs the lane's files one after the other; it resolves with their results. */
async function runLane(lane, env) {
	const out = printer(lane.name);
	lane.start = Date.now();
	lane.results = [];
	for (const file of lane.files) {
		lane.results.push(await runFile(file, env, out));
	}
	lane.ms = Date.now() - lane.start;
	return lane.results;
}

// A run ended from outside (timeout, Ctrl-C): util.js's signal hooks end this process (and the
// VS Code server, which its Tracker knows); on the way out the running files get SIGTERM, and
// their test processes' own hooks kill what those track. (timeout(1) signals the whole process
// group too.)
process.on('exit', () => {
	for (const c of children) {
		c.kill('SIGTERM');
	}
});

let server;
let serverProblem;
const runs = lanes.map(async (lane) => {
	if (lane.name !== 'vscode') {
		return runLane(lane, process.env);
	}
	try {
		server = await VSCodeServer.start({ name: 'vscode-server' });
	} catch (err) {
		serverProblem = `the VS Code server did not start: ${err.message}`;
		console.log(`vscode │ ${serverProblem}`);
		lane.ms = 0;
		lane.results = lane.files.map((file) => ({ file, code: 1, ms: 0 }));
		return lane.results;
	}
	lane.serverMs = Date.now() - started;
	console.log(`e2e: VS Code (code-server ${server.url}, Chromium, pid's extension) ready in ${secs(lane.serverMs)}`);
	return runLane(lane, { ...process.env, [SHARED_VSCODE_ENV]: server.toEnv() });
});
await Promise.all(runs);

let leftover = [];
if (server) {
	const report = await server.close();
	leftover = report.leftover;
	if (leftover.length > 0) {
		console.log(`e2e: processes of the VS Code server survived its teardown: ${leftover.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`);
	}
}
const failing = lanes.flatMap((l) => l.results.filter((r) => r.code !== 0));
const failed = failing.map((r) => r.file);
// What failed, again after everything else: a run's output is long, and CI shows its end.
// E2E_FAILURES names a file that gets the gist of it (make test prints that at its very end).
// (A file that never ran, the VS Code server having failed to start, has no output.)
if (failing.length > 0) {
	const said = (r, text) => `--- ${r.file} (exit ${r.code}, ${secs(r.ms)}):\n${text}`;
	console.log(`e2e: what failed:\n${failing.map((r) => said(r, failingPart(r.output ?? serverProblem ?? ''))).join('\n')}`);
	if (process.env.E2E_FAILURES) {
		fs.writeFileSync(process.env.E2E_FAILURES, `${failing.map((r) => said(r, briefly(failingPart(r.output ?? serverProblem ?? '')))).join('\n')}\n`);
	}
}
for (const l of lanes) {
	console.log(`e2e: ${l.name}: ${l.results.map((r) => `${r.file} ${secs(r.ms)}${r.code !== 0 ? ' FAILED' : ''}`).join(', ')}`);
}
console.log(
	`e2e: ${lanes.map((l) => `${l.name} lane ${secs(l.ms ?? 0)}${l.serverMs !== undefined ? ` after ${secs(l.serverMs)} to start VS Code` : ''}`).join('; ')}; ${secs(Date.now() - started)} in all; ${failed.length > 0 ? `FAILED: ${failed.join(', ')}` : leftover.length > 0 || serverProblem ? 'FAILED' : 'passed'}`,
);
process.exit(failed.length === 0 && leftover.length === 0 && !serverProblem ? 0 : 1);
