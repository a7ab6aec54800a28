// ChatModel is what the chat view shows, without VS Code: the conversation as items (the
// person's messages, the model's answers as they stream, tool cards updated in place with
// their approval, MCP questions, notices, the files a run changed), the state (idle, working,
// waiting for approval, stopped), and the questions waiting for a click. The controller feeds
// it pid's notifications and requests; the view (chatview.ts and webview/chat.ts) renders it
// and sends clicks back. No `vscode` import: tests drive it under plain node.
// The store is chatItems.ts's (ChatItems), the tool cards and their questions chatCards.ts's
// (ChatCards), the words chatText.ts's: ChatModel adds the conversation on them.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChangedFile } from './changes';
import { ChatCards } from './chatCards';
import { instructionViews, lastLine, obj, typedCommands } from './chatText';
import { relativeLabel } from './context';
import { modelError } from './errors';
import {
	contentText,
	type AssistantMessage,
	type CommandOutputParams,
	type ChangesUpdateParams,
	type CompactionEndParams,
	type CompactionItem,
	type InstructionFile,
	type Message,
	type MessageParams,
	type MessageUpdateParams,
	type PlanUpdateParams,
	type SessionItem,
	type SubagentEndParams,
	type SubagentStartParams,
	type ToolEndParams,
	type ToolStartParams,
	type ToolUpdateParams,
	type UsageUpdateParams,
} from './protocol';
import { summary } from './review';
import type { AssistantItem, ChangesFileView, ChangesItem, CommandItem, CompactionView, InstructionsItem, JobView, NoticeAction, PlanEntryView, PlanItem, QueueMode, ReviewView, UserItem, ChipView } from './webviewProtocol';

// The chat's items and state are what the view receives: their types live with the view's messages.
export type { ApprovalState, ApprovalView, AssistantItem, ChangesFileView, ChangesItem, ChatItem, ChatState, ChatStatus, ChipView, CommandItem, CommandView, CompactionView, ElicitationItem, ElicitationState, InstructionFileView, InstructionsItem, ItemView, JobView, ModeView, NoticeAction, NoticeItem, PlanItem, ProblemView, QueueMode, SubagentView, ToolItem, ToolStatus, UsageView, UserItem } from './webviewProtocol';
export { BUILTIN_COMMANDS, typedCommands, typedText, claimsText, commandViews, instructionViews, instructionsLine, lastLine, planTitle, problemViews, sizeText, toolTitle, usageText, viewOf } from './chatText';
export { ChatItems, type ChatEvent } from './chatItems';
export { ChatCards, type ApprovalChoice } from './chatCards';

/** samePath reports whether two absolute paths name one file (pid gives real paths; the editor may not). */
function samePath(a: string, b: string): boolean {
	if (a === b) {
		return true;
	}
	const real = (p: string) => {
		try {
			return fs.realpathSync.native(p);
		} catch {
			return path.resolve(p);
		}
	};
	return real(a) === real(b);
}

/**
 * ChatModel holds the chat and tells its listener about every change. Used from the extension
 * host's one thread; its methods never throw on odd input from pid (unknown ids, missing fields
 * are shown as best they can be or skipped).
 */
/** jobViews keeps jobs/list's running jobs, in the view's shape (entries that are not jobs are left out). */
export function jobViews(jobs: unknown): JobView[] {
	if (!Array.isArray(jobs)) {
		return [];
	}
	const out: JobView[] = [];
	for (const j of jobs) {
		if (j && typeof j === 'object' && typeof j.jobId === 'string' && j.jobId !== '' && j.running === true) {
			out.push({ jobId: j.jobId, command: String(j.command ?? ''), startedAt: String(j.startedAt ?? ''), outputBytes: typeof j.outputBytes === 'number' ? j.outputBytes : 0 });
		}
	}
	return out;
}

export class ChatModel extends ChatCards {
	/** The assistant message streaming now, with its blocks by contentIndex. */
	private streaming: { item: AssistantItem; text: Map<number, string>; thinking: Map<number, string> } | undefined;
	/** The user messages pid has yet to take: the prompt's own first, then queued ones. */
	private expectedUser: { text: string; item?: UserItem; withContext?: boolean; own?: UserItem; command?: boolean }[] = [];
	private changes: ChangesItem | undefined;
	/** The plan's card (planUpdate), while the chat shows it. */
	private planItem: PlanItem | undefined;
	/** The compaction running now (between compactionStart and compactionEnd). */
	private compacting: CompactionView | undefined;

	protected override forget(): void {
		super.forget();
		this.streaming = undefined;
		this.expectedUser = [];
		this.changes = undefined;
		this.pendingChanges = undefined;
		this.planItem = undefined;
		this.compacting = undefined;
	}

	// --- the person's messages ---------------------------------------------------------------

