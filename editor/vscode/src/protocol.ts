// The shapes of pid's protocol that this extension uses, and the methods it calls and answers
// (docs/protocol.md in the pid repository is the contract: test/protocol.test.ts fails when a
// method named in METHODS, or a field or a string value of a type here, is not in it, and
// when the extension's code uses a method METHODS does not name). No `vscode` import: tests
// run this under plain node.

/** The methods of pid's protocol this extension uses, by who sends them. */
export const METHODS = {
	/** Requests the extension sends to pid. */
	requests: [
		'initialize',
		'shutdown',
		'session/new',
		'session/prompt',
		'session/steer',
		'session/followUp',
		'models/list',
		'session/setModel',
		'session/setMode',
		'permissions/list',
		'permissions/revoke',
		'tools/list',
		'session/list',
		'session/load',
		'session/close',
		'checkpoints/list',
		'checkpoints/diff',
		'session/rewind',
		'changes/list',
		'changes/undo',
		'changes/keep',
		'trust/list',
		'trust/grant',
		'trust/revoke',
		'commands/list',
		'skills/list',
		'agents/list',
		'jobs/list',
		'jobs/kill',
		'jobs/output',
	],
	/** Notifications the extension sends to pid. */
	notificationsSent: ['initialized', 'exit'],
	/** Requests pid sends that the extension answers. */
	requestsAnswered: ['beforeToolCall', 'workspace/requestTrust', 'fs/read_text_file', 'fs/write_text_file', 'elicitation/create', 'editor/diagnostics', 'network/allowHost'],
	/** Notifications of pid's that the extension reads (it ignores the others). */
	notifications: [
		'messageStart',
		'messageUpdate',
		'messageEnd',
		'toolStart',
		'toolExecutionStart',
		'$/toolUpdate',
		'toolEnd',
		'compactionStart',
		'compactionEnd',
		'modeUpdate',
		'planUpdate',
		'usageUpdate',
		'changesUpdate',
		'commandOutput',
		'jobUpdate',
		'subagentStart',
		'subagentEnd',
		'window/logMessage',
		'window/showMessage',
	],
} as const;

export interface TextContent {
	type: 'text';
	text: string;
}

export interface ImageContent {
	type: 'image';
	data: string;
	mimeType: string;
}

export interface ThinkingContent {
	type: 'thinking';
	thinking: string;
}

export interface ToolCallContent {
	type: 'toolCall';
	id: string;
	name: string;
	arguments: unknown;
}

export type Content = TextContent | ImageContent | ThinkingContent | ToolCallContent;

export interface UserMessage {
	role: 'user';
	content: Content[];
	timestamp?: number;
}

export interface AssistantMessage {
	role: 'assistant';
	content: Content[];
	stopReason?: StopReason;
	errorMessage?: string;
	usage?: unknown;
	timestamp?: number;
}

