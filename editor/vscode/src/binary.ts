// Which pid binary the extension runs (issue 34): `pid.path` when the user set it, else the
// binary its platform's VSIX carries under bin/, else `pid` on PATH; and the words that say
// which, for the log and "pid: Show Version". No `vscode` import.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where the pid the extension runs comes from. */
export type PidSource = 'setting' | 'bundled' | 'path';

/** The pid binary to run and where it comes from. */
export interface PidBinary {
	command: string;
	source: PidSource;
}

/** bundledPath returns where a platform VSIX carries pid inside the extension's folder. */
export function bundledPath(extensionPath: string, platform: NodeJS.Platform = process.platform): string {
	return path.join(extensionPath, 'bin', platform === 'win32' ? 'pid.exe' : 'pid');
}

/**
 * resolvePid returns the pid to run: `configured` (pid.path) when it is not empty, else the
 * bundled binary when the extension carries one that can be run, else `pid` looked up on PATH.
 * Pure but for a look at the bundled file.
 */
export function resolvePid(configured: string | undefined, extensionPath: string | undefined, platform: NodeJS.Platform = process.platform): PidBinary {
	const set = (configured ?? '').trim();
	if (set !== '') {
		return { command: set, source: 'setting' };
	}
	if (extensionPath) {
		const bundled = bundledPath(extensionPath, platform);
		try {
			fs.accessSync(bundled, platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK);
			return { command: bundled, source: 'bundled' };
		} catch {
			// This VSIX carries no pid (one built without --target), or it lost its mode bit.
		}
	}
	return { command: 'pid', source: 'path' };
}

/** sourceWords says where a pid comes from, for a person. */
export function sourceWords(source: PidSource): string {
	switch (source) {
		case 'setting':
			return 'from pid.path';
		case 'bundled':
			return 'the binary bundled with the extension';
		case 'path':
			return 'pid on PATH';
	}
}

/**
 * pidVersion runs `COMMAND --version` and resolves with its line (pid VERSION (COMMIT, GO
 * VERSION, OS/ARCH)), or rejects with what went wrong, within timeoutMs.
 */
export function pidVersion(command: string, timeoutMs = 10000): Promise<string> {
	return new Promise((resolve, reject) => {
		execFile(command, ['--version'], { timeout: timeoutMs, windowsHide: true }, (err, stdout, stderr) => {
			if (err) {
				const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (stderr || err.message).trim();
				reject(new Error(`${command} --version failed: ${why}`));
				return;
			}
			resolve(stdout.trim());
		});
	});
}