	/**
	 * userPrompt shows a prompt the person sent (pid's echo of it is then not shown twice). A
	 * `/NAME args` command stays as typed: the prompt pid makes of it (a template filled in)
	 * is its echo.
	 */
	userPrompt(text: string, chips: readonly ChipView[] = []): UserItem {
		const item = this.add<UserItem>({ kind: 'user', id: this.id('u'), text, chips: chips.map(({ id, kind, label, title }) => ({ id, kind, label, title })) });
		// Any /NAME may be one (the session's own commands may not be listed yet): pid's echo of
		// one that is not comes back as typed, and matches first.
		const command = /^\/[A-Za-z0-9_-]+(?:\s|$)/.test(text);
		this.expectedUser.push({ text, withContext: chips.length > 0, own: item, ...(command ? { command } : {}) });
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
			// A command's prompt: the template filled in, for the /NAME typed.
			i = this.expectedUser.findIndex((e) => e.command === true);
			const own = i >= 0 ? this.expectedUser[i].own : undefined;
			if (own) {
				own.sent = text;
				typedCommands.set(text, own.text);
				this.update(own);
			}
		}
		if (i < 0) {
			this.add<UserItem>({ kind: 'user', id: this.id('u'), text: typedCommands.get(text) ?? text, chips: [], ...(typedCommands.has(text) ? { sent: text } : {}), ...when });
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
			case 'changesUpdate':
				this.reviewUpdate(params as ChangesUpdateParams);
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
				t.subagent = { childSessionId: a.childSessionId, description: String(a.description ?? ''), agent: String(a.agent ?? 'explore'), state: 'running', steps: 0, ...(typeof a.worktree === 'string' && a.worktree !== '' ? { worktree: a.worktree } : {}) };
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

	// --- changed files, notices, transcripts --------------------------------------------------

	/**
	 * setChanges takes the files the current run changed: shown as one card after the run's
	 * last message once it ends, then updated in place (Undo).
	 */
	setChanges(run: number, files: readonly ChangedFile[]): void {
		const tracked: ChangesFileView[] = files.map((f) => ({ path: f.path, label: relativeLabel(f.path, this.folder), state: f.state, created: f.before === undefined, ...(f.error ? { error: f.error } : {}) }));
		// The files only the run's checkpoint listed (bash's) stay.
		const others = this.pendingChanges?.run === run ? this.pendingChanges.files.filter((f) => f.untracked && !tracked.some((t) => samePath(t.path, f.path))) : [];
		const views = [...tracked, ...others];
		this.pendingChanges = { run, files: views };
		if (this.changes && this.changes.run === run) {
			this.changes.files = views;
			this.update(this.changes);
		} else if (!this.state.running) {
			this.showChanges();
		}
	}

	private pendingChanges: { run: number; files: ChangesFileView[] } | undefined;

	/**
	 * checkpointFiles adds to run's changed-files card what the run's checkpoint lists that the
	 * card lacks (files a command created, changed or deleted: only write and edit are followed
	 * as they happen): each with Open diff (pid's diff since before the prompt), without Undo
	 * (Rewind to here takes them back).
	 */
	checkpointFiles(run: number, files: readonly { path: string; change: string }[]): void {
		const have = this.pendingChanges?.run === run ? this.pendingChanges.files : [];
		const extra: ChangesFileView[] = files
			.filter((f) => typeof f?.path === 'string' && !have.some((h) => samePath(h.path, f.path)))
			.map((f) => ({ path: f.path, label: relativeLabel(f.path, this.folder), state: 'changed', created: f.change === 'added', ...(f.change === 'deleted' ? { deleted: true } : {}), untracked: true }));
		if (extra.length === 0) {
			return;
		}
		const views = [...have, ...extra];
		this.pendingChanges = { run, files: views };
		if (this.changes && this.changes.run === run) {
			this.changes.files = views;
			this.update(this.changes);
		} else if (!this.state.running) {
			this.showChanges();
		}
	}

	private showChanges(): void {
		const p = this.pendingChanges;
		if (!p || p.files.length === 0 || (this.changes && this.changes.run === p.run)) {
			return;
		}
		this.changes = this.add<ChangesItem>({ kind: 'changes', id: this.id('c'), run: p.run, files: p.files, current: true, ...(this.reviewView ? { review: this.reviewView } : {}) });
	}

	/** The last changesUpdate, as the changed-files card shows it. */
	private reviewView: ReviewView | undefined;

	/**
	 * reviewUpdate follows changesUpdate: the changed-files card's "N files changed · Review"
	 * line and each file's +/- and pending counts, live.
	 */
	reviewUpdate(p: ChangesUpdateParams): void {
		if (!Array.isArray(p?.files)) {
			return;
		}
		this.reviewView = p.files.length === 0 ? undefined : summary(p.files, this.folder);
		if (this.changes) {
			if (this.reviewView) {
				this.changes.review = this.reviewView;
			} else {
				delete this.changes.review;
			}
			this.update(this.changes);
		}
	}

	/** The review line the chat shows now (the last changesUpdate), if any. */
	reviewItem(): ReviewView | undefined {
		return this.reviewView;
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
				case 'user': {
					// A command typed in this window shows as typed (pid keeps the prompt it made of it).
					const sent = contentText(it.content);
					const typed = typedCommands.get(sent);
					this.add<UserItem>({ kind: 'user', id: this.id('u'), text: typed ?? sent, chips: [], ...(typed !== undefined ? { sent } : {}), ...(typeof it.timestamp === 'number' ? { at: it.timestamp } : {}) });
					break;
				}
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
