// What a person picks for one conversation and what pid remembers for them: the session's mode
// (session/setMode, modeUpdate; before a session exists, the next one's) and model
// (models/list, session/setModel), the session's commands for the `/` completion, the
// remembered "always" answers (permissions/*) and the trusted folders (trust/*). The state is
// state.ts's. No `vscode` import.

import type { NoticeAction } from './chat';
import { commandViews } from './chat';
import { METHOD_NOT_FOUND, errorCode, errorText, type PidClient } from './client';
import { friendlyError, type ErrorAction } from './errors';
import { DEFAULT_MODES, modeView, nextMode, readModes } from './modes';
import type { ModelEntry, ModelsListResult, RememberedPermission, SessionMode, TrustedFolder } from './protocol';
import { LOCAL_COMMANDS } from './skills';
import { BusyError, ChatError, LOADING, type ControllerState } from './state';

/**
 * showModel puts the session's model in the chat's Model button (models/list's current),
 * in the background: a failure leaves the label as it was (the picker still works).
 */
export function showModel(s: ControllerState, client: PidClient, sessionId: string): void {
	const before = s.chat.state.model;
	client.listModels(sessionId).then(
		(r) => {
			// Not over a pick made meanwhile, nor for a session no longer shown.
			if (s.sessionId === sessionId && s.chat.state.model === before) {
				s.chat.setState({ model: r.current ? modelLabel(r.current) : undefined });
			}
		},
		() => undefined,
	);
}

/**
 * refreshCommands puts the session's commands (commands/list) in the prompt box's `/`
 * completion, in the background: a failure (a pid without commands) keeps the built-in list.
 */
export function refreshCommands(s: ControllerState, client: PidClient, sessionId: string): void {
	client.listCommands(sessionId).then(
		(list) => {
			if (s.sessionId === sessionId && list.length > 0) {
				const views = commandViews(list);
				s.chat.setState({ commands: [...views, ...LOCAL_COMMANDS.filter((l) => !views.some((v) => v.name === l.name))] });
			}
		},
		(err) => {
			// A pid without commands keeps the built-in list quietly.
			if (errorCode(err) !== METHOD_NOT_FOUND) {
				s.log(`! pid: could not list the commands: ${errorText(err)}`);
			}
		},
	);
}

/**
 * showModes puts pid's `modes` (session/new, session/load) in the chat's mode button and
 * keeps the list the picker and Shift+Tab go through; a pid without modes hides the button.
 */
export function showModes(s: ControllerState, modes: unknown): void {
	const m = readModes(modes);
	if (!m) {
		s.modeList = [];
		s.chat.setState({ mode: undefined });
		return;
	}
	s.modeList = m.availableModes.length > 0 ? m.availableModes : [...DEFAULT_MODES];
	s.chat.setState({ mode: modeView(s.modeList, m.currentModeId) });
}

/** The modes the picker offers and the current one's id (undefined: pid has no modes). */
export function modes(s: ControllerState): { available: SessionMode[]; current: string | undefined } {
	return { available: [...s.modeList], current: s.chat.state.mode?.id };
}

/**
 * setMode switches the session's mode (session/setMode; pid's modeUpdate shows it), or,
 * before a session exists, the mode the next one starts in. It throws a ChatError in VS
 * Code's words when pid refuses it, BusyError while a session loads or pid starts one.
 */
export async function setMode(s: ControllerState, modeId: string): Promise<void> {
	if (s.disposed) {
		throw new Error('the pid controller was disposed');
	}
	if (s.loading) {
		throw new BusyError(LOADING);
	}
	const mode = s.modeList.find((m) => m.id === modeId);
	if (!mode) {
		throw new ChatError(s.modeList.length === 0 ? 'This pid has no modes: update pid.' : `pid does not offer the mode "${modeId}" in this session.`);
	}
	if (s.sessionId === undefined) {
		if (s.stoppedSession !== undefined) {
			throw new BusyError('pid stopped: Resume the session (or send a message) first, then switch the mode.');
		}
		if (s.current) {
			throw new BusyError('pid is still starting the session: switch the mode once the prompt runs.');
		}
		s.nextModeId = modeId === 'default' ? undefined : modeId;
		s.chat.setState({ mode: modeView(s.modeList, modeId) });
		s.log(`pid: the next session starts in ${mode.name} mode`);
		return;
	}
	const sessionId = s.sessionId;
	try {
		await (await s.daemon.ensureClient()).setMode(sessionId, modeId);
	} catch (err) {
		const f = friendlyError(err, 'change the mode');
		throw new ChatError(f.message, f.actions);
	}
	if (s.sessionId === sessionId) {
		s.chat.setState({ mode: modeView(s.modeList, modeId) });
	}
}

