// The chat view: a webview in pid's own view container that renders the ChatModel (the
// page's script, src/webview/chat.ts compiled to out/webview/chat.js, builds the DOM; the
// messages both ways are webviewProtocol.ts's FromView and ToView) and sends the person's
// clicks and messages back. Its page loads nothing but the extension's own script and style
// (a strict Content-Security-Policy: no inline script, no remote resource), renders the
// model's markdown through markdown.ts (no HTML of the model's own), and never takes focus by
// itself: an approval arriving is shown, not focused. Asked for (pid: Focus Chat) before its
// page has loaded, it keeps what is typed meanwhile in an input box and moves it into the
// prompt box. What the prompt box holds unsent (the page says it as it changes) outlives a
// reload of the page or of the window: the page loaded again gets it back.

import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { viewOf, type ChatEvent, type ChatModel } from './chat';
import type { FromView, TabView, ToView, ViewOp } from './webviewProtocol';

export type { FromView, ToView };

/** How often a streaming answer is sent to the view at most (it is rendered whole each time). */
const FLUSH_MS = 40;

/**
 * ChatViewProvider is pid's chat view (VS Code calls resolveWebviewView when the view is first
 * shown). It sends the chat's changes to the page, batched (a streaming answer at most every
 * FLUSH_MS), and hands the page's messages to onMessage. Used from the extension host's one
 * thread; it never moves the focus unless reveal(true) is asked.
 */
