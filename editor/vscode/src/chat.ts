// ChatModel is what the chat view shows, without VS Code: the conversation as items (the
// person's messages, the model's answers as they stream, tool cards updated in place with
// their approval, MCP questions, notices, the files a run changed), the state (idle, working,
// waiting for approval, stopped), and the questions waiting for a click. The controller feeds
// it pid's notifications and requests; the view (chatview.ts and webview/chat.ts) renders it
// and sends clicks back. No `vscode` import: tests drive it under plain node.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { ALLOW, ALWAYS_ALLOW, DENY, ESCALATION_MEANS, EXIT_PLAN_MODE, type ApprovalQuestion } from './approval';
import type { ChangedFile } from './changes';
import { relativeLabel, type ContextChip } from './context';
import { formContent, formFields } from './elicit';
import { escalated, refusal } from './escalation';
import { modelError } from './errors';
import { renderMarkdown } from './markdown';
import { DEFAULT_MODES, modeView } from './modes';
import {
	contentText,
	type AssistantMessage,
	type BeforeToolCallParams,
	type CommandInfo,
	type CommandOutputParams,
	type CompactionEndParams,
	type CompactionItem,
	type Diagnostic,
	type PlanUpdateParams,
	type SubagentEndParams,
	type SubagentStartParams,
	type UsageUpdateParams,
	type ElicitationParams,
	type ElicitationResult,
	type InstructionFile,
	type Message,
	type MessageParams,
	type MessageUpdateParams,
	type SessionItem,
	type ToolAnnotations,
	type ToolEndParams,
	type ToolStartParams,
	type ToolUpdateParams,
} from './protocol';
import type {
	AssistantItem,
	ChangesFileView,
	ChangesItem,
	ChatItem,
	ChatState,
	ChipView,
	CommandItem,
	CommandView,
	CompactionView,
	ElicitationItem,
	InstructionFileView,
	InstructionsItem,
	ItemView,
	NoticeAction,
	NoticeItem,
	PlanEntryView,
	PlanItem,
	ProblemView,
	QueueMode,
	ToolItem,
	UserItem,
} from './webviewProtocol';

// The chat's items and state are what the view receives: their types live with the view's messages.
export type { ApprovalState, ApprovalView, AssistantItem, ChangesFileView, ChangesItem, ChatItem, ChatState, ChatStatus, ChipView, CommandItem, CommandView, CompactionView, ElicitationItem, ElicitationState, InstructionFileView, InstructionsItem, ItemView, ModeView, NoticeAction, NoticeItem, PlanItem, ProblemView, QueueMode, SubagentView, ToolItem, ToolStatus, UsageView, UserItem } from './webviewProtocol';

/** The built-in commands of pid (docs/protocol.md), offered by the `/` completion before a session lists its own. */
export const BUILTIN_COMMANDS: CommandView[] = [
	{ name: 'compact', description: 'Compact the conversation now', hint: 'focus' },
	{ name: 'init', description: 'Write AGENTS.md for this repository' },
	{ name: 'review', description: 'Review the uncommitted changes (or those since base)', hint: 'base' },
	{ name: 'plan', description: 'Show the plan' },
	{ name: 'mode', description: 'Switch the mode, or list the modes', hint: 'NAME' },
	{ name: 'model', description: 'Switch the model, or list the models', hint: 'PROVIDER/ID' },
	{ name: 'mcp', description: "The MCP servers' status" },
	{ name: 'rewind', description: 'Files and conversation back to before the previous prompt' },
	{ name: 'help', description: 'List the commands' },
];

/** commandViews turns commands/list's entries into the completion's. */
export function commandViews(list: readonly CommandInfo[]): CommandView[] {
	return list
		.filter((c) => c && typeof c.name === 'string' && c.name !== '')
		.map((c) => ({ name: c.name, description: typeof c.description === 'string' ? c.description : '', ...(c.input && typeof c.input.hint === 'string' ? { hint: c.input.hint } : {}) }));
}

/** problemViews turns a tool result's details.diagnostics into the card's problems (errors first, then by position). */
export function problemViews(diags: unknown, folder?: string): ProblemView[] | undefined {
	if (!Array.isArray(diags)) {
		return undefined;
	}
	const sev = ['error', 'error', 'warning', 'info', 'hint'] as const;
	const out: ProblemView[] = [];
	for (const d of diags as Diagnostic[]) {
		const start = d?.range?.start;
		if (!d || typeof d.message !== 'string' || typeof start?.line !== 'number') {
			continue;
		}
		out.push({
			label: typeof d.path === 'string' ? relativeLabel(d.path, folder) : '',
			line: start.line + 1,
			column: (typeof start.character === 'number' ? start.character : 0) + 1,
			severity: sev[d.severity] ?? 'error',
			message: d.message.replace(/\s*\n\s*/g, ' '),
			...(typeof d.source === 'string' && d.source !== '' ? { source: d.source } : {}),
		});
	}
	const rank = { error: 0, warning: 1, info: 2, hint: 3 };
	return out.sort((a, b) => rank[a.severity] - rank[b.severity] || a.line - b.line || a.column - b.column);
}