/** cycleMode is Shift+Tab in the prompt box: the next mode of the list (setMode). */
export async function cycleMode(s: ControllerState): Promise<void> {
	const next = nextMode(s.modeList, s.chat.state.mode?.id ?? 'default');
	if (next) {
		await setMode(s, next.id);
	}
}

/** models lists the models the settings offer (models/list) and the session's current one. */
export async function models(s: ControllerState): Promise<ModelsListResult> {
	try {
		return await (await s.daemon.ensureClient()).listModels(s.sessionId);
	} catch (err) {
		const f = friendlyError(err, 'list the models');
		throw new ChatError(f.message, f.actions);
	}
}

/**
 * setModel makes model the session's (session/setModel: the next model call uses it), or,
 * before a session exists, the next session's. It throws a ChatError in VS Code's words.
 */
export async function setModel(s: ControllerState, model: ModelEntry): Promise<void> {
	const label = modelLabel(model);
	if (s.sessionId === undefined) {
		s.nextModel = model;
		s.chat.setState({ model: label });
		return;
	}
	try {
		await (await s.daemon.ensureClient()).setModel(s.sessionId, modelParam(model));
	} catch (err) {
		const f = friendlyError(err, 'change the model');
		throw new ChatError(f.message, f.actions);
	}
	s.chat.setState({ model: label });
	s.log(`pid: the session's model is now ${label}`);
}

/** permissions lists the remembered "always" answers (permissions/list). */
export async function permissions(s: ControllerState): Promise<RememberedPermission[]> {
	try {
		return await (await s.daemon.ensureClient()).permissionsList();
	} catch (err) {
		const f = friendlyError(err, 'list the remembered answers');
		throw new ChatError(f.message, f.actions);
	}
}

/** revokePermission forgets one remembered answer (permissions/revoke). */
export async function revokePermission(s: ControllerState, id: string): Promise<void> {
	try {
		await (await s.daemon.ensureClient()).permissionsRevoke(id);
	} catch (err) {
		const f = friendlyError(err, 'forget that answer');
		throw new ChatError(f.message, f.actions);
	}
}

/** trustedFolders lists the folders the user trusts (trust/list), starting pid if needed. */
export async function trustedFolders(s: ControllerState): Promise<TrustedFolder[]> {
	return (await s.daemon.ensureClient()).trustList();
}

/** grantTrust trusts a folder (trust/grant), starting pid if needed. */
export async function grantTrust(s: ControllerState, folder: string): Promise<void> {
	await (await s.daemon.ensureClient()).trustGrant(folder);
	s.log(`pid: ${folder} is trusted: its .pid/settings.json applies in full`);
}

/** revokeTrust stops trusting a folder (trust/revoke), starting pid if needed. */
export async function revokeTrust(s: ControllerState, folder: string): Promise<void> {
	await (await s.daemon.ensureClient()).trustRevoke(folder);
	s.log(`pid: ${folder} is no longer trusted: its .pid/settings.json may only narrow what pid does`);
}

/** modelParam is a models/list entry as session/new and session/setModel take it (without its display name). */
export function modelParam(m: ModelEntry): ModelEntry {
	const { name: _name, ...rest } = m;
	void _name;
	return rest as ModelEntry;
}

/** modelLabel names a model for the Model button: its name, else provider/id. */
export function modelLabel(m: ModelEntry): string {
	return m.name ?? (m.id ? `${m.provider}/${m.id}` : m.provider);
}

/** noticeAction turns an error's action into a button of the chat. */
export function noticeAction(a: ErrorAction): NoticeAction {
	switch (a.kind) {
		case 'openSettings':
			return { label: a.label, action: 'openSettings', arg: a.setting };
		case 'openFile':
			return { label: a.label, action: 'openFile', arg: a.path };
		default:
			return { label: a.label, action: a.kind };
	}
}
