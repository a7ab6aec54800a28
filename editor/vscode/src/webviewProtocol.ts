// The messages between the extension and its chat view's page, as one discriminated union
// for each direction, and the shapes of the chat items they carry. Both sides import these
// types: the extension host (chatview.ts, extension.ts, chat.ts; tsconfig.json) and the page
// (src/webview/chat.ts; src/webview/tsconfig.json, the DOM lib), so `npm run typecheck` fails
// when one side sends a message the other does not know, or a field with the wrong name or
// type. Types only, no imports: the page's build sees this file and nothing of Node or VS Code.

export type ChatStatus = 'idle' | 'starting' | 'working' | 'approval' | 'loading' | 'stopped';

export type QueueMode = 'steer' | 'followUp';

export interface ChipView {
	id: string;
	kind: string;
	label: string;
	title: string;
}

export interface UserItem {
	kind: 'user';
	id: string;
	text: string;
	chips: ChipView[];
	/** Set while the message waits for pid to take it (sent as session/steer or followUp). */
	queued?: QueueMode;
	/** When pid added it to the conversation (milliseconds), when pid said. */
	at?: number;
	/** The checkpoint taken right before it (its prompt's): "Rewind to here" goes back to it. */
	checkpointId?: string;
	/**
	 * A `/NAME args` command the person typed, shown as typed: the prompt pid made of it (the
	 * template filled in), which its checkpoint names.
	 */
	sent?: string;
}

/** An action offered with an error: a button. */
export interface ErrorAction {
	label: string;
	/**
	 * openSettings: VS Code's Settings at `setting`; openFile: the settings file at `path` in an
	 * editor; trustedFolders: the "pid: Trusted Folders" picker; resume: restart pid and load
	 * the session; showLog: pid's log.
	 */
	kind: 'openSettings' | 'openFile' | 'trustedFolders' | 'resume' | 'showLog';
	setting?: string;
	path?: string;
}

export interface AssistantItem {
	kind: 'assistant';
	id: string;
	/** The markdown so far. */
	text: string;
	thinking: string;
	streaming: boolean;
	/** The model failed: what to do, in VS Code's words. */
	error?: string;
	errorActions?: ErrorAction[];
}

export type ToolStatus = 'preparing' | 'waiting' | 'running' | 'done' | 'failed' | 'denied' | 'cancelled';

export type ApprovalState = 'pending' | 'allowed' | 'allowedAlways' | 'denied' | 'withdrawn';

export interface ApprovalView {
	state: ApprovalState;
	/** One line: what pid wants to do. */
	title: string;
	/** The command, the diff or the arguments. */
	detail: string;
	/** What "Allow always" covers (pid's always.description); absent: not offered. */
	always?: string;
	/** Whether "Review" can open a diff (a write or an edit with its arguments). */
	canReview: boolean;
	/** What an MCP server says about its tool, as its claim. */
	claims?: string;
	/** The reason given with a denial. */
	reason?: string;
	/**
	 * For a plan (exit_plan_mode): the modes besides default that an approval may go on in,
	 * each a button ("Approve, Accept edits"); Allow is "Approve" (default mode), Deny "Keep
	 * planning" (with the reason).
	 */
	planModes?: ModeView[];
	/** For an approved plan: the mode pid went on in. */
	approvedMode?: ModeView;
	/** For a bash call asking to run outside the sandbox: its own question (approval.ts's escalationQuestion). */
	escalation?: EscalationView;
}

/** A bash call's request to run outside the sandbox, as its question shows it. */
export interface EscalationView {
	/** What running outside means, in words. */
	means: string;
	/** The model's justification ('' when it gave none). */
	justification: string;
	/** The command, whole. */
	command: string;
	/** When "always" is not offered because pid's scope is wider than this command: that scope, in pid's words. */
	wider?: string;
	/**
	 * What the sandbox refused before: the session's last bash result holding pid's sandbox
	 * note (its command, the output's last lines before the note, the note for a person);
	 * absent when there is none.
	 */
	refused?: { command: string; lines: string[]; note: string };
}

