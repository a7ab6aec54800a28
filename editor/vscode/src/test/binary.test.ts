// Which pid the extension runs (binary.ts): pid.path when set, else the binary a platform VSIX
// carries under bin/ (only when it can be run), else pid on PATH; and `pid --version` of the real
// binary.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { bundledPath, pidVersion, resolvePid, sourceWords } from '../binary';
import { PID_BIN } from './harness';

function extensionDir(): string {
	return fs.mkdtempSync(path.join(os.tmpdir(), 'pid-ext-'));
}

test('pid.path wins over a bundled binary; empty or blank pid.path does not count as set', () => {
	const ext = extensionDir();
	fs.mkdirSync(path.join(ext, 'bin'));
	fs.copyFileSync(PID_BIN, path.join(ext, 'bin', 'pid'));
	fs.chmodSync(path.join(ext, 'bin', 'pid'), 0o755);
	assert.deepEqual(resolvePid('/opt/pid/bin/pid', ext, 'linux'), { command: '/opt/pid/bin/pid', source: 'setting' });
	assert.deepEqual(resolvePid('', ext, 'linux'), { command: path.join(ext, 'bin', 'pid'), source: 'bundled' });
	assert.deepEqual(resolvePid('  ', ext, 'linux'), { command: path.join(ext, 'bin', 'pid'), source: 'bundled' });
	assert.deepEqual(resolvePid(undefined, ext, 'linux'), { command: path.join(ext, 'bin', 'pid'), source: 'bundled' });
	fs.rmSync(ext, { recursive: true });
});

test('without a bundled binary, or with one that cannot be run, pid comes from PATH', () => {
	const ext = extensionDir();
	assert.deepEqual(resolvePid('', ext, 'linux'), { command: 'pid', source: 'path' });
	fs.mkdirSync(path.join(ext, 'bin'));
	fs.writeFileSync(path.join(ext, 'bin', 'pid'), 'not executable', { mode: 0o644 });
	assert.deepEqual(resolvePid('', ext, 'linux'), { command: 'pid', source: 'path' });
	assert.deepEqual(resolvePid('', undefined, 'linux'), { command: 'pid', source: 'path' });
	fs.rmSync(ext, { recursive: true });
});

test('the Windows VSIX carries pid.exe', () => {
	assert.equal(bundledPath('/ext', 'win32'), path.join('/ext', 'bin', 'pid.exe'));
	assert.equal(bundledPath('/ext', 'darwin'), path.join('/ext', 'bin', 'pid'));
});

test('each source has its words, and pid --version is read from the real binary', async () => {
	assert.equal(sourceWords('bundled'), 'the binary bundled with the extension');
	assert.equal(sourceWords('setting'), 'from pid.path');
	assert.equal(sourceWords('path'), 'pid on PATH');
	assert.match(await pidVersion(PID_BIN), /^pid \S+ \(\S+, go\S+, linux\/\w+\)$/);
	await assert.rejects(pidVersion(path.join(os.tmpdir(), 'no-such-pid')), /no such file/);
});