/** usageText is the context meter in words: `48.2k / 200k tokens (24%) · $0.19`. */
export function usageText(u: { used: number; size: number; cost?: { amount: number; currency: string } }): string {
	const k = (n: number) => (n >= 1_000_000 ? `${+(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${+(n / 1000).toFixed(1)}k` : String(Math.round(n)));
	const pct = u.size > 0 ? Math.round((100 * u.used) / u.size) : 0;
	const cost = u.cost && typeof u.cost.amount === 'number' ? ` · ${u.cost.currency === 'USD' ? '$' : `${u.cost.currency} `}${u.cost.amount < 0.01 && u.cost.amount > 0 ? u.cost.amount.toFixed(4) : u.cost.amount.toFixed(2)}` : '';
	return `${k(u.used)} / ${k(u.size)} tokens (${pct}%)${cost}`;
}

/** An answer the view gives to an approval. */
export interface ApprovalChoice {
	choice: string;
	reason?: string;
	/** With Allow of a plan: the mode pid goes on in (one of the approval's planModes). */
	mode?: string;
}

export type ChatEvent = { type: 'upsert'; item: ChatItem } | { type: 'remove'; id: string } | { type: 'reset' } | { type: 'state' };

type Listener = (e: ChatEvent) => void;

/** viewOf renders an item for the view: an answer's markdown, and a plan's on its tool card, as safe HTML. */
export function viewOf(item: ChatItem): ItemView {
	if (item.kind === 'assistant') {
		return { ...item, html: renderMarkdown(item.text) };
	}
	if (item.kind === 'tool' && item.plan !== undefined) {
		return { ...item, html: renderMarkdown(item.plan) };
	}
	return item;
}

