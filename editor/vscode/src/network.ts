// Network questions: pid's network/allowHost (a sandboxed command or a fetch call wants a
// host the allow-list does not know; its connection waits, at most 60 s) becomes a question
// for the user, and the choice becomes pid's decision. No `vscode` import: tests run this
// under plain node.

import type { AllowHostAnswer, AllowHostParams } from './protocol';

export const HOST_ALLOW = 'Allow';
export const HOST_ALWAYS = 'Always allow';
export const HOST_DENY = 'Deny';
export const HOST_CHOICES: readonly string[] = [HOST_ALLOW, HOST_ALWAYS, HOST_DENY];

export interface HostPrompt {
	/** One paragraph: a non-modal message has no detail. */
	message: string;
	choices: readonly string[];
}

/** hostPrompt says what asks for which host, and what each choice covers. */
export function hostPrompt(p: AllowHostParams): HostPrompt {
	const host = String(p?.host ?? '');
	const port = Number.isInteger(p?.port) ? `:${p.port}` : '';
	const cmd = String(p?.command ?? '').replace(/\s+/g, ' ').trim();
	const shown = cmd.length > 200 ? `${cmd.slice(0, 199)}…` : cmd;
	return {
		message:
			`pid: \`${shown}\` wants to reach ${host}${port}, which the allowed hosts do not list. ` +
			`Allow: this command only. Always allow: every command of this workspace, now and later (pid lists it in its remembered permissions). ` +
			`It waits 60 s for your answer, then is refused.`,
		choices: HOST_CHOICES,
	};
}

/** hostDecision maps the user's choice to pid's answer: anything but Allow or Always allow (a dismissal included) denies. */
export function hostDecision(choice: string | undefined): AllowHostAnswer {
	if (choice === HOST_ALLOW) {
		return { decision: 'allow' };
	}
	if (choice === HOST_ALWAYS) {
		return { decision: 'allowAlways' };
	}
	return { decision: 'deny' };
}

/** What HostAsker shows the question with (a VS Code message in the extension, a script in tests). */
export interface HostAskerEnv {
	show(p: HostPrompt): Promise<string | undefined>;
}

/** HostAsker answers network/allowHost: it shows the question and maps the choice; a failing prompt, or pid withdrawing the question, denies. */
export class HostAsker {
	constructor(private readonly env: HostAskerEnv) {}

	async ask(p: AllowHostParams, cancelled?: { isCancellationRequested: boolean }): Promise<AllowHostAnswer> {
		let choice: string | undefined;
		try {
			choice = await this.env.show(hostPrompt(p));
		} catch {
			return { decision: 'deny' };
		}
		if (cancelled?.isCancellationRequested) {
			return { decision: 'deny' };
		}
		return hostDecision(choice);
	}
}
