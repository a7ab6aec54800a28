// ChatCards is the chat's tool cards, without VS Code: one card per call of the run (or of the
// loaded transcript), updated in place from toolStart to toolEnd; a subagent's calls as steps
// folded under its task's card; and the questions pid asks on them: an approval on its call's
// card (a plan whole, leaving the sandbox as its own question), an MCP server's question as a
// form. ChatModel (chat.ts) feeds it pid's notifications.

import * as path from 'node:path';
import { ALLOW, ALWAYS_ALLOW, DENY, ESCALATION_MEANS, EXIT_PLAN_MODE, type ApprovalQuestion } from './approval';
import { ChatItems } from './chatItems';
import { claimsText, lastLine, obj, planTitle, problemViews, toolTitle } from './chatText';
import { formContent, formFields } from './elicit';
import { escalated, refusal } from './escalation';
import { worktreeConflicts } from './skills';
import { DEFAULT_MODES, modeView } from './modes';
import { contentText, type BeforeToolCallParams, type ElicitationParams, type ElicitationResult, type Message } from './protocol';
import type { ElicitationItem, ToolItem } from './webviewProtocol';

/** An answer the view gives to an approval. */
export interface ApprovalChoice {
	choice: string;
	reason?: string;
	/** With Allow of a plan: the mode pid goes on in (one of the approval's planModes). */
	mode?: string;
}

const RESULT_ABORTED = 'Operation aborted';

/**
 * ChatCards holds the chat's tool cards and the questions on them (see the file's comment).
 * Used from the extension host's one thread; its methods never throw on odd input from pid.
 */
export class ChatCards extends ChatItems {
	/** Tool items of the current run (or the loaded transcript) by toolCallId. */
	protected tools = new Map<string, ToolItem>();
	protected readonly approvals = new Map<string, (c: ApprovalChoice | undefined) => void>();
	protected readonly elicitations = new Map<string, { item: ElicitationItem; resolve: (r: ElicitationResult) => void }>();
	/** The running (and ended) subagents of the session: the task call's card by child session. */
	protected children = new Map<string, ToolItem>();
	/** The commands of the chat's bash cards, by item id (a question to leave the sandbox names the one refused before). */
	protected commands = new Map<string, string>();

	protected override forget(): void {
		super.forget();
		this.tools = new Map();
		this.children = new Map();
		this.commands = new Map();
	}

	/** The tool card of a call of the current run or transcript. */
	tool(toolCallId: string): ToolItem | undefined {
		return this.tools.get(toolCallId);
	}

	protected toolStart(toolCallId: string, toolName: string, args: unknown, parent?: ToolItem): ToolItem {
		const existing = this.tools.get(toolCallId);
		if (existing) {
			return existing;
		}
		const a = obj(args);
		const p = a && typeof a.path === 'string' ? a.path : undefined;
		const abs = p === undefined || p === '' ? undefined : path.isAbsolute(p) ? p : this.folder ? path.resolve(this.folder, p) : undefined;
		const plan = toolName === EXIT_PLAN_MODE && a && typeof a.plan === 'string' ? a.plan : undefined;
		const title = plan !== undefined ? planTitle(plan) : toolTitle(toolName, args, this.folder);
		const item = this.add<ToolItem>({ kind: 'tool', id: this.id('t'), toolCallId, toolName, title, status: 'preparing', ...(abs ? { path: abs } : {}), ...(plan !== undefined ? { plan } : {}), ...(parent ? { parentId: parent.id } : {}) });
		this.tools.set(toolCallId, item);
		if (toolName === 'bash' && a && typeof a.command === 'string') {
			this.commands.set(item.id, a.command);
		}
		return item;
	}

	// --- subagents ----------------------------------------------------------------------------

	/** Reports whether sessionId is a child (subagent) of this chat's session: its notifications go to handleChild. */
	isChild(sessionId: unknown): boolean {
		return typeof sessionId === 'string' && this.children.has(sessionId);
	}

	/** The key of a child's tool call among the chat's tool cards (its ids may repeat the parent's). */
	protected childKey(childSessionId: string, toolCallId: string): string {
		return `${childSessionId}/${toolCallId}`;
	}

