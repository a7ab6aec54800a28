// Run turns the notifications of one session/prompt into an ordered log (what the output
// channel shows, in arrival order) and a state (each tool's status, the final answer).
// No `vscode` import: tests run this under plain node.

import { RAN_OUTSIDE, escalated } from './escalation';
import {
	contentText,
	finalAnswer,
	type AssistantMessage,
	type BeforeToolCallAnswer,
	type CompactionEndParams,
	type CompactionItem,
	type CompactionStartParams,
	type LogMessageParams,
	type MessageParams,
	type PromptResult,
	type SessionItem,
	type StopReason,
	type ToolEndParams,
	type ToolResultMessage,
	type ToolStartParams,
	type ToolUpdateParams,
} from './protocol';

export type EntryKind =
	| 'prompt' // the user's text
	| 'toolStart'
	| 'toolUpdate' // $/toolUpdate progress
	| 'toolEnd'
	| 'approvalAsked'
	| 'approvalAnswered'
	| 'assistant' // assistant text that comes with tool calls
	| 'answer' // assistant text of a message without tool calls
	| 'error' // an assistant message that failed (stopReason error), a failed request
	| 'log' // window/logMessage
	| 'compaction' // compactionStart, compactionEnd, a compaction of a loaded transcript
	| 'end';

export interface Entry {
	kind: EntryKind;
	/** The entry as the output channel shows it (may span lines). */
	line: string;
	toolCallId?: string;
	toolName?: string;
	isError?: boolean;
	/** The full text (tool output, progress, answer) before shortening. */
	text?: string;
	/** approvalAnswered: the answer sent to pid, as sent. */
	answer?: BeforeToolCallAnswer;
}

export type ToolStatus = 'running' | 'ok' | 'error';

export interface ToolState {
	toolCallId: string;
	toolName: string;
	args: unknown;
	status: ToolStatus;
	updates: string[];
	output?: string;
}

export type RunState = 'running' | 'done' | 'aborted' | 'failed';

/** Limits of what one entry shows of a tool's output. */
export const MAX_OUTPUT_LINES = 8;
export const MAX_OUTPUT_CHARS = 800;

/** shorten keeps the first lines of a text and says how much was left out. */
export function shorten(text: string, maxLines = MAX_OUTPUT_LINES, maxChars = MAX_OUTPUT_CHARS): string {
	let ls = text.replace(/\n+$/, '').split('\n');
	let more = 0;
	if (ls.length > maxLines) {
		more = ls.length - maxLines;
		ls = ls.slice(0, maxLines);
	}
	let s = ls.join('\n');
	if (s.length > maxChars) {
		s = `${s.slice(0, maxChars)}…`;
	}
	return more > 0 ? `${s}\n… (${more} more line${more === 1 ? '' : 's'})` : s;
}

function indent(text: string, prefix = '    '): string {
	return text.split('\n').map((l) => prefix + l).join('\n');
}

/** argsSummary shows short string and number arguments as key=value on one line. */
export function argsSummary(args: unknown): string {
	if (args === null || typeof args !== 'object' || Array.isArray(args)) {
		return args === undefined ? '' : JSON.stringify(args).slice(0, 120);
	}
	const parts: string[] = [];
	for (const [k, v] of Object.entries(args as Record<string, unknown>)) {
		if (typeof v === 'string') {
			const first = v.split('\n')[0];
			const short = first.length > 60 ? first.slice(0, 60) : first;
			parts.push(`${k}=${JSON.stringify(short)}${short !== v ? '…' : ''}`);
		} else if (typeof v === 'number' || typeof v === 'boolean') {
			parts.push(`${k}=${v}`);
		} else if (Array.isArray(v)) {
			parts.push(`${k}=[${v.length}]`);
		}
	}
	return parts.join(' ');
}

// The entries below are shared by a live run (from pid's notifications) and a loaded
// transcript (from session/load's items), so that both read the same.

function toolStartEntry(toolCallId: string, toolName: string, args: unknown): Entry {
	const summary = argsSummary(args);
	return { kind: 'toolStart', toolCallId, toolName, line: `[${toolCallId}] ${toolName} started${summary ? ` ${summary}` : ''}` };
}

function toolEndEntry(toolCallId: string, toolName: string, text: string, isError: boolean, details?: unknown): Entry {
	const head = `[${toolCallId}] ${toolName} ${isError ? 'failed' : 'done'}${escalated(details) ? ` (${RAN_OUTSIDE})` : ''}`;
	const shown = text.replace(/\n+$/, '');
	const body = shown === '' ? '' : shown.includes('\n') || shown.length > 100 ? `\n${indent(shorten(shown))}` : `: ${shown}`;
	return { kind: 'toolEnd', toolCallId, toolName, isError, text, line: head + body };
}

