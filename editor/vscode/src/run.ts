// Run turns the notifications of one session/prompt into an ordered log (what the output
// channel shows, in arrival order) and a state (each tool's status, the final answer).
// No `vscode` import: tests run this under plain node.

import {
	contentText,
	finalAnswer,
	type AssistantMessage,
	type BeforeToolCallAnswer,
	type LogMessageParams,
	type MessageParams,
	type PromptResult,
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
		this.add({ kind: 'prompt', line: `> ${text}`, text });
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
				const summary = argsSummary(s.args);
				this.add({ kind: 'toolStart', toolCallId: s.toolCallId, toolName: s.toolName, line: `[${s.toolCallId}] ${s.toolName} started${summary ? ` ${summary}` : ''}` });
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
				const head = `[${e.toolCallId}] ${e.toolName} ${e.isError ? 'failed' : 'done'}`;
				const shown = text.replace(/\n+$/, '');
				const body = shown === '' ? '' : shown.includes('\n') || shown.length > 100 ? `\n${indent(shorten(shown))}` : `: ${shown}`;
				this.add({ kind: 'toolEnd', toolCallId: e.toolCallId, toolName: e.toolName, isError: e.isError, text, line: head + body });
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
			default:
				// agentStart, turnStart, messageStart, messageUpdate, turnEnd, agentEnd: the
				// entries above already say what they mean to a person.
				break;
		}
		return true;
	}

	private assistant(m: AssistantMessage): void {
		const text = contentText(m.content).trim();
		const calls = (m.content ?? []).some((c) => c.type === 'toolCall');
		if (text !== '') {
			this.add(calls ? { kind: 'assistant', text, line: `pid: ${text}` } : { kind: 'answer', text, line: `\n${text}\n` });
		}
		if (m.stopReason === 'error' || m.stopReason === 'length') {
			const why = m.errorMessage ?? (m.stopReason === 'length' ? 'the answer hit the output-token limit' : 'the model failed');
			this.add({ kind: 'error', isError: true, text: why, line: `! ${why}` });
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
		this.add({ kind: 'approvalAnswered', toolCallId, toolName, text: a.decision, line: `[${toolCallId}] ${toolName} ${what}` });
	}

	/** finish takes the prompt's response. */
	finish(result: PromptResult): void {
		this.result = result;
		this.stopReason = result.stopReason;
		this.answer = finalAnswer(result.messages ?? []);
		this.state = result.stopReason === 'aborted' ? 'aborted' : result.stopReason === 'error' ? 'failed' : 'done';
		const tail = result.terminated ? ', a tool ended the run' : '';
		this.add({ kind: 'end', text: result.stopReason, line: `— ${this.state === 'aborted' ? 'cancelled' : this.state} (${result.stopReason}${tail}) —` });
	}

	/** fail records that the prompt request itself failed (pid died, a JSON-RPC error). */
	fail(message: string): void {
		this.state = 'failed';
		this.add({ kind: 'error', isError: true, text: message, line: `! ${message}` });
		this.add({ kind: 'end', text: 'failed', line: '— failed —' });
	}
}
