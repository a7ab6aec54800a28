// Issue 24 in a real Neovim (tmux), checked on the screen as a person sees it:
// - the model writes a plan (todo_write): the chat shows it as a checklist under the card;
// - the chat window's status line shows the context meter and the cost (the model has a price);
// - `:Pid /pl<Tab>` completes to /plan on the command line; Enter shows the plan as pid says it;
// - in the prompt window, `/gr<Tab>` completes the user's own command /greet; Enter with a name
//   runs the template (the model answers it).
// The meter's figures: 40000 + 2000 tokens in the last call, the cost of both calls.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { panes, withNvim } from './lib/nvim.js';

const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

/** statusRow returns the screen's row that holds the chat window's status line. */
function statusRow(screen) {
	return screen.split('\n').find((r) => r.includes('pid://chat') && r.includes('mode: ')) ?? '';
}

test('Neovim: the plan as a checklist, the context meter, :Pid /plan completed, a /command completed in the prompt window', { timeout: 60000 }, async () => {
	const model = {
		provider: 'script',
		contextWindow: 200000,
		price: { input: 3, output: 15 },
		turns: [
			{
				content: [
					call('p1', 'todo_write', {
						todos: [
							{ content: 'Read the parser', status: 'completed' },
							{ content: 'Fix the off-by-one', status: 'in_progress' },
							{ content: 'Run the tests', status: 'pending' },
						],
					}),
				],
				usage: { input: 10000, output: 2000 },
			},
			{ content: [text('Planned.')], usage: { input: 40000, output: 2000 } },
			{ content: [text('Hello, World!')] },
		],
	};
	await withNvim({ name: 'nvim-plan', session: { model } }, async (nv) => {
		const commands = path.join(nv.dirs.pidXdg, 'config', 'pid', 'commands');
		fs.mkdirSync(commands, { recursive: true });
		fs.writeFileSync(path.join(commands, 'greet.md'), '---\ndescription: Greet someone\nargument-hint: name\n---\nSay hello to $ARGUMENTS.\n');

		await nv.sendKeys(':PidAsk plan the fix', 'Enter');
		let screen = await nv.waitFor((s) => panes(s).right.includes('[done] stop'), { what: 'the run to end' });
		await nv.saveScreen('nvim-plan-checklist', screen);
		const chat = panes(screen).right;
		const at = chat.indexOf('[plan] 3 steps: 1 done, 1 in progress, 1 to do');
		assert.ok(at > 0, `the plan's header:\n${screen}`);
		assert.deepEqual(chat.slice(at + 1, at + 4), ['  - [x] Read the parser', '  - [~] Fix the off-by-one (in progress)', '  - [ ] Run the tests'], `the checklist:\n${screen}`);
		assert.ok(chat.slice(at - 3, at).some((r) => /^\[tool\] todo_write \(a plan of 3 steps\)\s+ok/.test(r)), `the card above it (its line wraps):\n${screen}`);
		// 40000 + 2000 tokens in the last call; (10000*3 + 2000*15 + 40000*3 + 2000*15) / 1e6 = 0.21 USD.
		assert.ok(statusRow(screen).includes('context 42k/200k (21%) · $0.21'), `the meter in the status line:\n${statusRow(screen)}`);

		// :Pid /pl<Tab>: completed on the command line.
		await nv.sendKeys(':Pid /pl', 'Tab');
		await nv.waitFor((s) => s.split('\n').some((r) => r.startsWith(':Pid /plan')), { what: 'the completed command' });
		await nv.sendKeys('Enter');
		screen = await nv.waitFor((s) => panes(s).right.includes('[command] /plan:'), { what: "/plan's output" });
		await nv.saveScreen('nvim-plan-command', screen);
		const out = panes(screen).right;
		const c = out.indexOf('[command] /plan:');
		assert.ok(out.slice(c + 1, c + 5).some((r) => r.includes('[~] Fix the off-by-one')), `the plan as pid says it:\n${screen}`);

		// The prompt window: /gr<Tab> completes the user's /greet.
		await nv.sendKeys(':PidChat', 'Enter');
		await nv.waitFor((s) => s.includes('pid>') && s.includes('-- INSERT --'), { what: 'the prompt window' });
		await nv.sendKeys('/gr', 'Tab');
		screen = await nv.waitFor((s) => s.includes('pid> /greet'), { what: 'the completed name (the one match)' });
		await nv.saveScreen('nvim-plan-prompt-completion', screen);
		await nv.sendKeys(' World', 'Enter');
		screen = await nv.waitFor((s) => panes(s).right.includes('Hello, World!'), { what: 'the template answered' });
		assert.ok(panes(screen).right.includes('>>> /greet World'), `the command as typed:\n${screen}`);
	});
});