/** The entries of a finished assistant message: its text, and why it failed when it did. */
function assistantEntries(m: AssistantMessage): Entry[] {
	const out: Entry[] = [];
	const text = contentText(m.content).trim();
	const calls = (m.content ?? []).some((c) => c?.type === 'toolCall');
	if (text !== '') {
		out.push(calls ? { kind: 'assistant', text, line: `pid: ${text}` } : { kind: 'answer', text, line: `\n${text}\n` });
	}
	if (m.stopReason === 'error' || m.stopReason === 'length') {
		const why = m.errorMessage ?? (m.stopReason === 'length' ? 'the answer hit the output-token limit' : 'the model failed');
		out.push({ kind: 'error', isError: true, text: why, line: `! ${why}` });
	}
	return out;
}

function promptEntry(text: string): Entry {
	return { kind: 'prompt', line: `> ${text}`, text };
}

function stateOf(stopReason: StopReason | undefined): RunState {
	return stopReason === 'aborted' ? 'aborted' : stopReason === 'error' ? 'failed' : 'done';
}

function endEntry(stopReason: StopReason, terminated?: boolean): Entry {
	const state = stateOf(stopReason);
	const tail = terminated ? ', a tool ended the run' : '';
	return { kind: 'end', text: stopReason, line: `— ${state === 'aborted' ? 'cancelled' : state} (${stopReason}${tail}) —` };
}

const REASONS: Record<string, string> = {
	manual: 'on request',
	threshold: 'it neared the context window',
	overflow: 'the model said it was too long',
};

function reasonText(reason: unknown): string {
	return REASONS[String(reason)] ?? String(reason);
}

function tokensText(tokensBefore: unknown): string {
	return typeof tokensBefore === 'number' && tokensBefore > 0 ? `, ${tokensBefore} tokens before` : '';
}

/**
 * compactedEntry says that the conversation was compacted and what the model sees instead of
 * the older messages: the summary, indented, whole (it is what the model goes on from).
 */
function compactedEntry(reason: unknown, tokensBefore: unknown, summary: unknown): Entry {
	const text = typeof summary === 'string' ? summary.replace(/\n+$/, '') : '';
	const head = `pid: the conversation was compacted (${reasonText(reason)}${tokensText(tokensBefore)}); the model now sees this summary instead of the older messages:`;
	return { kind: 'compaction', text, line: text === '' ? `${head} (empty)` : `${head}\n${indent(text)}` };
}

/**
 * transcriptEntries renders a loaded session's items (session/load's messages) in the format
 * of a live run: each user text as a prompt, the assistant's text, each tool call as started
 * and its result as done or failed, an end line where the assistant stopped, and each
 * compaction with its summary. Items that are not objects, and unknown roles, are skipped.
 */
export function transcriptEntries(items: readonly SessionItem[]): Entry[] {
	const out: Entry[] = [];
	const names = new Map<string, string>();
	let open = false; // a prompt's exchange that has not ended yet
	let aborted = false; // the last tool result of the exchange is pid's "Operation aborted"
	const unfinished = () => {
		if (open) {
			// The exchange ended without a final answer: cancelled while tools ran (as the live
			// run said), or pid stopped. (A steered message also lands here, as a new prompt.)
			out.push(aborted ? endEntry('aborted') : { kind: 'end', text: 'unfinished', line: '— ended before the model answered (pid stopped?) —' });
			open = false;
		}
	};
	for (const item of items ?? []) {
		if (item === null || typeof item !== 'object') {
			continue;
		}
		switch (item.role) {
			case 'user': {
				unfinished();
				out.push(promptEntry(contentText(item.content)));
				open = true;
				break;
			}
			case 'assistant': {
				out.push(...assistantEntries(item));
				let calls = 0;
				for (const c of item.content ?? []) {
					if (c?.type === 'toolCall') {
						calls++;
						names.set(c.id, c.name);
						out.push(toolStartEntry(c.id, c.name, c.arguments));
					}
				}
				// The run stops at an answer without tool calls, a failed call and a cancel; a
				// reply cut off with tool calls goes on (their results ask the model again).
				if (calls === 0 || item.stopReason === 'aborted' || item.stopReason === 'error') {
					out.push(endEntry(item.stopReason ?? 'stop'));
					open = false;
				}
				break;
			}
			case 'toolResult': {
				const name = item.toolName ?? names.get(item.toolCallId) ?? 'tool';
				const text = contentText(item.content);
				out.push(toolEndEntry(item.toolCallId, name, text, item.isError === true, item.details));
				aborted = item.isError === true && text === 'Operation aborted';
				break;
			}
			case 'compaction': {
				const c = item as CompactionItem;
				out.push(compactedEntry(c.reason, c.tokensBefore, c.summary));
				break;
			}
			default:
				break;
		}
	}
	unfinished();
	return out;
}

export class Run {
	readonly entries: Entry[] = [];
	readonly tools = new Map<string, ToolState>();
	/** Tool-result messages in the order pid announced them: source order. */
	readonly results: ToolResultMessage[] = [];
	state: RunState = 'running';
	stopReason: StopReason | undefined;
	/** The final answer: the last assistant message's text, once the prompt answered. */
	answer: string | undefined;
	result: PromptResult | undefined;

	constructor(
		readonly sessionId: string,
		readonly text: string,
		private readonly onEntry?: (entry: Entry) => void,
	) {
		this.add(promptEntry(text));
	}

