// Approvals: a beforeToolCall request becomes a question for the user (title, detail with a
// diff for write and edit, the choices: "Always allow" only when pid says what it would
// cover), and the user's choice becomes pid's answer.
// No `vscode` import: tests run this under plain node.

import { PLAN_NEXT_MODES, type PlanNextMode } from './modes';
import type { AlwaysScope, BeforeToolCallAnswer, BeforeToolCallParams } from './protocol';

export const ALLOW = 'Allow';
export const ALWAYS_ALLOW = 'Always allow';
export const DENY = 'Deny';
/** The choices when pid scoped an "always" answer (params.always)... */
export const CHOICES: readonly string[] = [ALLOW, ALWAYS_ALLOW, DENY];
/** ...and when it could not: an "always" answer would count as once, so none is offered. */
export const CHOICES_ONCE: readonly string[] = [ALLOW, DENY];

export interface ApprovalQuestion {
	toolCallId: string;
	toolName: string;
	/** One line: what pid wants to do. */
	title: string;
	/** Several lines: the call's arguments, with the diff when there is one. */
	detail: string;
	/** The unified-style diff for write and edit calls whose arguments allow one. */
	diff?: string;
	choices: readonly string[];
	/** What "Always allow" covers; absent when it is not offered. */
	always?: AlwaysScope;
	/**
	 * exit_plan_mode's plan, whole (markdown): Allow approves it (pid goes on in default
	 * mode, or in one of planModes), Deny keeps planning (the reason goes to the model).
	 */
	plan?: string;
	/** With plan: the modes besides default an approval may go on in. */
	planModes?: readonly PlanNextMode[];
	/**
	 * A bash call asking to run outside the sandbox (params.sandbox.escalation): the model's
	 * justification ('' when it gave none). Its "always" is offered only when pid scoped it to
	 * exactly this command.
	 */
	escalation?: { justification: string; command: string; wider?: string };
}

/** The title of a question to run a command outside the sandbox. */
export const ESCALATION_TITLE = 'Run outside the sandbox?';
/** What running outside the sandbox means, said with that question. */
export const ESCALATION_MEANS = 'pid asks to run this command without its sandbox: with all your rights (it can change or delete any file you can) and with the network.';

/** The tool by which the model in plan mode asks to leave it with a plan. */
export const EXIT_PLAN_MODE = 'exit_plan_mode';

/** Limits that keep a question readable in a modal dialog. */
export const MAX_DIFF_LINES = 80;
export const MAX_LINE_CHARS = 240;
const MAX_ARGS_CHARS = 2_000;

type Args = Record<string, unknown>;

function asObject(v: unknown): Args | undefined {
	return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Args) : undefined;
}

function str(v: unknown): string | undefined {
	return typeof v === 'string' ? v : undefined;
}

function cut(line: string): string {
	return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}

function lines(text: string): string[] {
	const ls = text.split('\n');
	if (ls.length > 1 && ls[ls.length - 1] === '') {
		ls.pop(); // a final newline ends the last line, it does not start one
	}
	return ls;
}

/** limit keeps the first MAX_DIFF_LINES lines and says how many were left out. */
function limit(out: string[]): string {
	if (out.length <= MAX_DIFF_LINES) {
		return out.join('\n');
	}
	const rest = out.length - MAX_DIFF_LINES;
	return [...out.slice(0, MAX_DIFF_LINES), `… ${rest} more line${rest === 1 ? '' : 's'}`].join('\n');
}

/** writeDiff shows a write's new content: every line added. */
export function writeDiff(path: string, content: string): string {
	const ls = content === '' ? [] : lines(content);
	const out = [`+++ ${path} (whole new content, ${ls.length} line${ls.length === 1 ? '' : 's'})`];
	for (const l of ls) {
		out.push(cut(`+${l}`));
	}
	if (ls.length === 0) {
		out.push('(empty file)');
	}
	return limit(out);
}

export interface Replacement {
	oldText: string;
	newText: string;
}

/** editDiff shows an edit's replacements: each one's old lines removed, new lines added. */
export function editDiff(path: string, edits: readonly Replacement[]): string {
	const out = [`--- ${path}`, `+++ ${path}`];
	edits.forEach((e, i) => {
		out.push(`@@ edit ${i + 1} of ${edits.length} @@`);
		for (const l of lines(e.oldText)) {
			out.push(cut(`-${l}`));
		}
		if (e.newText !== '') {
			for (const l of lines(e.newText)) {
				out.push(cut(`+${l}`));
			}
		}
	});
	return limit(out);
}