/** A session mode as the chat shows it. */
export interface ModeView {
	id: string;
	name: string;
	description?: string;
}

export interface ToolItem {
	kind: 'tool';
	id: string;
	toolCallId: string;
	toolName: string;
	/** One line: the command, the file, the pattern. */
	title: string;
	status: ToolStatus;
	/** The latest line of its progress ($/toolUpdate). */
	lastLine?: string;
	/** The full output: the latest progress while it runs, the result once done. */
	output?: string;
	approval?: ApprovalView;
	/** The file it works on (absolute), for "open". */
	path?: string;
	/** exit_plan_mode's plan (markdown, whole): the card shows it rendered (the view's html). */
	plan?: string;
	/** A step of a subagent: the chat item id of its task call's card, under which it is shown (folded). */
	parentId?: string;
	/** A task call's child session, once it started (subagentStart). */
	subagent?: SubagentView;
	/** A subagent's call asking for approval: which task asks, for the approval's first line. */
	askedBy?: string;
	/** The problems the editor reported in the file after this edit or write (details.diagnostics). */
	problems?: ProblemView[];
	/** It ran outside the sandbox (its result's details.sandbox.escalated). */
	escalated?: boolean;
}

/** A task call's child session as its card shows it. */
export interface SubagentView {
	childSessionId: string;
	description: string;
	agent: string;
	/** running, else pid's stopReason: stop, error, aborted or maxTurns. */
	state: string;
	/** How many tool calls the child made so far. */
	steps: number;
	/** The git worktree it works in (subagentStart's worktree), when it has one. */
	worktree?: string;
	/** The files whose merge from its worktree conflicted (task's details.worktree.conflicts). */
	conflicts?: string[];
}

/** One problem the editor reported after an edit, 1-based as a status bar shows it. */
export interface ProblemView {
	/** The file, relative to the folder. */
	label: string;
	line: number;
	column: number;
	severity: 'error' | 'warning' | 'info' | 'hint';
	message: string;
	source?: string;
}

/** One step of the plan as its checklist shows it. */
export interface PlanEntryView {
	content: string;
	status: 'pending' | 'in_progress' | 'completed';
	priority: string;
}

/** The model's plan (todo_write; planUpdate): one card, moved to the end each time it changes. */
export interface PlanItem {
	kind: 'plan';
	id: string;
	entries: PlanEntryView[];
}

/** What a `/NAME` command that answers by itself said (commandOutput). */
export interface CommandItem {
	kind: 'command';
	id: string;
	name: string;
	text: string;
	isError: boolean;
}

/** A compaction: running, then what the model now sees (the summary) and what it keeps word for word. */
export interface CompactionView {
	kind: 'compaction';
	id: string;
	state: 'running' | 'done' | 'failed';
	/** manual, threshold or overflow. */
	reason?: string;
	summary?: string;
	tokensBefore?: number;
	kept?: { userMessage: boolean; planEntries: number; files: string[] };
	error?: string;
}

/** A command of the prompt box's `/` completion. */
export interface CommandView {
	name: string;
	description: string;
	/** What the command takes after its name, when it takes something. */
	hint?: string;
}

/** The context meter: what the next model call sends, of the model's window, and the cost so far. */
export interface UsageView {
	used: number;
	size: number;
	cost?: { amount: number; currency: string };
}

export interface NoticeAction {
	label: string;
	/** What the view asks the extension to do. */
	action: 'resume' | 'resumeSession' | 'openSettings' | 'openFile' | 'trustedFolders' | 'showLog' | 'newSession' | 'restoreAnyway';
	/** The setting, the file, (resumeSession) the session's id, or (restoreAnyway) the checkpoint's id. */
	arg?: string;
}

