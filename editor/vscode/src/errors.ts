// pid's errors in VS Code's words: a failed request (with pid's `data: {reason, setting}` when
// it sends one), or a model error in an assistant message, becomes a sentence naming what to
// change in VS Code (the `pid.model` setting, an environment variable) and the action that
// goes there (open Settings at pid.model). No `vscode` import: tests run this under plain node.

import { METHOD_NOT_FOUND, REQUEST_FAILED, errorCode, errorData, errorText } from './client';

/** An action offered with an error: a button. */
export interface ErrorAction {
	label: string;
	/** openSettings: VS Code's Settings at `setting`; resume: restart pid and load the session. */
	kind: 'openSettings' | 'resume' | 'showLog';
	setting?: string;
}

export interface FriendlyError {
	/** The sentence a person reads: what happened and what to change. */
	message: string;
	actions: ErrorAction[];
	/** pid's reason (data.reason) or the one recognized in its words. */
	reason?: string;
	/** pid's own words, for the log. */
	detail: string;
}

const OPEN_MODEL_SETTING: ErrorAction = { label: 'Open Settings', kind: 'openSettings', setting: 'pid.model' };

const EXAMPLE_MODEL = '{"provider": "anthropic", "id": "claude-sonnet-4-5"}';

function noModel(detail: string): FriendlyError {
	return {
		message: `pid has no model to use. Set "pid.model" in Settings, e.g. ${EXAMPLE_MODEL} (or "model" in ~/.config/pid/settings.json), then send the prompt again.`,
		actions: [OPEN_MODEL_SETTING],
		reason: 'noModel',
		detail,
	};
}

function apiKeyMissing(variable: string | undefined, detail: string): FriendlyError {
	const v = variable && /^[A-Za-z_][A-Za-z0-9_]*$/.test(variable) ? variable : undefined;
	return {
		message: v
			? `pid has no API key for this model: set the environment variable ${v} where VS Code is started (then restart VS Code), or name the variable that holds the key with "apiKeyEnv" in "pid.model".`
			: `pid has no API key for this model: set the provider's key variable (ANTHROPIC_API_KEY or OPENAI_API_KEY) where VS Code is started (then restart VS Code), or name the variable with "apiKeyEnv" in "pid.model".`,
		actions: [OPEN_MODEL_SETTING],
		reason: 'apiKeyMissing',
		detail,
	};
}

/** Protocol words pid may use in a message, and what they are in VS Code. */
const WORDS: [RegExp, string][] = [
	[/\binitializationOptions\.model\b/g, '"pid.model"'],
	[/\bmodel\.apiKeyEnv\b/g, '"apiKeyEnv" in "pid.model"'],
	[/\bsession\/new\b/g, 'a new session'],
	[/\bsession\/prompt\b/g, 'the prompt'],
];

/** inVSCodeWords replaces the protocol fields pid's messages may name with VS Code's settings. */
export function inVSCodeWords(text: string): string {
	let s = text;
	for (const [re, to] of WORDS) {
		s = s.replace(re, to);
	}
	return s;
}

/**
 * fromReason maps pid's data.reason (and data.setting) to a sentence; undefined for a reason
 * it does not know.
 */
function fromReason(reason: string, setting: string | undefined, detail: string): FriendlyError | undefined {
	switch (reason) {
		case 'noModel':
			return noModel(detail);
		case 'apiKeyMissing':
			return apiKeyMissing(setting, detail);
		case 'modelUnknown':
		case 'unknownModel':
			return { message: `pid does not know the model it was given. Check "pid.model" in Settings (provider and id). pid says: ${inVSCodeWords(detail)}`, actions: [OPEN_MODEL_SETTING], reason, detail };
		default:
			return undefined;
	}
}

/**
 * fromText recognizes pid's known failures in its words (for a pid that sends no data, and
 * for model errors that arrive as an assistant message's errorMessage).
 */
function fromText(detail: string): FriendlyError | undefined {
	if (/no model is configured/i.test(detail)) {
		return noModel(detail);
	}
	const key = /no \S+ API key: (?:set (\w+)|(\w+) \(named by)/i.exec(detail);
	if (key) {
		return apiKeyMissing(key[1] ?? key[2], detail);
	}
	if (/API key/i.test(detail) && /(401|unauthori[sz]ed|invalid)/i.test(detail)) {
		return { message: `The model's provider refused the API key. Check the key in the environment VS Code was started from (or "apiKeyEnv" in "pid.model"). pid says: ${detail}`, actions: [OPEN_MODEL_SETTING], reason: 'apiKeyRejected', detail };
	}
	return undefined;
}

/**
 * friendlyError turns a failed request to pid (a JSON-RPC error, or any Error) into what the
 * chat says: pid's data.reason when it gives one, else its known failures recognized in its
 * words, else its message with protocol fields replaced by VS Code's settings. what names the
 * request for people ("send the prompt", "list the models").
 */
export function friendlyError(err: unknown, what?: string): FriendlyError {
	const detail = errorText(err);
	const data = errorData(err);
	const reason = typeof data?.reason === 'string' ? data.reason : undefined;
	const setting = typeof data?.setting === 'string' ? data.setting : undefined;
	if (reason) {
		const r = fromReason(reason, setting, detail);
		if (r) {
			return r;
		}
		if (setting) {
			const s = setting.startsWith('pid.') || /^[A-Z_][A-Z0-9_]*$/.test(setting) ? setting : `"${setting}"`;
			const vscodeSetting = setting === 'model' ? 'pid.model' : setting.startsWith('pid.') ? setting : undefined;
			return {
				message: `${inVSCodeWords(detail)}${/[.!?]$/.test(detail) ? '' : '.'} To change it: ${vscodeSetting ? `"${vscodeSetting}" in Settings` : s}.`,
				actions: vscodeSetting ? [{ label: 'Open Settings', kind: 'openSettings', setting: vscodeSetting }] : [],
				reason,
				detail,
			};
		}
	}
	const known = fromText(detail);
	if (known) {
		return known;
	}
	const code = errorCode(err);
	if (code === METHOD_NOT_FOUND) {
		return {
			message: `This pid is older than the extension and cannot ${what ?? 'do that'}: update pid (the binary in "pid.path").`,
			actions: [{ label: 'Open Settings', kind: 'openSettings', setting: 'pid.path' }],
			reason: 'methodNotFound',
			detail,
		};
	}
	if (code === REQUEST_FAILED && /already (running|runs)|session\/steer|followUp/i.test(detail)) {
		return { message: 'pid is already answering a prompt: wait for it, or stop it.', actions: [], reason: 'busy', detail };
	}
	const prefix = what ? `pid could not ${what}: ` : '';
	return { message: `${prefix}${inVSCodeWords(detail)}`, actions: [], detail };
}

/**
 * modelErrorText turns an assistant message's errorMessage (the model's provider failed) into
 * a FriendlyError: a known failure in VS Code's words, else pid's message as it is.
 */
export function modelError(errorMessage: string): FriendlyError {
	return fromText(errorMessage) ?? { message: inVSCodeWords(errorMessage), actions: [], detail: errorMessage };
}