	/**
	 * approvalKey is the key of the card a beforeToolCall asks on: the call's id, or for a
	 * subagent's call (sessionId a child's, parentSessionId set) the child's and the call's.
	 */
	approvalKey(params: BeforeToolCallParams): string {
		return this.isChild(params?.sessionId) ? this.childKey(params.sessionId, params.toolCallId) : params.toolCallId;
	}

	/**
	 * handleChild takes one notification of a subagent's own session: its tool calls become
	 * steps on its task call's card (folded under it); its messages are left out (the task's
	 * $/toolUpdate says what it said).
	 */
	handleChild(childSessionId: string, method: string, params: unknown): void {
		const card = this.children.get(childSessionId);
		const p = obj(params);
		if (!card || !p || typeof p.toolCallId !== 'string') {
			return;
		}
		const key = this.childKey(childSessionId, p.toolCallId);
		switch (method) {
			case 'toolStart': {
				if (!this.tools.has(key)) {
					this.childStep(card, key, String(p.toolName ?? 'tool'), p.args);
				}
				break;
			}
			case 'toolExecutionStart': {
				const t = this.tools.get(key);
				if (t) {
					t.status = 'running';
					this.update(t);
				}
				break;
			}
			case '$/toolUpdate': {
				const t = this.tools.get(key);
				if (t) {
					const text = contentText((obj(p.partialResult)?.content as Message['content']) ?? []);
					t.output = text;
					t.lastLine = lastLine(text) || t.lastLine;
					if (t.status === 'preparing' || t.status === 'waiting') {
						t.status = 'running';
					}
					this.update(t);
				}
				break;
			}
			case 'toolEnd': {
				if (!this.tools.has(key)) {
					this.childStep(card, key, String(p.toolName ?? 'tool'), {});
				}
				const r = obj(p.result);
				this.toolEnd(key, String(p.toolName ?? 'tool'), contentText((r?.content as Message['content']) ?? []), p.isError === true, r?.details);
				break;
			}
			default:
				break;
		}
	}

	/** childStep adds a subagent's tool call under its task's card and counts it there. */
	protected childStep(card: ToolItem, key: string, toolName: string, args: unknown): ToolItem {
		const t = this.toolStart(key, toolName, args, card);
		if (card.subagent) {
			card.subagent.steps++;
			this.update(card);
		}
		return t;
	}

	protected toolEnd(toolCallId: string, toolName: string, text: string, isError: boolean, details?: unknown): void {
		const t = this.tools.get(toolCallId) ?? this.toolStart(toolCallId, toolName, {});
		t.output = text;
		const problems = problemViews(obj(details)?.diagnostics, this.folder);
		if (problems) {
			t.problems = problems;
		}
		if (escalated(details)) {
			t.escalated = true;
		}
		const conflicts = worktreeConflicts(details);
		if (t.subagent && conflicts.length > 0) {
			t.subagent.conflicts = conflicts;
		}
		if (isError && text === RESULT_ABORTED) {
			t.status = 'cancelled';
		} else if (isError && t.approval && (t.approval.state === 'denied' || t.approval.state === 'withdrawn')) {
			t.status = t.approval.state === 'denied' ? 'denied' : 'cancelled';
		} else if (isError && /^The user denied|denied by the permissions/.test(text)) {
			t.status = 'denied';
		} else {
			t.status = isError ? 'failed' : 'done';
		}
		this.update(t);
	}

	// --- approvals ----------------------------------------------------------------------------