export interface NoticeItem {
	kind: 'notice';
	id: string;
	level: 'info' | 'warning' | 'error';
	text: string;
	actions: NoticeAction[];
}

export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'enum';

/** One field of an MCP server's question (elicit.ts reads them from its requestedSchema). */
export interface Field {
	name: string;
	/** The schema's title, else the name. */
	label: string;
	description?: string;
	type: FieldType;
	required: boolean;
	/** For enum: the values, and what to show for each. */
	options?: { value: string; label: string }[];
	default?: string | number | boolean;
	minimum?: number;
	maximum?: number;
	minLength?: number;
	maxLength?: number;
	/** A string format the schema names (email, uri, date, date-time). */
	format?: string;
}

export type ElicitationState = 'pending' | 'accepted' | 'declined' | 'cancelled';

export interface ElicitationItem {
	kind: 'elicitation';
	id: string;
	message: string;
	server?: string;
	toolCallId?: string;
	fields: Field[];
	state: ElicitationState;
	problems?: string[];
}

/** Where a changed file stands: changed by the run, put back (Undo), or its undo failed. */
export type ChangeState = 'changed' | 'undone' | 'failed';

export interface ChangesFileView {
	path: string;
	label: string;
	state: ChangeState;
	created: boolean;
	/** The run deleted it (a command did). */
	deleted?: boolean;
	/** Listed by the run's checkpoint only (a command changed it): Open diff shows pid's diff, and there is no Undo. */
	untracked?: boolean;
	error?: string;
}

export interface ChangesItem {
	kind: 'changes';
	id: string;
	run: number;
	files: ChangesFileView[];
	/** False once a later run started: its Undo could overwrite that run's work. */
	current: boolean;
	/** pid's review of the prompt's changes (changesUpdate): "N files changed · Review" and each file's counts. */
	review?: ReviewView;
}

/** The chat's line of a prompt's changes (changesUpdate), whose Review opens them in the multi-file diff editor. */
export interface ReviewView {
	title: string;
	files: string[];
	pending: number;
}

/** One instruction file the model gets, as the chat names it. */
export interface InstructionFileView {
	/** Absolute: a click opens it. */
	path: string;
	/** Relative to the workspace folder when inside it, else the absolute path. */
	label: string;
	/** Its size on disk, for people ("1.2 KB"). */
	size: string;
	/** Cut at 32 KiB: the model gets its start only. */
	truncated: boolean;
}

/** The instruction files (AGENTS.md, CLAUDE.md) the model gets, shown when a session starts or is loaded. */
export interface InstructionsItem {
	kind: 'instructions';
	id: string;
	files: InstructionFileView[];
}

export type ChatItem = UserItem | AssistantItem | ToolItem | NoticeItem | ElicitationItem | ChangesItem | PlanItem | CommandItem | CompactionView | InstructionsItem;

export interface ChatState {
	status: ChatStatus;
	/** Whether a prompt runs (the prompt box then steers or queues a follow-up). */
	running: boolean;
	sessionId?: string;
	/** The session's title (its first message). */
	title?: string;
	/** The model's name, when known. */
	model?: string;
	/** The session's mode (or the next session's, before one exists); absent with a pid without modes. */
	mode?: ModeView;
	context: ChipView[];
	/** The context meter, once pid sent usageUpdate for the session. */
	usage?: UsageView;
	/** The commands the prompt box completes after `/`. */
	commands?: CommandView[];
	/** The session's running background jobs (jobs/list, asked again at each jobUpdate), shown under the chat. */
	jobs?: JobView[];
}

/** A running background job under the chat (jobs/list's entry). */
export interface JobView {
	jobId: string;
	command: string;
	/** When it started (RFC 3339): the view shows how long it runs. */
	startedAt: string;
	outputBytes: number;
	/** Its last lines (jobs/output with tail, redacted by pid), asked again while it runs. */
	last?: string;
}

