// A file changed on disk while pid's edit of it waits for approval, in a real Neovim (tmux):
// greet.py is open (unchanged), the model reads it and asks to edit one line; while the float
// is open another line of the file changes on disk (as another program, or a git checkout,
// would change it); then the person answers `a`. Neovim must not stop on its "WARNING: The
// file has been changed since reading it!!!" question, the change on disk must not be
// reverted, and what the model is told about its edit must be true of the file.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { panes, withNvim } from './lib/nvim.js';

const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

/** sessionLines returns the lines of every saved session file under dir. */
function sessionLines(dir) {
	const out = [];
	if (!fs.existsSync(dir)) {
		return out;
	}
	for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, e.name);
		if (e.isDirectory()) {
			out.push(...sessionLines(p));
		} else if (e.name.endsWith('.jsonl')) {
			out.push(...fs.readFileSync(p, 'utf8').split('\n').filter((l) => l !== ''));
		}
	}
	return out;
}

test('Neovim: a file changed on disk while its edit waits for approval is neither reverted nor reported wrongly', { timeout: 90000 }, async () => {
	const original = 'def greet(name):\n    return "Hello, " + name\n\nprint(greet("world"))\n';
	const model = {
		provider: 'script',
		turns: [
			{ content: [text('Reading greet.py.'), call('r1', 'read', { path: 'greet.py' })] },
			{ content: [text('Changing the greeting.'), call('e1', 'edit', { path: 'greet.py', edits: [{ oldText: '"Hello, "', newText: '"Hi, "' }] })] },
			{ content: [text('Finished.')] },
		],
	};
	await withNvim({ name: 'nvim-disk-change', session: { model }, files: { 'greet.py': original } }, async (nv) => {
		const disk = path.join(nv.dirs.workspace, 'greet.py');
		// The file was last written a minute ago (as most files a person opens were), so that a
		// change now is one Neovim's own timestamp check sees too.
		const past = Date.now() / 1000 - 60;
		fs.utimesSync(disk, past, past);
		await nv.sendKeys(':e greet.py', 'Enter');
		await nv.waitFor('def greet(name):', { what: 'greet.py open' });
		await nv.sendKeys(':PidAsk say Hi instead of Hello in greet.py', 'Enter');
		let screen = await nv.waitFor((s) => s.includes('pid wants to run edit greet.py') && s.includes('[a] allow'), { what: 'the approval float' });
		assert.ok(screen.includes('+    return "Hi, " + name'), `the float shows the edit:\n${screen}`);

		// Another line changes on disk while the question is open.
		const changed = original.replace('greet("world")', 'greet("disk")');
		fs.writeFileSync(disk, changed);
		await nv.saveScreen('nvim-disk-change-approval', screen);

		await nv.sendKeys(':PidApproval', 'Enter');
		await nv.sendKeys('a');
		screen = await nv.waitFor((s) => /WARNING: The file has been changed|\(y\/n\)/.test(s) || panes(s).right.includes('[done] stop'), {
			what: 'the run to end (or Neovim to ask about the file)',
		});
		await nv.saveScreen('nvim-disk-change-done', screen);
		assert.ok(!/WARNING: The file has been changed since reading it|\(y\/n\)/.test(screen), `Neovim did not stop on a question about the file:\n${screen}`);
		assert.ok(panes(screen).right.includes('[done] stop'), `the run ended:\n${screen}`);

		// The change on disk is still there.
		const now = fs.readFileSync(disk, 'utf8');
		assert.ok(now.includes('greet("disk")'), `the change made on disk was kept:\n${now}`);

		// What the model was told about its edit is true of the file.
		const saved = sessionLines(path.join(nv.dirs.pidXdg, 'state', 'pid', 'sessions')).map((l) => JSON.parse(l));
		const result = saved.map((e) => e.message ?? e).find((m) => m && m.role === 'toolResult' && m.toolCallId === 'e1');
		assert.ok(result, `the edit's result was saved: ${JSON.stringify(saved).slice(0, 2000)}`);
		const told = result.content.map((c) => c.text ?? '').join('\n');
		if (result.isError) {
			assert.equal(now, changed, 'the edit was refused: the file is as the disk change left it');
			assert.match(told, /changed|modified/i, `the model is told the file changed: ${told}`);
		} else {
			assert.equal(now, changed.replace('"Hello, "', '"Hi, "'), `the model was told the edit succeeded (${told}): both changes are in the file`);
		}
		// The buffer shows the file as it is now, with nothing unsaved.
		const left = panes(screen).left;
		assert.ok(left.some((r) => r.includes('print(greet("disk"))')), `the buffer shows the disk change:\n${screen}`);
		const status = screen.split('\n').find((r) => r.includes('greet.py') && /\d+,\d+/.test(r));
		assert.ok(status && !status.includes('greet.py [+]'), `greet.py has nothing unsaved: ${status}`);
	});
});