	/**
	 * askApproval shows the question on the call's card (created if pid sent no toolStart) and
	 * resolves to the person's answer: the choice (Allow, Always allow, Deny) and a reason, or
	 * undefined when the question was withdrawn (the token). It never rejects.
	 */
	askApproval(params: BeforeToolCallParams, q: ApprovalQuestion, canReview: boolean): Promise<ApprovalChoice | undefined> {
		const key = this.approvalKey(params);
		const card = this.isChild(params.sessionId) ? this.children.get(params.sessionId) : undefined;
		const t = this.tools.get(key) ?? (card ? this.childStep(card, key, params.toolName, params.args) : this.toolStart(params.toolCallId, params.toolName, params.args));
		if (card?.subagent) {
			t.askedBy = `the subagent of the task "${card.subagent.description}" (${card.subagent.agent})`;
		}
		if (q.plan !== undefined) {
			// The plan is shown whole on the card, rendered (viewOf); the approval holds its choices.
			t.plan = q.plan;
			t.title = planTitle(q.plan);
			t.approval = { state: 'pending', title: q.title, detail: '', canReview: false, planModes: (q.planModes ?? []).map((m) => modeView(DEFAULT_MODES, m)) };
		} else if (q.escalation) {
			// Leaving the sandbox: what it means, why, what the sandbox refused before, the command.
			const refused = this.lastRefusal(t);
			t.approval = {
				state: 'pending',
				title: q.title,
				detail: `$ ${q.escalation.command}`,
				...(q.always ? { always: q.always.description } : {}),
				canReview: false,
				escalation: { means: ESCALATION_MEANS, justification: q.escalation.justification, command: q.escalation.command, ...(q.escalation.wider ? { wider: q.escalation.wider } : {}), ...(refused ? { refused } : {}) },
			};
		} else {
			const detail = q.diff ?? (params.toolName === 'bash' && typeof obj(params.args)?.command === 'string' ? `$ ${obj(params.args)?.command as string}` : q.detail.split('\n\n').slice(0, -1).join('\n\n'));
			t.approval = {
				state: 'pending',
				title: q.title,
				detail,
				...(q.always ? { always: q.always.description } : {}),
				canReview,
				...(claimsText(params.annotations) ? { claims: claimsText(params.annotations) } : {}),
			};
		}
		t.status = 'waiting';
		const answered = new Promise<ApprovalChoice | undefined>((resolve) => {
			this.approvals.set(key, resolve);
		});
		this.update(t);
		this.refreshWaiting();
		return answered;
	}

	/**
	 * lastRefusal returns what the sandbox refused last in the session of card t (the
	 * session's own calls, or a subagent's steps under its task): the newest finished bash
	 * card before t whose result holds pid's sandbox note, with its command; undefined when
	 * there is none.
	 */
	protected lastRefusal(t: ToolItem): { command: string; lines: string[]; note: string } | undefined {
		const at = this.items.indexOf(t);
		for (let i = (at < 0 ? this.items.length : at) - 1; i >= 0; i--) {
			const it = this.items[i];
			if (it.kind !== 'tool' || it.toolName !== 'bash' || it.parentId !== t.parentId || (it.status !== 'done' && it.status !== 'failed')) {
				continue;
			}
			const r = refusal(it.output);
			if (r) {
				return { command: this.commands.get(it.id) ?? it.title.replace(/^\$ /, ''), ...r };
			}
		}
		return undefined;
	}

	/** The calls whose approval is pending. */
	pendingApprovals(): string[] {
		return [...this.approvals.keys()];
	}

	/**
	 * firstPendingApproval returns the card whose approval the approval commands (and their
	 * keys) answer: the first pending one in the chat's order, which the view marks with the
	 * keys; undefined when none is pending.
	 */
	firstPendingApproval(): ToolItem | undefined {
		for (const it of this.items) {
			if (it.kind === 'tool' && it.approval?.state === 'pending' && this.approvals.has(it.toolCallId)) {
				return it;
			}
		}
		return undefined;
	}

	/**
	 * answerApproval answers a pending approval (a click in the view): choice is Allow, Always
	 * allow or Deny. It reports whether a question was pending for that call; Always allow is
	 * refused (false) when it was not offered. mode, with Allow of a plan, is the mode pid goes
	 * on in: one of the approval's planModes (refused, false, otherwise); absent: default.
	 */
	answerApproval(toolCallId: string, choice: string, reason?: string, mode?: string): boolean {
		const resolve = this.approvals.get(toolCallId);
		const t = this.tools.get(toolCallId);
		if (!resolve || !t?.approval) {
			return false;
		}
		if (![ALLOW, ALWAYS_ALLOW, DENY].includes(choice) || (choice === ALWAYS_ALLOW && t.approval.always === undefined)) {
			return false;
		}
		const planModes = t.approval.planModes;
		const next = choice === ALLOW && mode !== undefined && mode !== 'default' ? planModes?.find((m) => m.id === mode) : undefined;
		if (choice === ALLOW && mode !== undefined && mode !== 'default' && !next) {
			return false;
		}
		this.approvals.delete(toolCallId);
		t.approval.state = choice === ALLOW ? 'allowed' : choice === ALWAYS_ALLOW ? 'allowedAlways' : 'denied';
		if (planModes && choice === ALLOW) {
			t.approval.approvedMode = next ?? modeView(DEFAULT_MODES, 'default');
		}
		const r = reason?.trim();
		if (choice === DENY && r) {
			t.approval.reason = r;
		}
		t.status = choice === DENY ? 'denied' : 'running';
		this.update(t);
		this.refreshWaiting();
		resolve(r && choice === DENY ? { choice, reason: r } : next ? { choice, mode: next.id } : { choice });
		return true;
	}