/** A tab of the chat view: one conversation, its own pid session. */
export interface TabView {
	id: string;
	/** Its title (its first message, short), else "Chat N". */
	name: string;
	/** Its chat's status: a tab waiting for approval says so in the tab bar. */
	status: ChatStatus;
	/** The tab the view shows. */
	shown: boolean;
}

/** What the view receives: items with their markdown rendered (an answer's html, a plan's on its tool card; escaped by markdown.ts). */
export type ItemView = ChatItem & { html?: string };

/** The approval buttons' labels (approval.ts's ALLOW, ALWAYS_ALLOW, DENY). */
export type ApprovalChoiceLabel = 'Allow' | 'Always allow' | 'Deny';

/** What an error's or a notice's button asks the extension to do (extension.ts's runAction). */
export type ViewAction = NoticeAction['action'] | ErrorAction['kind'];

/** The chat's commands a page button runs (extension.ts maps them to pid.* commands). */
export type ViewCommand = 'newSession' | 'history' | 'model' | 'mode' | 'permissions' | 'showLog';

/** What the view's page sends to the extension. */
export type FromView =
	/** focused: the page holds the focus (its prompt box has it: it took it as it loaded). */
	| { type: 'ready'; focused?: boolean }
	/** The prompt box's text not yet sent (the shown tab's), each time it changes: kept through a reload. */
	| { type: 'draft'; text: string }
	| { type: 'send'; text: string; mode: QueueMode }
	| { type: 'cancel' }
	/** mode: with Allow on a plan, the mode to go on in (one of its planModes). */
	| { type: 'approve'; toolCallId: string; choice: ApprovalChoiceLabel; reason?: string; mode?: string }
	/** Shift+Tab in the prompt box: the next mode. */
	| { type: 'cycleMode' }
	/** "Rewind to here" on a message of the person's (its item id). */
	| { type: 'rewind'; id: string }
	| { type: 'job'; action: 'stop' | 'output'; jobId: string }
	| { type: 'review'; toolCallId: string }
	| { type: 'reason'; toolCallId: string; text: string }
	| { type: 'elicit'; id: string; action: 'accept' | 'decline'; values: Record<string, string | boolean> }
	| { type: 'addContext'; kind: 'file' | 'selection' | 'diagnostics' }
	| { type: 'removeContext'; id: string }
	| { type: 'action'; action: ViewAction; arg?: string }
	| { type: 'openDiff'; path: string }
	| { type: 'undo'; path: string }
	| { type: 'reviewChanges' }
	| { type: 'openFile'; path: string }
	| { type: 'openLink'; href: string }
	| { type: 'command'; command: ViewCommand }
	/** A tab clicked: show it. */
	| { type: 'showTab'; id: string }
	/** The tab bar's +: a new conversation in a tab of its own. */
	| { type: 'newTab' }
	/** A tab's ×: close it (its session stays saved). */
	| { type: 'closeTab'; id: string };

/** One change of a batch: an item added or changed (sent whole), an item removed, the new state. */
export type ViewOp = { op: 'upsert'; item: ItemView } | { op: 'remove'; id: string } | { op: 'state'; state: ChatState };

/** What the view's page receives from the extension. */
export type ToView =
	/**
	 * The shown tab's chat, whole (a tab shown, the page loaded), and the tabs. draft: what its
	 * prompt box held unsent (the page's draft messages), for a page just loaded (a reload of
	 * the page or of the window) and a tab shown again.
	 */
	| { type: 'reset'; items: ItemView[]; state: ChatState; tabs: TabView[]; draft: string }
	/** The tabs changed (one added, closed, its status or title changed). */
	| { type: 'tabs'; tabs: TabView[] }
	| { type: 'batch'; ops: ViewOp[] }
	/** Only on the person's request (pid: Focus Chat); text: what they typed while the page loaded. */
	| { type: 'focusPrompt'; text?: string };