export interface ToolResultMessage {
	role: 'toolResult';
	toolCallId: string;
	toolName: string;
	content: Content[];
	details?: unknown;
	isError: boolean;
	addedToolNames?: string[];
	timestamp?: number;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

export type StopReason = 'stop' | 'toolUse' | 'length' | 'error' | 'aborted';

export interface ToolInfo {
	name: string;
	description?: string;
	parameters?: unknown;
	executionMode?: 'parallel' | 'sequential';
}

/** What initialize's capabilities.experimental.pid declares the editor answers. */
export interface EditorCapabilities {
	beforeToolCall?: boolean;
	trust?: boolean;
	fs?: { readTextFile?: boolean; writeTextFile?: boolean };
	/** The editor answers editor/diagnostics (the problems of the files a batch changed). */
	diagnostics?: boolean;
	/** The editor wants usageUpdate after each model call (the context meter). */
	usage?: boolean;
	/** The editor answers network/allowHost (a host the allow-list does not know). */
	networkApproval?: boolean;
}

/** The parts of initialize's params (LSP's InitializeParams) that pid reads. */
export interface InitializeParams {
	rootUri: string | null;
	workspaceFolders: { uri: string; name: string }[] | null;
	capabilities: { experimental: { pid: EditorCapabilities } };
	initializationOptions?: unknown;
}

export interface InitializeResult {
	serverInfo?: { name: string; version?: string };
	capabilities?: {
		experimental?: { pid?: { protocolVersion?: string; tools?: ToolInfo[]; sessions?: boolean } };
	};
}

/**
 * A content block of session/prompt's `content` (ACP's shapes): text, an image, a link to a
 * file the agent may read itself, or a resource whose text is given (a selection, an unsaved
 * buffer; a range goes in the uri's fragment, `#L10-L20`).
 */
export type PromptBlock =
	| { type: 'text'; text: string }
	| { type: 'image'; data: string; mimeType: string }
	| { type: 'resource_link'; uri: string; name: string }
	| { type: 'resource'; resource: { uri: string; text: string; mimeType?: string } };

/** session/prompt's params: at least one of text and content. */
export interface PromptParams {
	sessionId: string;
	text?: string;
	content?: PromptBlock[];
}

/** session/steer's and session/followUp's params. */
export interface QueueParams {
	sessionId: string;
	text: string;
}

/** session/setModel's params. */
export interface SetModelParams {
	sessionId: string;
	model: ModelEntry;
}

/** One entry of models/list. */
export interface ModelEntry {
	provider: string;
	id: string;
	name?: string;
	[key: string]: unknown;
}

export interface ModelsListResult {
	models: ModelEntry[];
	current?: ModelEntry;
}

/** permissions/list's result. */
export interface PermissionsListResult {
	permissions: RememberedPermission[] | null;
}

/** One remembered "always" answer of permissions/list. */
export interface RememberedPermission {
	id: string;
	tool: string;
	path?: string;
	pattern?: string;
	decision: string;
	/** `workspace:/abs/root`. */
	scope: string;
}

/** fs/read_text_file's params (pid asks the editor for a file as the editor has it). */
export interface ReadTextFileParams {
	sessionId: string;
	/** Absolute. */
	path: string;
	/** 1-based first line. */
	line?: number;
	/** How many lines at most. */
	limit?: number;
}

/** fs/read_text_file's result. */
export interface ReadTextFileResult {
	content: string;
}

/** fs/write_text_file's params (the editor applies the content to its buffer and saves it). */
export interface WriteTextFileParams {
	sessionId: string;
	path: string;
	content: string;
}

/** elicitation/create's params: an MCP server's question during a tool call. */
export interface ElicitationParams {
	message: string;
	requestedSchema?: { type?: string; properties?: Record<string, unknown>; required?: string[] };
	_meta?: { pid?: { sessionId?: string; server?: string; toolCallId?: string } };
}

export type ElicitationResult = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' };

/** The `data` of an error a person will read: why, and the setting to change. */
export interface ErrorData {
	reason?: string;
	setting?: string;
}

export type PermissionValue = 'allow' | 'ask' | 'deny';

/** session/new params: every field optional (the model may come from pid's settings). */
export interface SessionNewParams {
	cwd?: string;
	model?: Record<string, unknown>;
	toolExecution?: 'parallel' | 'sequential';
	permissions?: { default?: PermissionValue; tools?: Record<string, PermissionValue> };
	scriptedTools?: unknown[];
	systemPrompt?: string;
	/** The mode the session starts in (default: `default`); one the session is not offered is -32602. */
	mode?: ModeId;
	[key: string]: unknown;
}

/**
 * A session's mode: what runs without asking. `bypassPermissions` is offered only when the
 * user settings allow it; pid may add others, so a client keeps any id availableModes gives.
 */
export type ModeId = 'default' | 'acceptEdits' | 'plan' | 'auto' | 'bypassPermissions' | (string & {});

/** One mode a session may switch to (session/new's and session/load's modes.availableModes). */
export interface SessionMode {
	id: ModeId;
	name: string;
	description?: string;
}

/** session/new's and session/load's `modes`: the session's mode and the ones it may switch to. */
export interface SessionModes {
	currentModeId: ModeId;
	availableModes: SessionMode[];
}

/** session/setMode's params; pid answers null and sends modeUpdate first when the mode changed. */
export interface SetModeParams {
	sessionId: string;
	modeId: ModeId;
}

/** modeUpdate's params: the session's mode changed (session/setMode, or exit_plan_mode approved). */
export interface ModeUpdateParams {
	sessionId: string;
	currentModeId: ModeId;
}

/** tools/list's result. */
export interface ToolsListResult {
	tools: ToolInfo[];
}

export interface SessionNewResult {
	sessionId: string;
	tools: ToolInfo[];
	/** Absent from a pid without modes. */
	modes?: SessionModes;
	/** The instruction files the model gets, in the order it reads them; absent when none. */
	instructions?: InstructionFile[];
}

/**
 * One instruction file the model gets (the user's AGENTS.md, then a trusted workspace's
 * AGENTS.md or CLAUDE.md per folder down to the cwd), as read when the session was made or
 * loaded: session/new's, session/load's and session/fork's `instructions`.
 */
export interface InstructionFile {
	/** Absolute. */
	path: string;
	/** The file's size on disk. */
	bytes: number;
	/** Longer than 32 KiB: the model gets its first 32768 bytes and is told it can read the rest. */
	truncated: boolean;
}

export interface PromptResult {
	stopReason: StopReason;
	messages: Message[];
	terminated?: boolean;
	/** Set when the prompt was a `/NAME` command: output when it answered by itself. */
	command?: { name: string; output?: string; isError?: boolean };
}

/** One command of commands/list: typed as `/NAME`; input is there when it takes text after its name. */
export interface CommandInfo {
	name: string;
	description: string;
	input?: { hint: string };
}

/** One entry of skills/list or agents/list: a SKILL.md skill or an agent file, in use or left out (ignored says why). */
export interface SkillInfo {
	name: string;
	description: string;
	/** The SKILL.md file (or the agent's file). */
	path: string;
	source: 'workspace' | 'user';
	ignored?: string;
	warnings?: string[];
}

/** skills/list's result. */
export interface SkillsListResult {
	skills: SkillInfo[];
}

/** agents/list's result (its entries have a skill's shape). */
export interface AgentsListResult {
	agents: SkillInfo[];
}

/** commands/list's result. */
export interface CommandsListResult {
	commands: CommandInfo[];
}

/** commandOutput's params: a `/NAME` command answered by itself (before the prompt's result). */
export interface CommandOutputParams {
	sessionId: string;
	name: string;
	text: string;
	isError?: boolean;
}

export type PlanStatus = 'pending' | 'in_progress' | 'completed';

/** One entry of the plan (todo_write's todos). */
export interface PlanEntry {
	content: string;
	status: PlanStatus;
	priority?: 'high' | 'medium' | 'low';
}

/** planUpdate's params: the whole plan, in order (entries [] when it was cleared). */
export interface PlanUpdateParams {
	sessionId: string;
	entries: PlanEntry[];
}

/** usageUpdate's params: the context the next model call sends, the window, the session's cost so far. */
export interface UsageUpdateParams {
	sessionId: string;
	used: number;
	size: number;
	cost?: { amount: number; currency: string };
}

/** subagentStart's params: a task call started a child session (sessionId is the parent's). */
export interface SubagentStartParams {
	sessionId: string;
	toolCallId: string;
	childSessionId: string;
	description: string;
	agent: string;
	/** The git worktree the child works in, when it has one. */
	worktree?: string;
}

/** subagentEnd's params: the child ended (stopReason: stop, error, aborted or maxTurns). */
export interface SubagentEndParams {
	sessionId: string;
	toolCallId: string;
	childSessionId: string;
	stopReason: string;
}

/** An LSP position, 0-based (character in UTF-16 code units). */
export interface Position {
	line: number;
	character: number;
}

/** One problem of editor/diagnostics' answer: LSP's Diagnostic with the file's absolute path. */
export interface Diagnostic {
	path: string;
	range: { start: Position; end: Position };
	/** 1 error, 2 warning, 3 information, 4 hint. */
	severity: 1 | 2 | 3 | 4;
	message: string;
	source?: string;
	code?: string | number;
}

/** editor/diagnostics' params: the files a batch changed (absolute; [] means every file with problems). */
export interface EditorDiagnosticsParams {
	sessionId: string;
	paths: string[];
	waitMs: number;
	/** How long to wait for a language's first report (its server may be starting). */
	firstWaitMs?: number;
}

/** editor/diagnostics' result. */
export interface EditorDiagnosticsResult {
	diagnostics: Diagnostic[];
	/** The files whose language server was still starting (no first report within firstWaitMs). */
	starting?: string[];
}

export interface ToolResultPayload {
	content: Content[];
	details?: unknown;
}

export interface ToolStartParams {
	sessionId: string;
	toolCallId: string;
	toolName: string;
	args: unknown;
}

export interface ToolUpdateParams {
	sessionId: string;
	toolCallId: string;
	toolName: string;
	partialResult: ToolResultPayload;
}

export interface ToolEndParams {
	sessionId: string;
	toolCallId: string;
	toolName: string;
	result: ToolResultPayload;
	isError: boolean;
}

export interface MessageParams {
	sessionId: string;
	message: Message;
}

/** messageUpdate's params: what an assistant message streamed (text comes with text_delta). */
export interface MessageUpdateParams {
	sessionId: string;
	delta: { type: string; contentIndex: number; delta?: string };
	message?: AssistantMessage;
}

export interface LogMessageParams {
	type: number;
	message: string;
}

/** What an "allowAlways" or "denyAlways" answer to a beforeToolCall would cover. */
export interface AlwaysScope {
	tool: string;
	/** The argument pattern (a bash command's first words, a file's path); absent: the whole tool. */
	pattern?: string;
	/** For people, e.g. "bash commands starting with `npm test` in this workspace". */
	description: string;
}

export interface BeforeToolCallParams {
	sessionId: string;
	toolCallId: string;
	toolName: string;
	args: unknown;
	/**
	 * Absent when no "always" answer can be scoped as narrowly as this call (then the editor
	 * does not offer one, and pid counts an allowAlways answer as once).
	 */
	always?: AlwaysScope;
	/** For an MCP tool: what its server says about it (hints, never trusted to skip a question). */
	annotations?: ToolAnnotations;
	/** Set when a subagent (a child session, sessionId) asks: its parent's session. */
	parentSessionId?: string;
	/**
	 * Set when a bash call asks to run outside the sandbox (`unsandboxed: true`): it will run
	 * with the user's full rights and the network; justification is the model's.
	 */
	sandbox?: { escalation: boolean; justification: string };
}

/** An MCP tool's annotations, as its server gives them. */
export interface ToolAnnotations {
	title?: string;
	readOnlyHint?: boolean;
	destructiveHint?: boolean;
	idempotentHint?: boolean;
	openWorldHint?: boolean;
}

export type Decision = 'allow' | 'allowAlways' | 'deny' | 'denyAlways';

export interface BeforeToolCallAnswer {
	decision: Decision;
	reason?: string;
	/**
	 * For exit_plan_mode only: with decision allow, the mode the session goes on in
	 * (`acceptEdits` or `auto`; absent: `default`).
	 */
	mode?: 'acceptEdits' | 'auto';
}

/**
 * workspace/requestTrust's params: pid started a session in a workspace folder that is not
 * trusted, and ignored what its .pid/settings.json set that would widen what pid may do.
 */
export interface RequestTrustParams {
	/** The folder's absolute path. */
	folder: string;
	/** One entry per ignored setting, e.g. `model` or `permissions.tools["bash"][0] allow "npm test"`. */
	ignored: string[];
}

export interface RequestTrustAnswer {
	trusted: boolean;
}

/**
 * network/allowHost's params: a sandboxed command (or a fetch call) of the session wants to
 * reach a host the allow-list does not know; its connection waits (at most 60 s).
 */
export interface AllowHostParams {
	sessionId: string;
	/** The call whose command connects (a job's id for a background job). */
	toolCallId: string;
	host: string;
	port: number;
	/** The command line, or `fetch URL`. */
	command: string;
}

export interface AllowHostAnswer {
	decision: 'allow' | 'allowAlways' | 'deny';
}

/** trust/list's result. */
export interface TrustListResult {
	folders: TrustedFolder[] | null;
}

/** One entry of trust/list. */
export interface TrustedFolder {
	folder: string;
	/** When it was trusted (RFC 3339). */
	trustedAt: string;
}

/** One saved session of session/list. */
export interface SessionSummary {
	sessionId: string;
	/** The session's working folder (absolute). */
	cwd: string;
	/** The first user text, cut to 80 characters by pid. */
	title: string;
	/** ISO 8601 (UTC). */
	createdAt: string;
	/** ISO 8601 (UTC); session/list sorts by it, newest first. */
	updatedAt: string;
	/** The messages of the current branch. */
	messageCount: number;
}

/** session/list's params. */
export interface SessionListParams {
	/** The previous page's nextCursor. */
	cursor?: string;
	/** Only this folder's sessions (absolute). */
	cwd?: string;
}

export interface SessionListResult {
	sessions: SessionSummary[];
	/** Pass as `cursor` for the next page; absent on the last one. */
	nextCursor?: string;
}

/** A compaction among a loaded session's items: the messages before firstKeptIndex were summarized. */
export interface CompactionItem {
	role: 'compaction';
	summary: string;
	tokensBefore: number;
	/** The index, among the items, of the first message the model still sees after the summary. */
	firstKeptIndex: number;
	reason: CompactionReason;
	timestamp?: number | string;
}

/** A loaded session's item: a message of its transcript, or a compaction where it happened. */
export type SessionItem = Message | CompactionItem;

/** session/load's (and session/fork's) result. */
export interface SessionLoadResult {
	sessionId: string;
	tools: ToolInfo[];
	messages: SessionItem[];
	/** The mode the session was saved in (bypassPermissions, or a mode no longer offered, loads as default). */
	modes?: SessionModes;
	/** The instruction files the model gets now, as in SessionNewResult; absent when none. */
	instructions?: InstructionFile[];
}

export type CompactionReason = 'manual' | 'threshold' | 'overflow';

/** How a checkpoint's run changed a file. */
export type FileChangeKind = 'added' | 'modified' | 'deleted';

/** One file a checkpoint's run changed (its path absolute). */
export interface CheckpointFile {
	path: string;
	change: FileChangeKind;
}

/**
 * One checkpoint of checkpoints/list: the files as they were before one session/prompt (its
 * user message). A rewind's own checkpoint (the state it replaced) is listed too.
 */
export interface Checkpoint {
	id: string;
	/** The prompt's text, its first 200 characters. */
	prompt: string;
	/** RFC 3339. */
	timestamp: string;
	files: CheckpointFile[];
	/** Some of the run's changes cannot be taken back; reason says which and why. */
	incomplete?: boolean;
	reason?: string;
}

/** checkpoints/list's result: oldest first. */
export interface CheckpointsListResult {
	checkpoints: Checkpoint[];
}

/** One file of checkpoints/diff: a unified diff from before the checkpoint's prompt to now. */
export interface CheckpointFileDiff {
	path: string;
	change: FileChangeKind;
	diff: string;
	/** Why a rewind of the files (without force) would leave it as it is; absent: it would be restored. */
	skip?: string;
}

/** checkpoints/diff's result. */
export interface CheckpointDiffResult {
	files: CheckpointFileDiff[];
}

/** A hunk's review state (changes/list). */
export type HunkState = 'pending' | 'kept';

/** One hunk of a changed file (changes/list): its lines before (old) and now (new), as a unified diff counts them. */
export interface ChangeHunk {
	id: string;
	oldStart: number;
	oldLines: number;
	newStart: number;
	newLines: number;
	header: string;
	state: HunkState;
}

/** One file of changes/list: its change since before the prompt, cut into hunks, and the tools that made it. */
export interface ReviewFile {
	path: string;
	change: FileChangeKind;
	binary?: boolean;
	reviewed: boolean;
	hunks: ChangeHunk[];
	by: string[];
}

/** changes/list's result. */
export interface ChangesListResult {
	checkpointId: string;
	files: ReviewFile[];
}

/** One hunk an undo left as it is, and why (changes/undo's skipped). */
export interface SkippedHunk {
	hunkId: string;
	reason: string;
}

/** changes/undo's result: safetyCheckpointId is the undo's own checkpoint ("" when nothing was undone). */
export interface ChangesUndoResult {
	path: string;
	undone: string[];
	skipped: SkippedHunk[];
	safetyCheckpointId: string;
}

/** changes/keep's result. */
export interface ChangesKeepResult {
	kept: string[];
}

/** One file of changesUpdate: its change, the lines its hunks add and remove, the hunks not kept. */
export interface ChangeCount {
	path: string;
	change: FileChangeKind;
	added: number;
	removed: number;
	pending: number;
}

/** changesUpdate's params: the whole list of the prompt's changed files so far. */
export interface ChangesUpdateParams {
	sessionId: string;
	checkpointId: string;
	files: ChangeCount[];
}

/** What session/rewind puts back: the files, the conversation (it goes on from just before the prompt), or both. */
export type RewindRestore = 'files' | 'conversation' | 'both';

/** session/rewind's params. */
export interface RewindParams {
	sessionId: string;
	checkpointId: string;
	restore: RewindRestore;
	/** Restore files that changed since pid last wrote them too (else they are skipped). */
	force?: boolean;
}

/** A file a rewind left as it is, and why. */
export interface RewindSkipped {
	path: string;
	reason: string;
}

/** session/rewind's result. */
export interface RewindResult {
	restored: string[];
	removed: string[];
	skipped: RewindSkipped[];
	/** The checkpoint of the state the rewind replaced (a rewind to it undoes this one). */
	safetyCheckpointId: string;
}

export interface CompactionStartParams {
	sessionId: string;
	reason: CompactionReason;
}

/** compactionEnd's kept: the latest request quoted, how many plan entries, the files listed. */
export interface CompactionKept {
	userMessage: boolean;
	planEntries: number;
	files: string[];
}

export interface CompactionEndParams {
	sessionId: string;
	reason: CompactionReason;
	summary?: string;
	tokensBefore?: number;
	/** What the summary message keeps word for word. */
	kept?: CompactionKept;
	/** Set when the compaction failed or was cancelled (the transcript is as it was). */
	error?: string;
}

/** The text of content blocks: text as is, images as a placeholder, the rest left out. */
export function contentText(content: readonly Content[] | undefined): string {
	if (!Array.isArray(content)) {
		return '';
	}
	const parts: string[] = [];
	for (const c of content) {
		if (c && c.type === 'text' && typeof c.text === 'string') {
			parts.push(c.text);
		} else if (c && c.type === 'image') {
			parts.push(`[image ${c.mimeType}]`);
		}
	}
	return parts.join('\n');
}

/** The text of the last assistant message of a run: its answer. */
export function finalAnswer(messages: readonly Message[]): string | undefined {
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m.role === 'assistant') {
			return contentText(m.content);
		}
	}
	return undefined;
}
