// Trust questions: pid's workspace/requestTrust becomes a question for the user (asked once
// per folder per window, never while VS Code itself does not trust the workspace), and the
// user's choice becomes pid's answer. No `vscode` import: tests run this under plain node.

import type { RequestTrustParams } from './protocol';

export const TRUST = 'Trust folder';
export const KEEP_RESTRICTED = 'Keep restricted';
export const TRUST_CHOICES: readonly string[] = [TRUST, KEEP_RESTRICTED];

/** How many ignored settings the question names before "and N more". */
export const MAX_IGNORED_SHOWN = 6;

export interface TrustPrompt {
	folder: string;
	/** One paragraph: a non-modal message has no detail. */
	message: string;
	choices: readonly string[];
}

/** trustPrompt says what trusting the folder would enable: the settings pid ignored. */
export function trustPrompt(params: RequestTrustParams): TrustPrompt {
	const folder = String(params.folder);
	const ignored = Array.isArray(params.ignored) ? params.ignored.map(String) : [];
	const shown = ignored.slice(0, MAX_IGNORED_SHOWN);
	const rest = ignored.length - shown.length;
	const list = shown.length > 0 ? `${shown.join('; ')}${rest > 0 ? `; and ${rest} more` : ''}` : 'settings it did not name';
	return {
		folder,
		message: `pid: the workspace folder ${folder} is not trusted, so pid ignores what its .pid/settings.json would enable: ${list}. Trust this folder to let those settings apply (a cloned repository can use them to pick the model or allow commands)?`,
		choices: TRUST_CHOICES,
	};
}

export interface TrustEnv {
	/** Reports whether VS Code trusts the workspace (false in Restricted Mode). */
	isTrusted(): boolean;
	/** Shows the question; resolves to the chosen choice, or undefined when dismissed. */
	show(p: TrustPrompt): Promise<string | undefined>;
}

/**
 * TrustAsker answers pid's trust questions. While VS Code does not trust the workspace it
 * answers false without asking. Otherwise it asks the user, at most once per folder while
 * a question about it is open; a "Keep restricted" or dismissed answer is remembered (pid
 * asks again after each restart, which a change of settings causes) until forget(). A "Trust
 * folder" answer is not remembered: pid keeps it, and asks again only once it was revoked.
 * Not safe for use from several threads (none exist in the extension host).
 */
export class TrustAsker {
	private readonly declined = new Set<string>();
	private readonly open = new Map<string, Promise<boolean>>();

	constructor(private readonly env: TrustEnv) {}

	/** ask resolves to whether to trust params.folder; it never rejects (a failure is false). */
	ask(params: RequestTrustParams): Promise<boolean> {
		const p = trustPrompt(params);
		if (!this.env.isTrusted() || this.declined.has(p.folder)) {
			return Promise.resolve(false);
		}
		const asked = this.open.get(p.folder);
		if (asked) {
			return asked;
		}
		const q = this.env
			.show(p)
			.then(
				(choice) => choice === TRUST,
				() => false,
			)
			.then((trusted) => {
				if (!trusted) {
					this.declined.add(p.folder);
				}
				return trusted;
			})
			.finally(() => this.open.delete(p.folder));
		this.open.set(p.folder, q);
		return q;
	}

	/** forget drops a remembered decline: the next question about folder is asked again. */
	forget(folder: string): void {
		this.declined.delete(folder);
	}

	/** Reports whether a decline about folder is remembered. */
	declinedFolder(folder: string): boolean {
		return this.declined.has(folder);
	}
}
