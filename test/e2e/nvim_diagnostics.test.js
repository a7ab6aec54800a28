// Issue 26 in a real Neovim (tmux), checked on the screen as a person sees it: Neovim runs a
// real language server (testdata/lspserver, through vim.lsp: an error on each line with
// BROKEN) for the open file; the model's edit breaks a line; pid asks editor/diagnostics and
// Neovim answers with what that server reported on the new text. The chat shows the problem
// under the edit's card, the file's window shows Neovim's own diagnostic, and <CR> on the card
// shows the whole result the model read, the problem included.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { panes, withNvim } from './lib/nvim.js';
import { isExecutable, repoRoot } from './lib/util.js';

const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

/** testLSP returns the test language server's binary: PID_TESTLSP_BIN, or built once. */
function testLSP() {
	if (process.env.PID_TESTLSP_BIN && isExecutable(process.env.PID_TESTLSP_BIN)) {
		return path.resolve(process.env.PID_TESTLSP_BIN);
	}
	const out = path.join(repoRoot, '.cache', 'e2e', 'build', 'pidtestlsp');
	fs.mkdirSync(path.dirname(out), { recursive: true });
	execFileSync('go', ['build', '-o', out, './testdata/lspserver'], { cwd: repoRoot, stdio: 'inherit' });
	return out;
}

test('Neovim: the problems after an edit come from the language server Neovim runs, shown under the card and read by the model', { timeout: 60000 }, async () => {
	const lsp = testLSP();
	// The language server for *.txt buffers, as a person's config would start one.
	const initLua = `local bin = ${JSON.stringify(lsp)}
local client
vim.api.nvim_create_autocmd('FileType', { pattern = 'text', callback = function(a)
  client = client or vim.lsp.start_client({ name = 'pidtestlsp', cmd = { bin }, root_dir = vim.fn.getcwd() })
  vim.lsp.buf_attach_client(a.buf, client)
end })
`;
	const model = {
		provider: 'script',
		turns: [
			{ content: [call('r1', 'read', { path: 'a.txt' })] },
			{ content: [call('e1', 'edit', { path: 'a.txt', edits: [{ oldText: 'beta', newText: 'beta BROKEN' }] })] },
			{ content: [text('I see the problem on line 2.')] },
		],
	};
	await withNvim({ name: 'nvim-diagnostics', session: { mode: 'acceptEdits', model }, initLua, files: { 'a.txt': 'alpha\nbeta\n' }, file: 'a.txt' }, async (nv) => {
		await nv.waitFor('alpha', { what: 'the file' });
		await nv.sendKeys(':PidAsk break line 2', 'Enter');
		let screen = await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the run to end' });
		screen = await nv.waitFor((s) => panes(s).left.some((r) => r.includes('beta BROKEN') && r.includes('BROKEN is not allowed here')), { what: "Neovim's own diagnostic in the file's window" });
		await nv.saveScreen('nvim-diagnostics-card', screen);
		const chat = panes(screen).right;
		const at = chat.findIndex((r) => /^\[tool\] edit a\.txt\s+ok · Edited a\.txt/.test(r));
		assert.ok(at >= 0, `the edit's card:\n${screen}`);
		assert.ok(chat.slice(at + 1, at + 3).includes('  ! L2:6 error: BROKEN is not allowed here (pidtestlsp)'), `the problem under the card:\n${screen}`);
		assert.ok(chat.includes('I see the problem on line 2.'), `the model's answer:\n${screen}`);

		// <CR> on the card: the whole result the model read.
		await nv.sendKeys('C-w', 'l', '/^\\[tool\\] edit a', 'Enter', 'Enter');
		screen = await nv.waitFor('Problems the editor reports in a.txt after this change:', { what: "the card's whole output" });
		await nv.saveScreen('nvim-diagnostics-output', screen);
		assert.ok(screen.includes('L2:6 BROKEN is not allowed here (pidtestlsp)'), `the error as the model read it:\n${screen}`);
	});
});
