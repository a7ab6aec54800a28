// The review of a prompt's changes in a real VS Code (code-server in headless Chromium), driven
// as a person would (issue 35): a scripted model edits notes.txt in two places; the chat's
// changed-files card shows "1 file changed · Review" with the file's counts (changesUpdate);
// a click on it opens VS Code's multi-file diff editor (the file before the prompt | now); the
// cursor put on the first change in the diff editor's right side and Ctrl+Alt+U undoes that
// hunk: on disk the first change goes back, the second stays, and the card's counts follow;
// then the second hunk's Keep CodeLens in the diff editor keeps it: nothing pending, no lens
// left, the file as it is (CodeLenses show in a diff editor only with diffEditor.codeLens,
// which the extension's configurationDefaults turn on).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { withVSCode } from './lib/vscode.js';
import { waitFor } from './lib/util.js';

const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

const lines = Array.from({ length: 20 }, (_, i) => `note ${String(i + 1).padStart(2, '0')}`);
const original = lines.join('\n') + '\n';
const model = {
	provider: 'script',
	turns: [
		{ content: [call('r1', 'read', { path: 'notes.txt' })] },
		{ content: [call('e1', 'edit', { path: 'notes.txt', edits: [{ oldText: 'note 02', newText: 'NOTE TWO' }, { oldText: 'note 18', newText: 'NOTE EIGHTEEN' }] })] },
		{ content: [{ type: 'text', text: 'Two notes changed.' }] },
	],
};

test('VS Code review: the chat opens the multi-file diff editor, Ctrl+Alt+U in it undoes one hunk, the other stays, its Keep lens keeps it', { timeout: 150000 }, async () => {
	const settings = { 'pid.session': { permissions: { tools: { read: 'allow', edit: 'allow' } } } };
	await withVSCode({ name: 'vscode-review', model, settings, files: { 'notes.txt': original } }, async (vs) => {
		const disk = path.join(vs.dirs.workspace, 'notes.txt');
		await vs.openChat();
		await vs.sendInChat('change two notes');
		await vs.waitForChat((c) => c.status === 'idle' && c.text.includes('Two notes changed.'), { what: 'the answer' });
		assert.equal(fs.readFileSync(disk, 'utf8'), original.replace('note 02', 'NOTE TWO').replace('note 18', 'NOTE EIGHTEEN'));

		// The card: the review line with the file's counts, two hunks pending.
		const review = (c) => c.items.find((i) => i.kind === 'changes')?.text ?? '';
		let chat = await vs.waitForChat((c) => review(c).includes('1 file changed · Review') && c, { what: 'the changed-files card with its review line' });
		assert.match(review(chat), /notes\.txt \+2 -2 \(2 pending\)/);
		await vs.screenshot('vscode-review-card');

		// Review opens the multi-file diff editor: its tab, and the two sides of notes.txt.
		await vs.clickInChat('.changes-review button', '1 file changed · Review');
		const diff = () =>
			vs.page.evaluate(() => {
				const tab = document.querySelector('.part.editor .tab.active');
				const side = (s) =>
					[...document.querySelectorAll(`.part.editor .editor-instance .monaco-diff-editor .editor.${s} .view-line`)]
						.map((el) => el.textContent.replace(/\u00a0/g, ' '))
						.join('\n');
				return { tab: tab?.innerText.trim() ?? '', original: side('original'), modified: side('modified') };
			});
		const shown = await waitFor(
			async () => {
				const d = await diff();
				return d.tab.includes('pid: 1 file changed (2 to review)') && d.modified.includes('NOTE TWO') && d.original.includes('note 02') && d;
			},
			{ what: 'the multi-file diff editor of the prompt', describe: async () => `${JSON.stringify(await diff())}\n${await vs.describe()}` },
		);
		assert.ok(shown.original.includes('note 02') && !shown.original.includes('NOTE TWO'), 'the left side is the file before the prompt');
		await vs.screenshot('vscode-review-diff');

		// The cursor on the first change in the right side (the file now), then Ctrl+Alt+U.
		const line = await waitFor(
			async () => {
				for (const h of await vs.page.$$('.part.editor .editor-instance .monaco-diff-editor .editor.modified .view-line')) {
					if ((await h.evaluate((e) => e.textContent.replace(/\u00a0/g, ' '))).includes('NOTE TWO')) {
						return h;
					}
				}
				return undefined;
			},
			{ what: 'the changed line in the diff editor' },
		);
		await line.click();
		await waitFor(() => vs.page.evaluate(() => Boolean(document.activeElement?.closest('.monaco-diff-editor .editor.modified'))), { what: 'the focus in the right side of the diff' });
		await vs.page.keyboard.down('Control');
		await vs.page.keyboard.down('Alt');
		await vs.page.keyboard.press('u');
		await vs.page.keyboard.up('Alt');
		await vs.page.keyboard.up('Control');

		// On disk: exactly that hunk went back, the other stayed.
		await waitFor(() => fs.readFileSync(disk, 'utf8').includes('note 02'), { what: 'the first change undone on disk', describe: async () => fs.readFileSync(disk, 'utf8') });
		assert.equal(fs.readFileSync(disk, 'utf8'), original.replace('note 18', 'NOTE EIGHTEEN'));
		chat = await vs.waitForChat((c) => /notes\.txt \+1 -1 \(1 pending\)/.test(review(c)) && c, { what: "the card's counts after the undo" });
		assert.match(review(chat), /1 file changed · Review/);
		await waitFor(async () => (await diff()).modified.includes('note 02'), { what: 'the diff editor to show the file now', describe: async () => JSON.stringify(await diff()) });
		await vs.screenshot('vscode-review-undone');

		// The other hunk's Keep CodeLens, in the diff editor's right side: kept, nothing pending, the file as it is.
		/** lens clicks (with the mouse) the diff editor's CodeLens whose title starts with title; it reports whether there was one. */
		const lens = async (title) => {
			for (const a of await vs.page.$$('.part.editor .monaco-diff-editor .editor.modified .codelens-decoration a')) {
				if ((await a.evaluate((e) => e.textContent.replace(/\u00a0/g, ' '))).startsWith(title)) {
					await a.click();
					return true;
				}
			}
			return false;
		};
		const lenses = () => vs.page.evaluate(() => [...document.querySelectorAll('.part.editor .monaco-diff-editor .editor.modified .codelens-decoration a')].map((e) => e.textContent));
		await waitFor(async () => (await lenses()).includes('Undo') && !(await lenses()).some((t) => t.includes('@@ -1,')), { what: 'the Keep and Undo lenses of the hunk left only', describe: async () => JSON.stringify(await lenses()) });
		await vs.screenshot('vscode-review-lenses');
		assert.ok(await lens('Keep @@ -15,6 +15,6 @@'), `a Keep lens on the second hunk: ${JSON.stringify(await lenses())}`);
		chat = await vs.waitForChat((c) => /notes\.txt \+1 -1(?! \()/.test(review(c)) && c, { what: 'the card with nothing pending after the keep' });
		assert.equal(fs.readFileSync(disk, 'utf8'), original.replace('note 18', 'NOTE EIGHTEEN'));
		await waitFor(async () => (await lenses()).length === 0, { what: 'no lens left once every hunk is kept', describe: async () => JSON.stringify(await lenses()) });
		await vs.screenshot('vscode-review-kept');
	});
});
