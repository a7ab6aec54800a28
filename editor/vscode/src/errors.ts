// pid's errors in VS Code's words: a failed request (with pid's `data: {reason, setting}` when
// it sends one), or a model error in an assistant message, becomes a sentence naming what to
// change in VS Code (the `pid.model` setting, an environment variable) and the action that
// goes there (open Settings at pid.model). No `vscode` import: tests run this under plain node.

import { METHOD_NOT_FOUND, REQUEST_FAILED, errorCode, errorData, errorText } from './client';
import type { ErrorAction } from './webviewProtocol';

// (ErrorAction, a button offered with an error, is in webviewProtocol.ts: the view shows it.)
export type { ErrorAction };

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

/** The user settings file when pid does not name it. */
export const USER_SETTINGS = '~/.config/pid/settings.json';

function openFileAction(file: string | undefined): ErrorAction[] {
	return file && file.startsWith('/') ? [{ label: `Open ${file.split('/').pop()}`, kind: 'openFile', path: file }] : [];
}

function noModel(detail: string, file?: string): FriendlyError {
	return {
		message: `pid has no model to use. Set "pid.model" in Settings, e.g. ${EXAMPLE_MODEL} (or "model" in ${file ?? USER_SETTINGS}), then send the prompt again.`,
		actions: [OPEN_MODEL_SETTING, ...openFileAction(file)],
		reason: 'noModel',
		detail,
	};
}

function apiKeyMissing(variable: string | undefined, file: string | undefined, detail: string): FriendlyError {
	const v = variable && /^[A-Za-z_][A-Za-z0-9_]*$/.test(variable) ? variable : undefined;
	const where = file ? `"model" in ${file}` : '"pid.model"';
	return {
		message: v
			? `pid has no API key for this model: set the environment variable ${v} where VS Code is started (then restart VS Code), or name the variable that holds the key with "apiKeyEnv" in ${where}.`
			: `pid has no API key for this model: set the provider's key variable (ANTHROPIC_API_KEY or OPENAI_API_KEY) where VS Code is started (then restart VS Code), or name the variable with "apiKeyEnv" in ${where}.`,
		actions: file ? openFileAction(file) : [OPEN_MODEL_SETTING],
		reason: 'apiKeyMissing',
		detail,
	};
}

/** Protocol words pid may use in a message, and what they are in VS Code. */
const WORDS: [RegExp, string][] = [
	[/\binitializationOptions\.model\b/g, '"pid.model"'],
	[/\bmodel\.apiKeyEnv\b/g, '"apiKeyEnv" in "pid.model"'],
	[/\bthe model your editor gave pid\b/g, 'the model of "pid.model" (or picked with "pid: Pick Model")'],
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

function str(v: unknown): string | undefined {
	return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * fromReason maps pid's setup error data ({reason, setting?, field?, file?, folder?,
 * variable?}) to a sentence naming what to change in VS Code's words; undefined for a reason
 * it does not know.
 */
function fromReason(data: Record<string, unknown>, detail: string): FriendlyError | undefined {
	const reason = str(data.reason) ?? '';
	const file = str(data.file);
	const field = str(data.field);
	switch (reason) {
		case 'noModel':
			return noModel(detail, file);
		case 'apiKeyMissing':
			return apiKeyMissing(str(data.variable), file, detail);
		case 'invalidModel': {
			const what = `${field ? `"${field}" of ` : ''}${file ? `"model" in ${file}` : '"pid.model" in Settings'}`;
			return {
				message: `pid cannot use the model it was given: fix ${what}. pid says: ${inVSCodeWords(detail)}`,
				actions: file ? openFileAction(file) : [OPEN_MODEL_SETTING],
				reason,
				detail,
			};
		}
		case 'untrustedSetting': {
			const folder = str(data.folder) ?? 'this workspace folder';
			const setting = str(data.setting) ?? 'model';
			return {
				message: `The workspace folder ${folder} sets "${setting}"${file ? ` in ${file}` : ''}, but pid does not trust that folder, so it ignores it. Trust the folder ("pid: Trusted Folders"), or set "pid.model" in Settings (or "${setting}" in ${USER_SETTINGS}).`,
				actions: [{ label: 'Trusted Folders', kind: 'trustedFolders' }, OPEN_MODEL_SETTING],
				reason,
				detail,
			};
		}
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
		return apiKeyMissing(key[1] ?? key[2], undefined, detail);
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
	if (data && reason) {
		const r = fromReason(data, detail);
		if (r) {
			return r;
		}
		if (setting) {
			const vscodeSetting = setting === 'model' ? 'pid.model' : setting.startsWith('pid.') ? setting : undefined;
			const file = str(data.file);
			const where = vscodeSetting ? `"${vscodeSetting}" in Settings${file ? ` (or "${setting}" in ${file})` : ''}` : `"${setting}"${file ? ` in ${file}` : ''}`;
			return {
				message: `${inVSCodeWords(detail)}${/[.!?]$/.test(detail) ? '' : '.'} To change it: ${where}.`,
				actions: [...(vscodeSetting ? [{ label: 'Open Settings', kind: 'openSettings' as const, setting: vscodeSetting }] : []), ...openFileAction(file)],
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