/** editReplacements reads edit's arguments: {path, edits: [{oldText, newText}]} or the older {path, oldText, newText}. */
export function editReplacements(args: Args): Replacement[] | undefined {
	const edits = args.edits;
	if (Array.isArray(edits)) {
		const out: Replacement[] = [];
		for (const e of edits) {
			const o = asObject(e);
			const oldText = o && str(o.oldText);
			const newText = o && str(o.newText);
			if (oldText === undefined || newText === undefined) {
				return undefined;
			}
			out.push({ oldText, newText });
		}
		return out.length > 0 ? out : undefined;
	}
	const oldText = str(args.oldText);
	const newText = str(args.newText);
	return oldText !== undefined && newText !== undefined ? [{ oldText, newText }] : undefined;
}

function argsText(args: unknown): string {
	let s: string;
	try {
		s = JSON.stringify(args, null, 2) ?? String(args);
	} catch {
		s = String(args);
	}
	return s.length > MAX_ARGS_CHARS ? `${s.slice(0, MAX_ARGS_CHARS)}… (${s.length - MAX_ARGS_CHARS} more characters)` : s;
}

/** scope reads params.always; anything without a description counts as absent. */
function scope(v: unknown): AlwaysScope | undefined {
	const o = asObject(v);
	const tool = o && str(o.tool);
	const description = o && str(o.description);
	if (tool === undefined || description === undefined || description.trim() === '') {
		return undefined;
	}
	const pattern = str(o?.pattern);
	return pattern === undefined ? { tool, description } : { tool, pattern, description };
}

/**
 * question turns a beforeToolCall request into what the user is asked. "Always allow" is
 * among the choices only when params.always says what it covers; the detail's last line says
 * what that is, or that it is not offered.
 */
export function question(params: BeforeToolCallParams): ApprovalQuestion {
	if (params.toolName === EXIT_PLAN_MODE) {
		return planQuestion(params);
	}
	if (isEscalation(params)) {
		return escalationQuestion(params);
	}
	const q = ask(params);
	const always = scope(params.always);
	if (always) {
		return { ...q, always, detail: `${q.detail}\n\n${ALWAYS_ALLOW} covers: ${always.description}.` };
	}
	return { ...q, choices: CHOICES_ONCE, detail: `${q.detail}\n\n${ALWAYS_ALLOW} is not offered: pid cannot limit it to calls like this one.` };
}

/** isEscalation reports whether a beforeToolCall asks to run a command outside the sandbox. */
export function isEscalation(params: BeforeToolCallParams): boolean {
	return asObject(params.sandbox)?.escalation === true;
}

/**
 * exactScope returns pid's "always" scope when it covers exactly this command ("exactly the
 * bash command `...`"), else undefined: leaving the sandbox "always" is offered for the very
 * command the person reads, never for every command starting with its words.
 */
export function exactScope(always: AlwaysScope | undefined): AlwaysScope | undefined {
	return always && /^exactly /.test(always.description) ? always : undefined;
}

/**
 * escalationQuestion is the question of a bash call asking to run outside the sandbox: its own
 * title, what that means, the model's justification, the command; "Always allow" only when pid
 * scoped it to exactly this command (for the session), else Allow (once) and Deny.
 */
export function escalationQuestion(params: BeforeToolCallParams): ApprovalQuestion {
	const args = asObject(params.args);
	const command = str(args?.command) ?? '';
	const justification = str(asObject(params.sandbox)?.justification) ?? '';
	const why = justification.trim() === '' ? '(the model gave no reason)' : justification.trim().split('\n').map((l) => `> ${l}`).join('\n');
	const wide = scope(params.always);
	const always = exactScope(wide);
	const base: ApprovalQuestion = {
		toolCallId: params.toolCallId,
		toolName: params.toolName,
		title: ESCALATION_TITLE,
		detail: `${ESCALATION_MEANS}\n\nWhy, in the model's words:\n${why}\n\n$ ${command}`,
		choices: always ? CHOICES : CHOICES_ONCE,
		escalation: { justification, command },
	};
	if (always) {
		return { ...base, always, detail: `${base.detail}\n\n${ALWAYS_ALLOW} covers: ${always.description}.` };
	}
	return {
		...base,
		...(wide ? { escalation: { justification, command, wider: wide.description } } : {}),
		detail: `${base.detail}\n\n${ALWAYS_ALLOW} is not offered: ${wide ? `it would cover more than this command (${wide.description})` : 'pid cannot limit it to this command'}.`,
	};
}