export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
	static readonly viewId = 'pid.chat';
	/** The workspace state's key of the shown chat's unsent text (see keepDraftsIn). */
	static readonly draftKey = 'pid.chat.draft';
	private view: vscode.WebviewView | undefined;
	private ready = false;
	/** Changes not yet sent: item ids to upsert (in order), removals and a state. */
	private ops: ({ op: 'upsert'; id: string } | { op: 'remove'; id: string } | { op: 'state' })[] = [];
	private timer: NodeJS.Timeout | undefined;
	private readonly subs: vscode.Disposable[] = [];
	/** What each chat's prompt box holds unsent (the page's draft messages; a tab's comes back with it). */
	private readonly drafts = new WeakMap<ChatModel, string>();
	/** Where the shown chat's draft outlives the extension host (a window reload), once keepDraftsIn. */
	private draftStore: vscode.Memento | undefined;

	constructor(
		private readonly extensionUri: vscode.Uri,
		/** The chat the view shows (the shown tab's). */
		private readonly chat: () => ChatModel,
		private readonly onMessage: (m: FromView) => void,
		/** Called each time the page is ready and has the whole chat (the view shown first, or again after a reload). */
		private readonly onReady?: () => void,
		/** The tabs, for the tab bar (none: one chat, no bar). */
		private readonly tabs: () => TabView[] = () => [],
	) {}

	/** attach follows a chat's changes (a tab's; the chat outlives the controllers: a restart of pid keeps it); only the shown one's reach the page. */
	attach(chat: ChatModel): vscode.Disposable {
		const sub = chat.onEvent((e) => {
			if (chat === this.chat()) {
				this.changed(e);
			}
		});
		return new vscode.Disposable(() => sub.dispose());
	}

	/** showChat sends the page the chat shown now, whole (another tab was shown). */
	showChat(): void {
		clearTimeout(this.timer);
		this.timer = undefined;
		this.sendAll();
		this.storeDraft(this.drafts.get(this.chat()) ?? '');
	}

	/**
	 * keepDraftsIn keeps the shown chat's unsent text in store (the workspace's state) as it
	 * changes, and gives the text kept there (the window was reloaded) to the chat shown now.
	 */
	keepDraftsIn(store: vscode.Memento): void {
		this.draftStore = store;
		const kept = store.get<unknown>(ChatViewProvider.draftKey);
		if (typeof kept === 'string' && kept !== '' && !this.drafts.has(this.chat())) {
			this.drafts.set(this.chat(), kept);
		}
	}

	/** draftChanged takes the page's word for what the shown chat's prompt box holds. */
	private draftChanged(text: string): void {
		const chat = this.chat();
		if (text === '') {
			this.drafts.delete(chat);
		} else {
			this.drafts.set(chat, text);
		}
		this.storeDraft(text);
	}

	private storeDraft(text: string): void {
		if (this.draftStore && (this.draftStore.get<unknown>(ChatViewProvider.draftKey) ?? '') !== text) {
			void this.draftStore.update(ChatViewProvider.draftKey, text === '' ? undefined : text);
		}
	}

	/** tabsChanged sends the page the tabs (one added or closed, a status or a title changed). */
	tabsChanged(): void {
		this.post({ type: 'tabs', tabs: this.tabs() });
	}

	/** Reports whether the view is shown (its page is alive and visible). */
	get visible(): boolean {
		return this.view?.visible === true;
	}

	/**
	 * reveal shows the view without taking focus from where the person types (unless focus).
	 * With focus, while the page is not ready yet (the first time in a window it loads for a
	 * second or more, and keys pressed meanwhile would reach nothing), an input box holds what
	 * the person types until the page is ready; its text then moves into the prompt box (see
	 * openBridge).
	 */
	async reveal(focus = false): Promise<void> {
		if (this.view) {
			// A page still loading gets the focus once ready (the input box has it meanwhile).
			const bridging = focus && !this.ready;
			if (bridging) {
				this.openBridge();
			}
			this.view.show(!focus || bridging);
			if (focus) {
				this.post({ type: 'focusPrompt' });
			}
			return;
		}
		// The view was never shown: its focus command opens it and moves the focus there; it
		// goes back to the editor unless the person asked for the chat. Asked for, the prompt
		// box is focused by the page as it loads (see html).
		if (focus) {
			this.focusWhenReady = true;
			// At once: opening the view takes a second or more the first time. The view opens
			// without the focus (VS Code's "<view>.open" with preserveFocus), so the box keeps it.
			this.openBridge();
			// The extension host sends a quick input's show on a timer of 0 ms: this one, queued
			// after it, then a round trip to the workbench (which handles its messages in order)
			// let the box be shown before the view starts to open.
			await new Promise((resolve) => setTimeout(resolve, 0));
			await vscode.commands.executeCommand('setContext', 'pid.chatOpening', true); // (true until the page is ready)
			try {
				await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.open`, { preserveFocus: true });
				// Opened (its page comes once VS Code asks for it) and the box still takes the keys.
				if (this.bridge || this.ready) {
					this.post({ type: 'focusPrompt' });
					return;
				}
			} catch {
				// An older VS Code without it: the focus command below.
			}
		}
		await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
		if (focus && this.bridge && !this.ready) {
			// The view took the focus as it opened: it goes to the view only once the page is
			// ready; until then a fresh box (with what was typed) has it.
			await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
			this.openBridge(true);
		}
		if (focus) {
			this.post({ type: 'focusPrompt' });
		} else {
			await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
		}
	}

	/**
	 * putInPrompt puts text in the prompt box, before what it holds, with the cursor at the end
	 * (a rewound message, to edit and send again); nothing when the page is not shown.
	 */
	putInPrompt(text: string): void {
		if (this.view?.visible && this.ready && text !== '') {
			this.post({ type: 'focusPrompt', text });
		}
	}

	/** The input box holding what is typed while the page loads (openBridge), while it is open. */
	private bridge: vscode.InputBox | undefined;
	/** Text typed into a bridge closed before the page was ready (Escape): it goes to the prompt box. */
	private bridged = '';

	/**
	 * openBridge shows an input box that takes the keys typed while the chat's page loads:
	 * once the page is ready (closeBridge) its text moves into the prompt box with the cursor;
	 * Enter in it sends the text as the prompt box's Enter would. Escape closes it and keeps
	 * its text for the prompt box. again: replace the open one by a fresh one holding its text
	 * (a box shown takes the focus; the open one may have lost it).
	 */
	private openBridge(again = false): void {
		const old = this.bridge;
		if (old && !again) {
			return;
		}
		this.bridge = undefined;
		old?.dispose();
		const box = vscode.window.createInputBox();
		box.value = old?.value ?? '';
		box.title = 'pid: Chat';
		box.prompt = 'The chat is opening: what you type here moves into its prompt box (Enter sends it now).';
		box.ignoreFocusOut = true;
		this.bridge = box;
		box.onDidAccept(() => {
			if (this.bridge !== box) {
				return;
			}
			const text = box.value;
			this.bridge = undefined;
			box.dispose();
			if (text.trim() !== '') {
				this.onMessage({ type: 'send', text, mode: 'steer' });
			}
		});
		box.onDidHide(() => {
			if (this.bridge === box) {
				this.bridged += box.value;
				this.bridge = undefined;
				box.dispose();
			}
		});
		box.show();
	}

	/**
	 * handOver gives the page just ready the focus and what was typed in the input box while it
	 * loaded. No key may fall between the two. focused: the page took the focus as it loaded
	 * (its prompt box has the keys typed since): the focus stays where it is (moving it to the
	 * view again blurs the page for a moment, and keys typed then are lost). Otherwise the focus
	 * moves to the view while the box is still open (it ignores losing the focus). Either way the
	 * box's text is read only after a round trip to the workbench, which delivers every change
	 * of its value made before (the workbench's messages come in order), and then it closes.
	 */
	private async handOver(view: vscode.WebviewView, focused: boolean): Promise<void> {
		if (!this.focusWhenReady && !this.bridge && this.bridged === '') {
			return;
		}
		this.focusWhenReady = false;
		if (this.bridge || this.bridged !== '') {
			if (focused) {
				await vscode.commands.executeCommand('setContext', 'pid.chatOpening', false);
			} else {
				try {
					await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
				} catch {
					view.show(false);
				}
			}
		}
		if (this.view !== view || !this.ready) {
			// The page went away meanwhile: the next one gets the focus and the text.
			this.focusWhenReady = true;
			return;
		}
		const typed = this.closeBridge();
		this.post({ type: 'focusPrompt', ...(typed ? { text: typed } : {}) });
	}

	/** closeBridge closes the input box of openBridge and returns what was typed in it (undefined: no bridge, nothing kept). */
	private closeBridge(): string | undefined {
		const box = this.bridge;
		if (!box && this.bridged === '') {
			return undefined;
		}
		this.bridge = undefined;
		const text = this.bridged + (box?.value ?? '');
		this.bridged = '';
		box?.dispose();
		void vscode.commands.executeCommand('setContext', 'pid.chatOpening', false);
		return text;
	}

	/** resolveWebviewView (VS Code calls it) gives the view its page; the page says ready, then gets the whole chat. */
	resolveWebviewView(view: vscode.WebviewView): void {
		this.view = view;
		this.ready = false;
		const media = vscode.Uri.joinPath(this.extensionUri, 'media');
		const script = vscode.Uri.joinPath(this.extensionUri, 'out', 'webview');
		view.webview.options = { enableScripts: true, localResourceRoots: [media, script] };
		view.webview.html = this.html(view.webview, media, script, this.focusWhenReady);
		this.subs.push(
			view.webview.onDidReceiveMessage((m: FromView) => {
				if (m?.type === 'draft') {
					this.draftChanged(typeof m.text === 'string' ? m.text : '');
					return;
				}
				if (m?.type === 'ready') {
					this.ready = true;
					// A page just loaded: the text its prompt box held before (a reload) goes back in.
					this.sendAll();
					void this.handOver(view, m.focused === true);
					this.onReady?.();
					return;
				}
				this.onMessage(m);
			}),
			view.onDidDispose(() => {
				if (this.view === view) {
					this.view = undefined;
					this.ready = false;
				}
			}),
		);
	}

	/**
	 * html is the page. focus: the person asked for the prompt box (pid: Focus Chat) before
	 * the page existed: the page focuses it as soon as its script runs, without waiting for
	 * the ready round trip, so that what they type meanwhile lands in it.
	 */
	private html(webview: vscode.Webview, media: vscode.Uri, script: vscode.Uri, focus: boolean): string {
		const nonce = crypto.randomBytes(16).toString('base64');
		const css = webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css'));
		const js = webview.asWebviewUri(vscode.Uri.joinPath(script, 'chat.js'));
		const csp = [
			"default-src 'none'",
			`style-src ${webview.cspSource}`,
			`script-src 'nonce-${nonce}'`,
			`font-src ${webview.cspSource}`,
			`img-src ${webview.cspSource}`,
		].join('; ');
		return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>pid</title>
</head>
<body${focus ? ' data-focus-prompt="1"' : ''}>
<div id="pid-chat">
<div id="tabs" role="tablist" aria-label="pid's conversations" hidden></div>
<div id="log" role="log" aria-live="polite" aria-label="pid's conversation"></div>
<div id="queue" aria-label="Messages waiting for pid"></div>
<div id="composer">
<div id="statusline" aria-live="polite"></div>
<div id="jobs" aria-label="Background jobs" hidden></div>
<div id="meter" hidden><span class="meter-bar"><span class="meter-fill"></span></span><span class="meter-text"></span></div>
<div id="chips"></div>
<div id="completions" role="listbox" aria-label="pid's commands" hidden></div>
<textarea id="prompt" rows="3" aria-label="Message to pid"></textarea>
<div id="bar">
<button id="add-file" class="secondary" title="Add a workspace file (or type @)">@ File</button>
<button id="add-selection" class="secondary" title="Add the editor's selection (or the whole file)">+ Selection</button>
<button id="add-problems" class="secondary" title="Add the problems VS Code reports in the current file">+ Problems</button>
<span class="spacer"></span>
<button id="mode" class="secondary mode" title="The session's mode: what pid may do without asking" hidden>Mode</button>
<button id="model" class="secondary" title="Pick the model">Model</button>
<button id="stop" class="secondary" title="Stop pid (pid: Cancel)">Stop</button>
<button id="send" title="Send (Enter)">Send</button>
</div>
</div>
</div>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
	}

	/** A focusPrompt asked for before the page was ready: sent once it is. */
	private focusWhenReady = false;

	private post(m: ToView): void {
		if (this.view && this.ready) {
			void this.view.webview.postMessage(m);
		} else if (m.type === 'focusPrompt') {
			this.focusWhenReady = true;
		}
	}

	/** sendAll sends the shown chat whole, with what its prompt box held unsent. */
	private sendAll(): void {
		this.ops = [];
		const chat = this.chat();
		this.post({ type: 'reset', items: chat.all().map(viewOf), state: chat.state, tabs: this.tabs(), draft: this.drafts.get(chat) ?? '' });
	}

	private changed(e: ChatEvent): void {
		if (e.type === 'reset') {
			this.ops = [];
			clearTimeout(this.timer);
			this.timer = undefined;
			this.sendAll();
			return;
		}
		if (e.type === 'upsert') {
			const last = this.ops[this.ops.length - 1];
			if (!(last && last.op === 'upsert' && last.id === e.item.id)) {
				this.ops.push({ op: 'upsert', id: e.item.id });
			}
		} else if (e.type === 'remove') {
			this.ops.push({ op: 'remove', id: e.id });
		} else {
			this.ops.push({ op: 'state' });
		}
		// A streaming answer changes often: send at most every FLUSH_MS; anything else at once.
		const streaming = e.type === 'upsert' && e.item.kind === 'assistant' && e.item.streaming;
		if (!streaming) {
			this.flush();
		} else if (!this.timer) {
			this.timer = setTimeout(() => this.flush(), FLUSH_MS);
		}
	}

	private flush(): void {
		clearTimeout(this.timer);
		this.timer = undefined;
		const ops = this.ops;
		this.ops = [];
		if (ops.length === 0) {
			return;
		}
		const chat = this.chat();
		const out: ViewOp[] = [];
		const seen = new Set<string>();
		// Each item is sent once per batch, as it is now; the state last.
		let state = false;
		for (const o of ops) {
			if (o.op === 'upsert') {
				if (seen.has(o.id)) {
					continue;
				}
				seen.add(o.id);
				const item = chat.get(o.id);
				if (item) {
					out.push({ op: 'upsert', item: viewOf(item) });
				}
			} else if (o.op === 'remove') {
				out.push({ op: 'remove', id: o.id });
			} else {
				state = true;
			}
		}
		if (state) {
			out.push({ op: 'state', state: chat.state });
		}
		this.post({ type: 'batch', ops: out });
	}

	/** dispose stops sending (a pending batch is dropped) and lets go of the view's listeners. */
	dispose(): void {
		clearTimeout(this.timer);
		this.bridge?.dispose();
		this.bridge = undefined;
		for (const s of this.subs) {
			s.dispose();
		}
	}
}