	/** The log as lines, in order. */
	lines(): string[] {
		return this.entries.map((e) => e.line);
	}

	private add(e: Entry): void {
		this.entries.push(e);
		this.onEntry?.(e);
	}

	/**
	 * handle takes one notification from pid. It returns false for notifications of other
	 * sessions (window/logMessage has no session and is always taken).
	 */
	handle(method: string, params: unknown): boolean {
		const p = (params ?? {}) as { sessionId?: string };
		if (method === 'window/logMessage') {
			const lm = params as LogMessageParams;
			const level = ['', 'error', 'warning', 'info', 'log'][lm.type] ?? 'log';
			this.add({ kind: 'log', line: `! pid ${level}: ${lm.message}`, text: lm.message });
			return true;
		}
		if (p.sessionId !== this.sessionId) {
			return false;
		}
		switch (method) {
			case 'toolStart': {
				const s = params as ToolStartParams;
				this.tools.set(s.toolCallId, { toolCallId: s.toolCallId, toolName: s.toolName, args: s.args, status: 'running', updates: [] });
				this.add(toolStartEntry(s.toolCallId, s.toolName, s.args));
				break;
			}
			case '$/toolUpdate': {
				const u = params as ToolUpdateParams;
				const text = contentText(u.partialResult?.content);
				this.tools.get(u.toolCallId)?.updates.push(text);
				const last = text.replace(/\n+$/, '').split('\n').pop() ?? '';
				this.add({ kind: 'toolUpdate', toolCallId: u.toolCallId, toolName: u.toolName, text, line: `[${u.toolCallId}] ${u.toolName} … ${shorten(last, 1, 200)}` });
				break;
			}
			case 'toolEnd': {
				const e = params as ToolEndParams;
				const text = contentText(e.result?.content);
				const t = this.tools.get(e.toolCallId);
				if (t) {
					t.status = e.isError ? 'error' : 'ok';
					t.output = text;
				}
				this.add(toolEndEntry(e.toolCallId, e.toolName, text, e.isError, e.result?.details));
				break;
			}
			case 'messageEnd': {
				const m = (params as MessageParams).message;
				if (m?.role === 'toolResult') {
					this.results.push(m);
				} else if (m?.role === 'assistant') {
					this.assistant(m);
				}
				break;
			}
			case 'compactionStart': {
				const c = params as CompactionStartParams;
				this.add({ kind: 'compaction', text: String(c.reason), line: `pid: compacting the conversation (${reasonText(c.reason)})…` });
				break;
			}
			case 'compactionEnd': {
				const c = params as CompactionEndParams;
				if (typeof c.error === 'string' && c.error !== '') {
					this.add({ kind: 'compaction', isError: true, text: c.error, line: `! the conversation was not compacted (${reasonText(c.reason)}): ${c.error}` });
				} else {
					this.add(compactedEntry(c.reason, c.tokensBefore, c.summary));
				}
				break;
			}
			default:
				// agentStart, turnStart, messageStart, messageUpdate, turnEnd, agentEnd: the
				// entries above already say what they mean to a person.
				break;
		}
		return true;
	}

	private assistant(m: AssistantMessage): void {
		for (const e of assistantEntries(m)) {
			this.add(e);
		}
	}

	/** approvalAsked records that the user is being asked about a call. */
	approvalAsked(toolCallId: string, toolName: string, title: string): void {
		this.add({ kind: 'approvalAsked', toolCallId, toolName, text: title, line: `[${toolCallId}] ${toolName} waits for approval: ${title}` });
	}

	/**
	 * approvalAnswered records the answer sent to pid (withdrawn: pid cancelled the question;
	 * scope: what an always answer covers, shown with one).
	 */
	approvalAnswered(toolCallId: string, toolName: string, a: BeforeToolCallAnswer, withdrawn = false, scope?: string): void {
		let what = withdrawn
			? 'approval withdrawn (the prompt was cancelled)'
			: { allow: 'allowed', allowAlways: 'always allowed', deny: 'denied', denyAlways: 'always denied' }[a.decision] ?? a.decision;
		if (!withdrawn && scope && (a.decision === 'allowAlways' || a.decision === 'denyAlways')) {
			what += `: ${scope}`;
		}
		this.add({ kind: 'approvalAnswered', toolCallId, toolName, text: a.decision, answer: a, line: `[${toolCallId}] ${toolName} ${what}` });
	}

	/** finish takes the prompt's response. */
	finish(result: PromptResult): void {
		this.result = result;
		this.stopReason = result.stopReason;
		this.answer = finalAnswer(result.messages ?? []);
		this.state = stateOf(result.stopReason);
		this.add(endEntry(result.stopReason, result.terminated));
	}

	/** fail records that the prompt request itself failed (pid died, a JSON-RPC error). */
	fail(message: string): void {
		this.state = 'failed';
		this.add({ kind: 'error', isError: true, text: message, line: `! ${message}` });
		this.add({ kind: 'end', text: 'failed', line: '— failed —' });
	}
}
