// The person's skills and agent files (issue 39) in the chat: `/skills` and `/agents` are the
// extension's own commands (they ask pid's skills/list and agents/list and show the answer as
// a command's output); the texts are made here. No `vscode` import.

import type { PidClient } from './client';
import type { SkillInfo } from './protocol';
import type { CommandView } from './webviewProtocol';

/** The extension's own commands, offered by the `/` completion with pid's. */
export const LOCAL_COMMANDS: CommandView[] = [
	{ name: 'skills', description: 'List the skills (SKILL.md) pid found, and those it left out' },
	{ name: 'agents', description: 'List the agent files pid found, and those it left out' },
];

/** localCommand returns which of the extension's own commands text is (`/skills`, `/agents`), else undefined. */
export function localCommand(text: string): 'skills' | 'agents' | undefined {
	const t = text.trim();
	return t === '/skills' ? 'skills' : t === '/agents' ? 'agents' : undefined;
}

/** listText is `/skills`' or `/agents`' output: those in use, then those left out with why. */
export function listText(kind: 'skills' | 'agents', list: readonly SkillInfo[]): string {
	const what = kind === 'skills' ? 'skill' : 'agent';
	const used = list.filter((x) => !x.ignored);
	const left = list.filter((x) => x.ignored);
	const lines: string[] = [];
	if (used.length === 0) {
		lines.push(`No ${what} is in use.`);
	} else {
		lines.push(`${kind === 'skills' ? 'Skills' : 'Agents'} in use:`);
		for (const x of used) {
			const cmd = kind === 'skills' ? `\`/${x.name}\`` : `\`${x.name}\``;
			lines.push(`- ${cmd}: ${oneLine(x.description)} (${x.source}: ${x.path})`);
			for (const w of x.warnings ?? []) {
				lines.push(`  - note: ${oneLine(w)}`);
			}
		}
	}
	if (left.length > 0) {
		lines.push('', 'Left out:');
		for (const x of left) {
			lines.push(`- ${x.name} (${x.path}): ${oneLine(x.ignored ?? '')}`);
		}
	}
	if (used.length === 0 && left.length === 0) {
		lines.push(
			kind === 'skills'
				? 'pid reads SKILL.md files in .agents/skills, .claude/skills and .opencode/skills of a trusted workspace folder, and in ~/.agents/skills, ~/.claude/skills and ~/.config/pid/skills.'
				: 'pid reads agent files in .claude/agents, .opencode/agents and .agents/agents of a trusted workspace folder, and in ~/.claude/agents and ~/.config/pid/agents.',
		);
	}
	return lines.join('\n');
}

function oneLine(s: string): string {
	return String(s ?? '').replace(/\s*\n\s*/g, ' ');
}

/** worktreeConflicts returns the files a task's merge left unapplied (its details.worktree.conflicts' paths). */
export function worktreeConflicts(details: unknown): string[] {
	const w = (details as { worktree?: { conflicts?: unknown } } | undefined)?.worktree;
	if (!w || !Array.isArray(w.conflicts)) {
		return [];
	}
	return w.conflicts.map((c) => (c as { path?: unknown })?.path).filter((p): p is string => typeof p === 'string' && p !== '');
}

/** listFor asks pid for the session's skills or agents and returns the command's output, and whether it failed. */
export async function listFor(client: PidClient, sessionId: string, kind: 'skills' | 'agents'): Promise<{ text: string; isError: boolean }> {
	try {
		const list = kind === 'skills' ? await client.listSkills(sessionId) : await client.listAgents(sessionId);
		return { text: listText(kind, list), isError: false };
	} catch (err) {
		return { text: `pid could not list the ${kind}: ${err instanceof Error ? err.message : String(err)}`, isError: true };
	}
}