	/** withdrawApproval marks a question pid withdrew (the prompt was cancelled). */
	withdrawApproval(toolCallId: string): void {
		const resolve = this.approvals.get(toolCallId);
		this.approvals.delete(toolCallId);
		const t = this.tools.get(toolCallId);
		if (t?.approval?.state === 'pending') {
			t.approval.state = 'withdrawn';
			this.update(t);
		}
		this.refreshWaiting();
		resolve?.(undefined);
	}

	protected refreshWaiting(): void {
		const waiting = this.approvals.size > 0 || [...this.elicitations.values()].some((e) => e.item.state === 'pending');
		if (waiting && this.state.status !== 'approval') {
			this.setState({ status: 'approval' });
		} else if (!waiting && this.state.status === 'approval') {
			this.setState({ status: this.state.running ? 'working' : 'idle' });
		}
	}

	// --- MCP questions ------------------------------------------------------------------------

	/**
	 * askElicitation shows an MCP server's question as a form and resolves to the MCP answer:
	 * accept with the content, decline, or cancel when pid withdrew it (the token). It never
	 * rejects.
	 */
	askElicitation(params: ElicitationParams, onWithdraw: (cb: () => void) => void): Promise<ElicitationResult> {
		const meta = obj(obj(params?._meta)?.pid);
		const item = this.add<ElicitationItem>({
			kind: 'elicitation',
			id: this.id('e'),
			message: typeof params?.message === 'string' ? params.message : '(the server asks without saying what)',
			...(typeof meta?.server === 'string' ? { server: meta.server } : {}),
			...(typeof meta?.toolCallId === 'string' ? { toolCallId: meta.toolCallId } : {}),
			fields: formFields(params?.requestedSchema),
			state: 'pending',
		});
		const p = new Promise<ElicitationResult>((resolve) => {
			this.elicitations.set(item.id, { item, resolve });
		});
		onWithdraw(() => {
			const e = this.elicitations.get(item.id);
			if (e) {
				this.elicitations.delete(item.id);
				item.state = 'cancelled';
				this.update(item);
				this.refreshWaiting();
				e.resolve({ action: 'cancel' });
			}
		});
		this.refreshWaiting();
		return p;
	}

	/**
	 * answerElicitation answers a pending question: accept with the form's values (checked
	 * against the schema: the problems are returned, and shown, when they do not fit) or
	 * decline. It returns undefined when it answered, the problems otherwise, and
	 * ['no such question'] when none is pending with that id.
	 */
	answerElicitation(id: string, action: 'accept' | 'decline', values: Record<string, unknown> = {}): string[] | undefined {
		const e = this.elicitations.get(id);
		if (!e) {
			return ['no such question'];
		}
		if (action === 'decline') {
			this.elicitations.delete(id);
			e.item.state = 'declined';
			delete e.item.problems;
			this.update(e.item);
			this.refreshWaiting();
			e.resolve({ action: 'decline' });
			return undefined;
		}
		const r = formContent(e.item.fields, values);
		if (!r.ok) {
			e.item.problems = r.problems;
			this.update(e.item);
			return r.problems;
		}
		this.elicitations.delete(id);
		e.item.state = 'accepted';
		delete e.item.problems;
		this.update(e.item);
		this.refreshWaiting();
		e.resolve({ action: 'accept', content: r.content });
		return undefined;
	}

}
