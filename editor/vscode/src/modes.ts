// Session modes (docs/protocol.md, "Modes"): what the chat's mode button shows, the list the
// picker and Shift+Tab go through, and what pid's answers (session/new's and session/load's
// `modes`, modeUpdate) say. No `vscode` import: tests run this under plain node.

import type { SessionMode, SessionModes } from './protocol';
import type { ModeView } from './webviewProtocol';

/**
 * The modes every pid with modes offers, as it names them: shown before a session exists
 * (the next session/new starts in the one picked). A session's own list (which may add
 * bypassPermissions) replaces it once pid answers.
 */
export const DEFAULT_MODES: readonly SessionMode[] = [
	{ id: 'default', name: 'Default', description: 'Changing files and running commands ask first, unless a rule or an "always" answer allows them.' },
	{ id: 'acceptEdits', name: 'Accept edits', description: 'Writes and edits inside the workspace run without asking; commands ask.' },
	{ id: 'plan', name: 'Plan', description: 'Nothing changes files: the agent reads, runs commands in a read-only sandbox and proposes a plan.' },
	{ id: 'auto', name: 'Auto', description: 'Edits inside the workspace and sandboxed commands run without asking; leaving the sandbox asks.' },
];

/** The modes an approved plan may go on in besides default (exit_plan_mode's answer `mode`). */
export const PLAN_NEXT_MODES = ['acceptEdits', 'auto'] as const;
export type PlanNextMode = (typeof PLAN_NEXT_MODES)[number];

function obj(v: unknown): Record<string, unknown> | undefined {
	return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/**
 * readModes reads pid's `modes` (session/new, session/load): undefined when absent or not of
 * the protocol's shape (a pid without modes). Modes without an id are dropped; a mode
 * without a name is named by its id. The current mode is kept even when the list lacks it.
 */
export function readModes(v: unknown): SessionModes | undefined {
	const o = obj(v);
	if (!o || typeof o.currentModeId !== 'string' || o.currentModeId === '') {
		return undefined;
	}
	const available: SessionMode[] = [];
	for (const m of Array.isArray(o.availableModes) ? o.availableModes : []) {
		const mo = obj(m);
		if (!mo || typeof mo.id !== 'string' || mo.id === '' || available.some((a) => a.id === mo.id)) {
			continue;
		}
		available.push({
			id: mo.id,
			name: typeof mo.name === 'string' && mo.name.trim() !== '' ? mo.name : mo.id,
			...(typeof mo.description === 'string' && mo.description !== '' ? { description: mo.description } : {}),
		});
	}
	return { currentModeId: o.currentModeId, availableModes: available };
}

/** modeOf returns the mode with that id among modes, else a mode named after the id (pid may add modes). */
export function modeOf(modes: readonly SessionMode[], id: string): SessionMode {
	return modes.find((m) => m.id === id) ?? DEFAULT_MODES.find((m) => m.id === id) ?? { id, name: id };
}

/** modeView is what the chat's mode button shows for the mode id among modes. */
export function modeView(modes: readonly SessionMode[], id: string): ModeView {
	const m = modeOf(modes, id);
	return { id: m.id, name: m.name, ...(m.description ? { description: m.description } : {}) };
}

/**
 * nextMode is what Shift+Tab switches to: the mode after current in the list, the first after
 * the last (and the first when current is not listed). undefined when there is nothing to
 * switch to.
 */
export function nextMode(modes: readonly SessionMode[], current: string): SessionMode | undefined {
	if (modes.length === 0 || (modes.length === 1 && modes[0].id === current)) {
		return undefined;
	}
	const i = modes.findIndex((m) => m.id === current);
	return modes[(i + 1) % modes.length];
}