/**
 * planQuestion is exit_plan_mode's question: the plan, whole (never cut: it is what the person
 * approves), and no "always" (pid gives none for it).
 */
export function planQuestion(params: BeforeToolCallParams): ApprovalQuestion {
	const plan = str(asObject(params.args)?.plan) ?? '';
	return {
		toolCallId: params.toolCallId,
		toolName: params.toolName,
		title: 'pid has a plan: approve it to let pid carry it out, or keep planning',
		detail: plan.trim() === '' ? '(pid sent no plan text)' : plan,
		plan,
		planModes: PLAN_NEXT_MODES,
		choices: CHOICES_ONCE,
	};
}

function ask(params: BeforeToolCallParams): ApprovalQuestion {
	const { toolCallId, toolName } = params;
	const args = asObject(params.args);
	const path = args && str(args.path);
	const base = { toolCallId, toolName, choices: CHOICES };

	if (toolName === 'write' && args && path !== undefined && str(args.content) !== undefined) {
		const diff = writeDiff(path, str(args.content) as string);
		return { ...base, title: `pid wants to write ${path}`, detail: `Tool write (call ${toolCallId}) replaces or creates the file.\n\n${diff}`, diff };
	}
	if (toolName === 'edit' && args && path !== undefined) {
		const edits = editReplacements(args);
		if (edits) {
			const diff = editDiff(path, edits);
			return { ...base, title: `pid wants to edit ${path}`, detail: `Tool edit (call ${toolCallId}), ${edits.length} replacement${edits.length === 1 ? '' : 's'}.\n\n${diff}`, diff };
		}
	}
	if (toolName === 'bash' && args && str(args.command) !== undefined) {
		const command = str(args.command) as string;
		const rest = { ...args };
		delete rest.command;
		const extra = Object.keys(rest).length > 0 ? `\n\nOther arguments:\n${argsText(rest)}` : '';
		return { ...base, title: 'pid wants to run a command', detail: `Tool bash (call ${toolCallId}):\n\n$ ${command}${extra}` };
	}
	return {
		...base,
		title: path !== undefined ? `pid wants to run ${toolName} on ${path}` : `pid wants to run ${toolName}`,
		detail: `Tool ${toolName} (call ${toolCallId}) with arguments:\n${argsText(params.args)}`,
	};
}

/** The reason sent with a dismissed question (pid puts it after "The user denied this call of NAME: "). */
export const DISMISSED = 'the question was dismissed without an answer';
/** The reason sent with an answer that was none of the choices offered. */
export const NOT_OFFERED = 'the answer was none of the choices offered';

/**
 * answer turns the user's choice into pid's answer. undefined (the question was dismissed)
 * and anything unknown or not among the offered choices deny. mode, with Allow of a plan
 * (exit_plan_mode), is the mode pid goes on in: one of PLAN_NEXT_MODES, else default. A
 * reason is only what happened, never a sentence around it: pid frames a denial for the
 * model itself ("The user denied this call of NAME: REASON").
 */
export function answer(choice: string | undefined, toolName: string, offered: readonly string[] = CHOICES, mode?: string): BeforeToolCallAnswer {
	if (choice !== undefined && !offered.includes(choice)) {
		return { decision: 'deny', reason: NOT_OFFERED };
	}
	switch (choice) {
		case ALLOW:
			if (toolName === EXIT_PLAN_MODE && (PLAN_NEXT_MODES as readonly string[]).includes(mode ?? '')) {
				return { decision: 'allow', mode: mode as PlanNextMode };
			}
			return { decision: 'allow' };
		case ALWAYS_ALLOW:
			return { decision: 'allowAlways' };
		case DENY:
			return { decision: 'deny' };
		case undefined:
			return { decision: 'deny', reason: DISMISSED };
		default:
			return { decision: 'deny', reason: NOT_OFFERED };
	}
}