/** sizeText is a file's size for people: bytes below 1 KB, else KB or MB (of 1024) with one decimal, none when whole or from 10 on. */
export function sizeText(bytes: number): string {
	if (!Number.isFinite(bytes) || bytes < 1024) {
		const n = Number.isFinite(bytes) ? Math.max(0, Math.round(bytes)) : 0;
		return `${n} byte${n === 1 ? '' : 's'}`;
	}
	const [v, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KB'] : [bytes / (1024 * 1024), 'MB'];
	const s = v >= 10 ? String(Math.round(v)) : v.toFixed(1).replace(/\.0$/, '');
	return `${s} ${unit}`;
}

/**
 * instructionViews names session/new's or session/load's instruction files for the chat:
 * relative to the outermost of folders (the workspace folders, the session's folder) that
 * holds the file, their real paths included (pid gives real paths); else absolute. Entries
 * without a path are dropped.
 */
export function instructionViews(files: readonly InstructionFile[] | null | undefined, folders: readonly (string | undefined)[] = []): InstructionFileView[] {
	const roots = new Set<string>();
	for (const f of folders) {
		if (f && path.isAbsolute(f)) {
			roots.add(f);
			try {
				roots.add(fs.realpathSync(f));
			} catch {
				// A folder that is gone: its path as given.
			}
		}
	}
	const out: InstructionFileView[] = [];
	for (const f of Array.isArray(files) ? files : []) {
		if (!f || typeof f.path !== 'string' || f.path === '') {
			continue;
		}
		let label = f.path;
		for (const root of roots) {
			const l = relativeLabel(f.path, root);
			if (l !== f.path && (label === f.path || l.length > label.length)) {
				label = l;
			}
		}
		out.push({ path: f.path, label, size: sizeText(typeof f.bytes === 'number' ? f.bytes : 0), truncated: f.truncated === true });
	}
	return out;
}

/** instructionsLine is the instruction files in one line: "Instructions: AGENTS.md (1.2 KB), sub/CLAUDE.md (40 KB, cut to 32 KiB)". */
export function instructionsLine(files: readonly InstructionFileView[]): string {
	return `Instructions: ${files.map((f) => `${f.label} (${f.size}${f.truncated ? ', cut to 32 KiB' : ''})`).join(', ')}`;
}

/** planTitle is a plan's card title: its first line without heading marks, short. */
export function planTitle(plan: string): string {
	const first = plan.split('\n').map((l) => l.replace(/^\s*#+\s*/, '').trim()).find((l) => l !== '') ?? '';
	const line = first.length > 80 ? `${first.slice(0, 80)}…` : first;
	return line === '' ? 'the plan' : `the plan: ${line}`;
}

/** lastLine returns the last non-empty line of a text, cut to 300 characters. */
export function lastLine(text: string): string {
	const ls = text.split(/\r?\n/).filter((l) => l.trim() !== '');
	const l = ls.length > 0 ? ls[ls.length - 1] : '';
	return l.length > 300 ? `${l.slice(0, 300)}…` : l;
}

function obj(v: unknown): Record<string, unknown> | undefined {
	return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** toolTitle is a call in one line: bash's command, a file tool's path, a search's pattern, else its short arguments. */
export function toolTitle(toolName: string, args: unknown, folder?: string): string {
	const a = obj(args) ?? {};
	const s = (k: string) => (typeof a[k] === 'string' ? (a[k] as string) : undefined);
	const one = (t: string) => {
		const first = t.split('\n')[0];
		return first.length > 200 ? `${first.slice(0, 200)}…` : first + (t.includes('\n') ? ' …' : '');
	};
	if (toolName === 'bash' && s('command') !== undefined) {
		return `$ ${one(s('command') as string)}`;
	}
	const p = s('path');
	if (p !== undefined && ['read', 'write', 'edit', 'ls'].includes(toolName)) {
		return folder && path.isAbsolute(p) ? relativeLabel(p, folder) : p;
	}
	if ((toolName === 'grep' || toolName === 'find') && s('pattern') !== undefined) {
		return `${one(s('pattern') as string)}${p ? ` in ${p}` : ''}`;
	}
	if (toolName === 'task' && s('description') !== undefined) {
		return `${one(s('description') as string)}${s('agent') ? ` (${s('agent')})` : ''}`;
	}
	if (toolName === 'todo_write' && Array.isArray(a.todos)) {
		const n = a.todos.length;
		return n === 0 ? 'clear the plan' : `the plan: ${n} step${n === 1 ? '' : 's'}`;
	}
	if (toolName === 'tool_search' && s('query') !== undefined) {
		return one(s('query') as string);
	}
	const parts: string[] = [];
	for (const [k, v] of Object.entries(a)) {
		if (typeof v === 'string') {
			parts.push(`${k}: ${one(v).slice(0, 60)}`);
		} else if (typeof v === 'number' || typeof v === 'boolean') {
			parts.push(`${k}: ${v}`);
		}
		if (parts.length === 3) {
			break;
		}
	}
	return parts.join(', ');
}

/** claimsText says what an MCP server claims about its tool (its annotations), or undefined when it claims nothing. */
export function claimsText(a: ToolAnnotations | undefined): string | undefined {
	const o = obj(a);
	if (!o) {
		return undefined;
	}
	const said: string[] = [];
	if (o.readOnlyHint === true) said.push('only reads');
	if (o.readOnlyHint === false) said.push('may change things');
	if (o.destructiveHint === true) said.push('may delete or overwrite');
	if (o.destructiveHint === false) said.push('does not delete or overwrite');
	if (o.idempotentHint === true) said.push('is safe to repeat');
	if (o.openWorldHint === true) said.push('reaches outside services');
	if (o.openWorldHint === false) said.push('stays within its own data');
	const title = typeof o.title === 'string' && o.title.trim() !== '' ? `"${o.title.trim()}"` : undefined;
	if (said.length === 0 && !title) {
		return undefined;
	}
	const what = said.length > 0 ? `it ${said.join(', ')}` : '';
	return `The tool's server claims${title ? ` it is ${title}` : ''}${title && what ? ' and' : ''}${what ? ` ${what}` : ''} (pid does not check this).`;
}

const RESULT_ABORTED = 'Operation aborted';

/**
 * ChatModel holds the chat and tells its listener about every change. Used from the extension
 * host's one thread; its methods never throw on odd input from pid (unknown ids, missing fields
 * are shown as best they can be or skipped).
 */
export class ChatModel {
	private items: ChatItem[] = [];
	private readonly byId = new Map<string, ChatItem>();
	private nextId = 0;
	private readonly listeners = new Set<Listener>();
	/** Tool items of the current run (or the loaded transcript) by toolCallId. */
	private tools = new Map<string, ToolItem>();
	/** The assistant message streaming now, with its blocks by contentIndex. */
	private streaming: { item: AssistantItem; text: Map<number, string>; thinking: Map<number, string> } | undefined;
	/** The user messages pid has yet to take: the prompt's own first, then queued ones. */
	private expectedUser: { text: string; item?: UserItem; withContext?: boolean; own?: UserItem }[] = [];
	private readonly approvals = new Map<string, (c: ApprovalChoice | undefined) => void>();
	private readonly elicitations = new Map<string, { item: ElicitationItem; resolve: (r: ElicitationResult) => void }>();
	private changes: ChangesItem | undefined;
	private contextChips: ContextChip[] = [];
	/** The plan's card (planUpdate), while the chat shows it. */
	private planItem: PlanItem | undefined;
	/** The compaction running now (between compactionStart and compactionEnd). */
	private compacting: CompactionView | undefined;
	/** The running (and ended) subagents of the session: the task call's card by child session. */
	private children = new Map<string, ToolItem>();
	/** The commands of the chat's bash cards, by item id (a question to leave the sandbox names the one refused before). */
	private commands = new Map<string, string>();
	/** The session's folder, to show paths relative to it. */
	folder: string | undefined;
	readonly state: ChatState = { status: 'idle', running: false, context: [], mode: modeView(DEFAULT_MODES, 'default'), commands: BUILTIN_COMMANDS };

	/** onEvent calls l for every change, in order. */
	onEvent(l: Listener): { dispose(): void } {
		this.listeners.add(l);
		return { dispose: () => this.listeners.delete(l) };
	}

	private emit(e: ChatEvent): void {
		for (const l of [...this.listeners]) {
			l(e);
		}
	}

	/** All items, in order (queued messages last). */
	all(): ChatItem[] {
		return [...this.items];
	}

	/** The item with that id. */
	get(id: string): ChatItem | undefined {
		return this.byId.get(id);
	}

	/** The tool card of a call of the current run or transcript. */
	tool(toolCallId: string): ToolItem | undefined {
		return this.tools.get(toolCallId);
	}

	private id(prefix: string): string {
		this.nextId++;
		return `${prefix}${this.nextId}`;
	}

	private add<T extends ChatItem>(item: T): T {
		// Queued messages stay last: a new item goes before the first of them.
		const q = this.items.findIndex((i) => i.kind === 'user' && i.queued !== undefined);
		if (q >= 0 && !(item.kind === 'user' && item.queued !== undefined)) {
			this.items.splice(q, 0, item);
		} else {
			this.items.push(item);
		}
		this.byId.set(item.id, item);
		this.emit({ type: 'upsert', item });
		return item;
	}

	private update(item: ChatItem): void {
		if (this.byId.get(item.id) === item) {
			this.emit({ type: 'upsert', item });
		}
	}

	private remove(item: ChatItem): void {
		const i = this.items.indexOf(item);
		if (i >= 0) {
			this.items.splice(i, 1);
			this.byId.delete(item.id);
			this.emit({ type: 'remove', id: item.id });
		}
	}

	/** setState changes the state and tells the view. */
	setState(patch: Partial<Omit<ChatState, 'context'>>): void {
		Object.assign(this.state, patch);
		this.emit({ type: 'state' });
	}

	/** clear empties the chat (a new session, a loaded one); pending questions are left to their owners. */
	clear(): void {
		this.items = [];
		this.byId.clear();
		this.tools = new Map();
		this.streaming = undefined;
		this.expectedUser = [];
		this.changes = undefined;
		this.pendingChanges = undefined;
		this.planItem = undefined;
		this.compacting = undefined;
		this.children = new Map();
		this.commands = new Map();
		this.emit({ type: 'reset' });
	}

	// --- context ------------------------------------------------------------------------------

	/** The context waiting for the next prompt. */
	get context(): ContextChip[] {
		return [...this.contextChips];
	}

	/** addContext adds a chip (a chip with the same label replaces the older one). */
	addContext(chip: ContextChip): void {
		this.contextChips = [...this.contextChips.filter((c) => c.label !== chip.label), chip];
		this.syncContext();
	}

	/** removeContext drops the chip with that id (its × was clicked); an unknown id changes nothing. */
	removeContext(id: string): void {
		this.contextChips = this.contextChips.filter((c) => c.id !== id);
		this.syncContext();
	}

	/** takeContext returns the chips and empties the list (they go with a message). */
	takeContext(): ContextChip[] {
		const c = this.contextChips;
		this.contextChips = [];
		this.syncContext();
		return c;
	}

	private syncContext(): void {
		this.state.context = this.contextChips.map(({ id, kind, label, title }) => ({ id, kind, label, title }));
		this.emit({ type: 'state' });
	}

	// --- the person's messages ---------------------------------------------------------------

	/** userPrompt shows a prompt the person sent (pid's echo of it is then not shown twice). */
	userPrompt(text: string, chips: readonly ChipView[] = []): UserItem {
		const item = this.add<UserItem>({ kind: 'user', id: this.id('u'), text, chips: chips.map(({ id, kind, label, title }) => ({ id, kind, label, title })) });
		this.expectedUser.push({ text, withContext: chips.length > 0, own: item });
		return item;
	}

	/**
	 * queued shows a message sent while a run goes (steer or follow-up), marked queued until
	 * pid takes it (its user message arrives); sentText is the text pid was given.
	 */
	queued(text: string, mode: QueueMode, sentText: string, chips: readonly ChipView[] = []): UserItem {
		const item = this.add<UserItem>({ kind: 'user', id: this.id('q'), text, chips: chips.map(({ id, kind, label, title }) => ({ id, kind, label, title })), queued: mode });
		this.expectedUser.push({ text: sentText, item });
		return item;
	}

	/** The messages still waiting for pid to take them. */
	queuedItems(): UserItem[] {
		return this.items.filter((i): i is UserItem => i.kind === 'user' && i.queued !== undefined);
	}

	/** unqueue drops a queued message that could not be sent. */
	unqueue(item: UserItem): void {
		this.expectedUser = this.expectedUser.filter((e) => e.item !== item);
		this.remove(item);
	}

	/** A user message pid added to the transcript: the prompt's own, a queued one taken, or another. at: its timestamp. */
	private userMessage(text: string, at?: number): void {
		const when = at !== undefined ? { at } : {};
		// A prompt with context comes back as its text followed by the context's blocks.
		let i = this.expectedUser.findIndex((e) => e.text === text);
		if (i < 0) {
			i = this.expectedUser.findIndex((e) => e.withContext === true && text.startsWith(e.text));
		}
		if (i < 0) {
			this.add<UserItem>({ kind: 'user', id: this.id('u'), text, chips: [], ...when });
			return;
		}
		const [e] = this.expectedUser.splice(i, 1);
		if (e.item) {
			// Taken: it moves from the queue to its place in the conversation.
			this.remove(e.item);
			const { queued: _q, ...rest } = e.item;
			void _q;
			this.add<UserItem>({ ...rest, id: this.id('u'), ...when });
		} else if (e.own && at !== undefined) {
			e.own.at = at;
		}
	}

	/**
	 * dropFrom removes the item with that id and every item after it (a rewind of the
	 * conversation took them out); it returns how many were removed (0: no such item).
	 */
	dropFrom(id: string): number {
		const i = this.items.findIndex((it) => it.id === id);
		if (i < 0) {
			return 0;
		}
		const gone = this.items.slice(i);
		for (const it of gone) {
			this.remove(it);
			if (it.kind === 'tool') {
				this.tools.delete(it.toolCallId);
			}
			if (it === this.changes) {
				this.changes = undefined;
			}
		}
		return gone.length;
	}

	/** The person's messages in the conversation (not those still queued), oldest first. */
	userItems(): UserItem[] {
		return this.items.filter((i): i is UserItem => i.kind === 'user' && i.queued === undefined);
	}

	/**
	 * setCheckpoints gives each of the person's messages its checkpoint (by item id; a message
	 * left out has none): the view offers "Rewind to here" on those that have one.
	 */
	setCheckpoints(byItem: ReadonlyMap<string, string>): void {
		for (const u of this.userItems()) {
			const id = byItem.get(u.id);
			if (u.checkpointId !== id) {
				if (id === undefined) {
					delete u.checkpointId;
				} else {
					u.checkpointId = id;
				}
				this.update(u);
			}
		}
	}

	// --- a run --------------------------------------------------------------------------------

	/** runStarted marks the chat working (a prompt was sent). */
	runStarted(): void {
		this.tools = new Map();
		this.streaming = undefined;
		if (this.changes) {
			this.changes.current = false;
			this.update(this.changes);
			this.changes = undefined;
		}
		this.pendingChanges = undefined;
		this.setState({ status: 'working', running: true });
	}

	/**
	 * runEnded marks the chat idle: an answer still streaming is complete as it is, tools still
	 * running were cancelled, pending questions are gone. failed, when given, says why the
	 * prompt failed.
	 */
	runEnded(how: 'done' | 'aborted' | 'failed', failed?: { message: string; actions?: NoticeAction[] }): void {
		if (this.streaming) {
			this.streaming.item.streaming = false;
			this.update(this.streaming.item);
			this.streaming = undefined;
		}
		for (const t of this.tools.values()) {
			if (t.status === 'preparing' || t.status === 'running' || t.status === 'waiting') {
				t.status = 'cancelled';
				if (t.approval?.state === 'pending') {
					t.approval.state = 'withdrawn';
				}
				this.update(t);
			}
		}
		if (how === 'aborted') {
			this.notice('info', 'Stopped: pid was cancelled.');
		}
		if (failed) {
			this.notice('error', failed.message, failed.actions ?? []);
		}
		this.setState({ running: false });
		this.showChanges();
		this.expectedUser = this.expectedUser.filter((e) => e.item !== undefined);
		this.setState({ status: this.state.status === 'stopped' ? 'stopped' : 'idle', running: false });
	}

	/**
	 * handle takes one of pid's notifications for this chat's session (the caller filters by
	 * session). Unknown methods are ignored.
	 */
	handle(method: string, params: unknown): void {
		const p = obj(params) ?? {};
		switch (method) {
			case 'messageStart': {
				const m = obj(p.message) as Message | undefined;
				if (m?.role === 'assistant') {
					this.startAssistant();
				}
				break;
			}
			case 'messageUpdate':
				this.assistantDelta(params as MessageUpdateParams);
				break;
			case 'messageEnd': {
				const m = (params as MessageParams).message;
				if (m?.role === 'assistant') {
					this.endAssistant(m);
				} else if (m?.role === 'user') {
					this.userMessage(contentText(m.content), typeof m.timestamp === 'number' ? m.timestamp : undefined);
				}
				break;
			}
			case 'toolStart': {
				const s = params as ToolStartParams;
				this.toolStart(s.toolCallId, s.toolName, s.args);
				break;
			}
			case 'toolExecutionStart': {
				const t = this.tools.get(String(p.toolCallId));
				if (t) {
					t.status = 'running';
					this.update(t);
				}
				break;
			}
			case '$/toolUpdate': {
				const u = params as ToolUpdateParams;
				const t = this.tools.get(u.toolCallId);
				if (t) {
					const text = contentText(u.partialResult?.content);
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
				const e = params as ToolEndParams;
				this.toolEnd(e.toolCallId, e.toolName, contentText(e.result?.content), e.isError === true, e.result?.details);
				break;
			}
			case 'compactionStart':
				this.compacting = this.add<CompactionView>({ kind: 'compaction', id: this.id('k'), state: 'running', ...(typeof p.reason === 'string' ? { reason: p.reason } : {}) });
				break;
			case 'compactionEnd':
				this.compactionEnd(params as CompactionEndParams);
				break;
			case 'planUpdate':
				this.plan((params as PlanUpdateParams).entries);
				break;
			case 'usageUpdate': {
				const u = params as UsageUpdateParams;
				if (typeof u.used === 'number' && typeof u.size === 'number') {
					const cost = obj(u.cost);
					this.setState({ usage: { used: u.used, size: u.size, ...(cost && typeof cost.amount === 'number' ? { cost: { amount: cost.amount, currency: typeof cost.currency === 'string' ? cost.currency : 'USD' } } : {}) } });
				}
				break;
			}
			case 'commandOutput': {
				const c = params as CommandOutputParams;
				this.add<CommandItem>({ kind: 'command', id: this.id('m'), name: String(c.name ?? ''), text: typeof c.text === 'string' ? c.text : '', isError: c.isError === true });
				break;
			}
			case 'subagentStart': {
				const a = params as SubagentStartParams;
				if (typeof a.childSessionId !== 'string' || a.childSessionId === '') {
					break;
				}
				const t = this.tools.get(a.toolCallId) ?? this.toolStart(a.toolCallId, 'task', { description: a.description, agent: a.agent });
				t.subagent = { childSessionId: a.childSessionId, description: String(a.description ?? ''), agent: String(a.agent ?? 'explore'), state: 'running', steps: 0 };
				this.children.set(a.childSessionId, t);
				this.update(t);
				break;
			}
			case 'subagentEnd': {
				const a = params as SubagentEndParams;
				const t = this.children.get(a.childSessionId) ?? this.tools.get(a.toolCallId);
				if (t?.subagent) {
					t.subagent.state = typeof a.stopReason === 'string' && a.stopReason !== '' ? a.stopReason : 'stop';
					this.update(t);
				}
				break;
			}
			default:
				break;
		}
	}

	private startAssistant(): void {
		if (this.streaming) {
			this.streaming.item.streaming = false;
			this.update(this.streaming.item);
		}
		const item = this.add<AssistantItem>({ kind: 'assistant', id: this.id('a'), text: '', thinking: '', streaming: true });
		this.streaming = { item, text: new Map(), thinking: new Map() };
	}

	private assistantDelta(u: MessageUpdateParams): void {
		const d = obj(u?.delta);
		if (!d) {
			return;
		}
		if (!this.streaming) {
			this.startAssistant();
		}
		const s = this.streaming as NonNullable<ChatModel['streaming']>;
		const idx = typeof d.contentIndex === 'number' ? d.contentIndex : 0;
		const piece = typeof d.delta === 'string' ? d.delta : '';
		if (d.type === 'text_delta') {
			s.text.set(idx, (s.text.get(idx) ?? '') + piece);
		} else if (d.type === 'thinking_delta') {
			s.thinking.set(idx, (s.thinking.get(idx) ?? '') + piece);
		} else {
			return;
		}
		const join = (m: Map<number, string>) => [...m.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]).join('\n\n');
		s.item.text = join(s.text);
		s.item.thinking = join(s.thinking);
		this.update(s.item);
	}

	private endAssistant(m: AssistantMessage): void {
		let item = this.streaming?.item;
		this.streaming = undefined;
		if (!item) {
			item = this.add<AssistantItem>({ kind: 'assistant', id: this.id('a'), text: '', thinking: '', streaming: false });
		}
		this.fillAssistant(item, m);
		if (item.text.trim() === '' && item.thinking.trim() === '' && !item.error) {
			this.remove(item); // a message of tool calls only: the cards say it
		} else {
			this.update(item);
		}
	}

	private fillAssistant(item: AssistantItem, m: AssistantMessage): void {
		const content = Array.isArray(m.content) ? m.content : [];
		item.text = content.filter((c) => c?.type === 'text').map((c) => (c as { text: string }).text).join('\n\n');
		item.thinking = content.filter((c) => c?.type === 'thinking').map((c) => (c as { thinking: string }).thinking).join('\n\n');
		item.streaming = false;
		if (m.stopReason === 'error' || m.stopReason === 'length') {
			const why = m.errorMessage ?? (m.stopReason === 'length' ? 'The answer hit the model\'s output-token limit.' : 'The model failed.');
			const f = modelError(why);
			item.error = f.message;
			item.errorActions = f.actions;
		}
	}

	private toolStart(toolCallId: string, toolName: string, args: unknown, parent?: ToolItem): ToolItem {
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

	/** compactionEnd completes the running compaction's card: what the model now sees, what it kept, or why it failed. */
	private compactionEnd(c: CompactionEndParams): void {
		const item = this.compacting ?? this.add<CompactionView>({ kind: 'compaction', id: this.id('k'), state: 'running' });
		this.compacting = undefined;
		if (typeof c.reason === 'string') {
			item.reason = c.reason;
		}
		if (typeof c.error === 'string' && c.error !== '') {
			item.state = 'failed';
			item.error = c.error;
		} else {
			item.state = 'done';
			if (typeof c.summary === 'string') {
				item.summary = c.summary;
			}
			if (typeof c.tokensBefore === 'number') {
				item.tokensBefore = c.tokensBefore;
			}
			const k = obj(c.kept);
			if (k) {
				item.kept = {
					userMessage: k.userMessage === true,
					planEntries: typeof k.planEntries === 'number' ? k.planEntries : 0,
					files: Array.isArray(k.files) ? k.files.filter((f): f is string => typeof f === 'string').map((f) => (path.isAbsolute(f) ? relativeLabel(f, this.folder) : f)) : [],
				};
			}
		}
		this.update(item);
	}

	/**
	 * plan shows the model's plan (planUpdate: the whole list each time) as a checklist card,
	 * moved to the end of the chat each time it changes; an empty plan takes the card away.
	 */
	plan(entries: unknown): void {
		if (this.planItem) {
			this.remove(this.planItem);
			this.planItem = undefined;
		}
		const list: PlanEntryView[] = (Array.isArray(entries) ? entries : [])
			.map((e) => obj(e))
			.filter((e): e is Record<string, unknown> => e !== undefined && typeof e.content === 'string')
			.map((e) => ({
				content: e.content as string,
				status: e.status === 'completed' || e.status === 'in_progress' ? e.status : 'pending',
				priority: typeof e.priority === 'string' ? e.priority : 'medium',
			}));
		if (list.length > 0) {
			this.planItem = this.add<PlanItem>({ kind: 'plan', id: this.id('p'), entries: list });
		}
	}

	/** The plan's card, while the chat shows one. */
	planCard(): PlanItem | undefined {
		return this.planItem;
	}

	// --- subagents ----------------------------------------------------------------------------

	/** Reports whether sessionId is a child (subagent) of this chat's session: its notifications go to handleChild. */
	isChild(sessionId: unknown): boolean {
		return typeof sessionId === 'string' && this.children.has(sessionId);
	}

	/** The key of a child's tool call among the chat's tool cards (its ids may repeat the parent's). */
	private childKey(childSessionId: string, toolCallId: string): string {
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
	private childStep(card: ToolItem, key: string, toolName: string, args: unknown): ToolItem {
		const t = this.toolStart(key, toolName, args, card);
		if (card.subagent) {
			card.subagent.steps++;
			this.update(card);
		}
		return t;
	}

	private toolEnd(toolCallId: string, toolName: string, text: string, isError: boolean, details?: unknown): void {
		const t = this.tools.get(toolCallId) ?? this.toolStart(toolCallId, toolName, {});
		t.output = text;
		const problems = problemViews(obj(details)?.diagnostics, this.folder);
		if (problems) {
			t.problems = problems;
		}
		if (escalated(details)) {
			t.escalated = true;
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
	private lastRefusal(t: ToolItem): { command: string; lines: string[]; note: string } | undefined {
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

	private refreshWaiting(): void {
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

	// --- changed files, notices, transcripts --------------------------------------------------

	/**
	 * setChanges takes the files the current run changed: shown as one card after the run's
	 * last message once it ends, then updated in place (Undo).
	 */
	setChanges(run: number, files: readonly ChangedFile[]): void {
		const views = files.map((f) => ({ path: f.path, label: relativeLabel(f.path, this.folder), state: f.state, created: f.before === undefined, ...(f.error ? { error: f.error } : {}) }));
		this.pendingChanges = { run, files: views };
		if (this.changes && this.changes.run === run) {
			this.changes.files = views;
			this.update(this.changes);
		} else if (!this.state.running) {
			this.showChanges();
		}
	}

	private pendingChanges: { run: number; files: ChangesFileView[] } | undefined;

	private showChanges(): void {
		const p = this.pendingChanges;
		if (!p || p.files.length === 0 || (this.changes && this.changes.run === p.run)) {
			return;
		}
		this.changes = this.add<ChangesItem>({ kind: 'changes', id: this.id('c'), run: p.run, files: p.files, current: true });
	}

	/**
	 * retireChanges turns the changed-files card's Undo off (a rewind changed the files since:
	 * its snapshots no longer say what to put back).
	 */
	retireChanges(): void {
		if (this.changes) {
			this.changes.current = false;
			this.update(this.changes);
			this.changes = undefined;
		}
		this.pendingChanges = undefined;
	}

	/** The card of the files the last run changed, once shown. */
	changesItem(): ChangesItem | undefined {
		return this.changes;
	}

	/**
	 * instructions adds a line naming the instruction files the model gets (session/new's or
	 * session/load's `instructions`), each a link to the file, named relative to the outermost
	 * of folders (the workspace folders) or the chat's folder that holds it; nothing when there
	 * is none.
	 */
	instructions(files: readonly InstructionFile[] | null | undefined, folders: readonly string[] = []): InstructionsItem | undefined {
		const views = instructionViews(files, [...folders, this.folder]);
		if (views.length === 0) {
			return undefined;
		}
		return this.add<InstructionsItem>({ kind: 'instructions', id: this.id('i'), files: views });
	}

	/** notice adds a line from the extension (an error, a crash, a resumed session). */
	notice(level: NoticeItem['level'], text: string, actions: NoticeAction[] = []): NoticeItem {
		return this.add<NoticeItem>({ kind: 'notice', id: this.id('n'), level, text, actions });
	}

	/** retire disables a notice's buttons (a Resume that was used). */
	retire(item: NoticeItem): void {
		item.actions = [];
		this.update(item);
	}

	/** dismiss removes a notice from the chat (an offer that no longer applies); nothing when it is gone already. */
	dismiss(item: NoticeItem): void {
		this.remove(item);
	}

	/** Reports whether the chat shows nothing (no message, card or notice). */
	get empty(): boolean {
		return this.items.length === 0;
	}

	/**
	 * showTranscript replaces the chat with a loaded session's items: each user message, the
	 * model's answers, each tool call as a card with its result, compactions as notices.
	 */
	showTranscript(items: readonly SessionItem[]): void {
		this.clear();
		for (const it of items ?? []) {
			if (it === null || typeof it !== 'object') {
				continue;
			}
			switch (it.role) {
				case 'user':
					this.add<UserItem>({ kind: 'user', id: this.id('u'), text: contentText(it.content), chips: [], ...(typeof it.timestamp === 'number' ? { at: it.timestamp } : {}) });
					break;
				case 'assistant': {
					const item: AssistantItem = { kind: 'assistant', id: this.id('a'), text: '', thinking: '', streaming: false };
					this.fillAssistant(item, it);
					if (item.text.trim() !== '' || item.thinking.trim() !== '' || item.error) {
						this.add(item);
					}
					for (const c of it.content ?? []) {
						if (c?.type === 'toolCall') {
							const t = this.toolStart(c.id, c.name, c.arguments);
							t.status = it.stopReason === 'aborted' ? 'cancelled' : 'running';
							this.update(t);
						}
					}
					break;
				}
				case 'toolResult':
					this.toolEnd(it.toolCallId, it.toolName ?? 'tool', contentText(it.content), it.isError === true, it.details);
					break;
				case 'compaction': {
					const c = it as CompactionItem;
					this.add<CompactionView>({
						kind: 'compaction',
						id: this.id('k'),
						state: 'done',
						...(typeof c.reason === 'string' ? { reason: c.reason } : {}),
						...(typeof c.summary === 'string' ? { summary: c.summary } : {}),
						...(typeof c.tokensBefore === 'number' ? { tokensBefore: c.tokensBefore } : {}),
					});
					break;
				}
				default:
					break;
			}
		}
		// A call without a result (pid stopped while it ran) did not finish.
		for (const t of this.tools.values()) {
			if (t.status === 'running') {
				t.status = 'cancelled';
				this.update(t);
			}
		}
	}
}
