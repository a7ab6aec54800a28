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

/** What an untrusted folder holds that pid left out, from workspace/requestTrust's ignored (pid's words per item). */
export interface Withheld {
	/** What its .pid/settings.json sets ("model", "permissions.tools[...] allow ..."). */
	settings: string[];
	/** Its instruction files (AGENTS.md, CLAUDE.md), relative to the folder. */
	instructions: string[];
	/** Its skills and agents ("NAME (PATH)"). */
	skills: string[];
	agents: string[];
}

/** withheld sorts pid's ignored items by what they are (pid names instruction files, skills and agents by a prefix). */
export function withheld(ignored: readonly string[]): Withheld {
	const w: Withheld = { settings: [], instructions: [], skills: [], agents: [] };
	for (const item of ignored) {
		const m = /^(instructions|skill|agent): (.*)$/.exec(item);
		if (!m) {
			w.settings.push(item);
		} else if (m[1] === 'instructions') {
			w.instructions.push(m[2]);
		} else if (m[1] === 'skill') {
			w.skills.push(m[2]);
		} else {
			w.agents.push(m[2]);
		}
	}
	return w;
}

/** withheldText says in words what pid leaves out of an untrusted folder: only what it holds (a folder with AGENTS.md alone is not said to have settings). */
export function withheldText(w: Withheld): string {
	const s = (n: number) => (n === 1 ? '' : 's');
	const parts: string[] = [];
	if (w.settings.length > 0) {
		const shown = w.settings.slice(0, MAX_IGNORED_SHOWN);
		const rest = w.settings.length - shown.length;
		parts.push(`ignores what its .pid/settings.json would enable: ${shown.join('; ')}${rest > 0 ? `; and ${rest} more` : ''}`);
	}
	if (w.instructions.length > 0) {
		parts.push(`does not give the model its instruction file${s(w.instructions.length)} ${w.instructions.join(', ')}`);
	}
	if (w.skills.length > 0) {
		parts.push(`leaves out its skill${s(w.skills.length)} ${w.skills.join(', ')}`);
	}
	if (w.agents.length > 0) {
		parts.push(`leaves out its agent${s(w.agents.length)} ${w.agents.join(', ')}`);
	}
	return parts.length > 0 ? parts.join(', and ') : 'ignores what it holds that pid did not name';
}

/** trustPrompt says what trusting the folder would let in: what it really holds that pid left out. */
export function trustPrompt(params: RequestTrustParams): TrustPrompt {
	const folder = String(params.folder);
	const w = withheld(Array.isArray(params.ignored) ? params.ignored.map(String) : []);
	const uses = [
		...(w.settings.length > 0 ? ['its settings to pick the model or allow commands'] : []),
		...(w.instructions.length + w.skills.length + w.agents.length > 0 ? ['its instructions to steer what the model does'] : []),
	];
	return {
		folder,
		message: `pid: the workspace folder ${folder} is not trusted, so pid ${withheldText(w)}. Trust this folder to let ${w.settings.length + w.instructions.length + w.skills.length + w.agents.length === 1 ? 'it' : 'them'} apply${uses.length > 0 ? ` (a cloned repository can use ${uses.join(', and ')})` : ''}?`,
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
