// :PidReview in a real Neovim (tmux), checked on the screen as a person sees it (issue 35): a
// prompt edits notes.txt (open in a buffer) in two places; the chat says it changed with its
// counts; :PidReview opens the quickfix list with the two hunks; :cfirst goes to the first,
// beside the file before the prompt in diff mode; `gu` on it undoes it on disk and in the
// buffer (no W11 question), the other change stays; `]h` goes to the other one, `gk` keeps it.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withNvim } from './lib/nvim.js';

const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

test('Neovim: :PidReview lists the hunks in the quickfix list, shows the file before, gu undoes one, gk keeps the other', { timeout: 90000 }, async () => {
	const lines = Array.from({ length: 20 }, (_, i) => `note ${String(i + 1).padStart(2, '0')}`);
	const original = lines.join('\n') + '\n';
	const model = {
		provider: 'script',
		turns: [
			{ content: [call('r1', 'read', { path: 'notes.txt' })] },
			{ content: [call('e1', 'edit', { path: 'notes.txt', edits: [{ oldText: 'note 02', newText: 'NOTE TWO' }, { oldText: 'note 18', newText: 'NOTE EIGHTEEN' }] })] },
			{ content: [text('Two notes changed.')] },
		],
	};
	const session = { model, permissions: { default: 'allow' } };
	await withNvim({ name: 'nvim-review', session, files: { 'notes.txt': original }, file: 'notes.txt' }, async (nv) => {
		const disk = path.join(nv.dirs.workspace, 'notes.txt');
		await nv.sendKeys(':PidAsk change two notes', 'Enter');
		let screen = await nv.waitFor((s) => s.includes('Two notes changed.') && s.includes('[changes] 1 file changed, 2 hunks to review'), { what: 'the run and its changes line' });
		await nv.saveScreen('nvim-review-run', screen);

		await nv.sendKeys(':PidReview', 'Enter');
		screen = await nv.waitFor((s) => s.includes('modified @@ -1,5 +1,5 @@ (by edit)') && s.includes('modified @@ -15,6 +15,6 @@ (by edit)'), { what: 'the quickfix list' });
		await nv.saveScreen('nvim-review-quickfix', screen);

		await nv.sendKeys(':cfirst', 'Enter');
		// The diff mode: the line as it was and as it is on one row, the unchanged middle folded.
		screen = await nv.waitFor((s) => s.split('\n').some((r) => r.includes('note 02') && r.includes('NOTE TWO')) && s.split('\n').some((r) => r.includes('note 18') && r.includes('NOTE EIGHTEEN')), { what: 'the file beside its state before the prompt, in diff mode' });
		await nv.saveScreen('nvim-review-diff', screen);

		await nv.sendKeys(':2', 'Enter');
		await nv.sendKeys('gu');
		screen = await nv.waitFor(() => fs.readFileSync(disk, 'utf8') === original.replace('note 18', 'NOTE EIGHTEEN'), { what: 'the undo on disk' });
		screen = await nv.waitFor((s) => !s.includes('NOTE TWO') && s.includes('modified @@ -15,6 +15,6 @@ (by edit)') && !s.includes('modified @@ -1,5 +1,5 @@'), { what: 'the buffer and the quickfix list after the undo' });
		await nv.saveScreen('nvim-review-undone', screen);
		assert.ok(!/W11|W12|changed since editing started|has changed since/.test(screen), `no W11/W12 question:\n${screen}`);

		await nv.sendKeys(':1', 'Enter');
		await nv.sendKeys(']h');
		await nv.sendKeys('gk');
		screen = await nv.waitFor((s) => s.includes('[changes] 1 file changed, 0 hunks to review'), { what: 'the keep in the chat' });
		await nv.saveScreen('nvim-review-kept', screen);
		assert.equal(fs.readFileSync(disk, 'utf8'), original.replace('note 18', 'NOTE EIGHTEEN'), 'a keep changes nothing on disk');
	});
});
