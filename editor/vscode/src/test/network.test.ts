// Network questions (network/allowHost): the prompt and the answer, HostAsker alone, then
// the client declaring networkApproval only when it answers them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HOST_ALLOW, HOST_ALWAYS, HOST_CHOICES, HOST_DENY, HostAsker, hostDecision, hostPrompt, type HostPrompt } from '../network';
import type { AllowHostParams } from '../protocol';

const q = (command = 'npm install left-pad'): AllowHostParams => ({ sessionId: 's1', toolCallId: 'c1', host: 'registry.npmjs.org', port: 443, command });

test('hostPrompt names the command, the host and port, and what each choice covers', () => {
	const p = hostPrompt(q());
	assert.deepEqual(p.choices, [HOST_ALLOW, HOST_ALWAYS, HOST_DENY]);
	assert.match(p.message, /^pid: `npm install left-pad` wants to reach registry\.npmjs\.org:443, which the allowed hosts do not list\. /);
	assert.match(p.message, /Allow: this command only\. Always allow: every command of this workspace, now and later/);
	const long = hostPrompt(q('x'.repeat(500) + '\n\n  y')).message;
	assert.ok(long.includes('x'.repeat(199) + '…`'), 'a long command is cut');
	assert.ok(!long.includes('\n'), 'one paragraph');
});

test('hostDecision: only Allow and Always allow let the host through; a dismissal denies', () => {
	assert.deepEqual(hostDecision(HOST_ALLOW), { decision: 'allow' });
	assert.deepEqual(hostDecision(HOST_ALWAYS), { decision: 'allowAlways' });
	assert.deepEqual(hostDecision(HOST_DENY), { decision: 'deny' });
	assert.deepEqual(hostDecision(undefined), { decision: 'deny' });
	assert.deepEqual(hostDecision('Allow '), { decision: 'deny' });
});

test('HostAsker: shows the prompt, maps the choice; a failing prompt or a withdrawn question denies', async () => {
	const shown: HostPrompt[] = [];
	const answers: (string | undefined | Error)[] = [HOST_ALWAYS, HOST_ALLOW, new Error('no window'), HOST_ALLOW];
	const a = new HostAsker({
		show: async (p) => {
			shown.push(p);
			const x = answers.shift();
			if (x instanceof Error) {
				throw x;
			}
			return x;
		},
	});
	assert.deepEqual(await a.ask(q()), { decision: 'allowAlways' });
	assert.deepEqual(await a.ask(q()), { decision: 'allow' });
	assert.deepEqual(await a.ask(q()), { decision: 'deny' });
	assert.deepEqual(await a.ask(q(), { isCancellationRequested: true }), { decision: 'deny' }, 'pid stopped waiting: the late answer is a deny');
	assert.equal(shown.length, 4);
	assert.deepEqual(shown[0].choices, HOST_CHOICES);
});
