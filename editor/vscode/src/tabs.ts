// The chat view's tabs: several conversations in one window, each its own chat and its own
// pid session (PidController) with its own mode and model, all through the window's one pid
// (daemon.ts routes pid's requests by session; each conversation takes its own session's
// notifications). One tab is shown; the others go on running. The approval keys answer the
// shown tab's question; a question waiting in another tab is said, never answered unseen.
// No `vscode` import: tests drive it under plain node.

import { ChatModel, type ToolItem } from './chat';
import type { PidController } from './controller';
import type { TabView } from './webviewProtocol';

/** A tab: its chat (it outlives controllers: a restart of pid keeps it) and its conversation. */
export interface Tab {
	readonly id: string;
	/** Its number, for its name before it has a title ("Chat 2"). */
	readonly n: number;
	readonly chat: ChatModel;
	controller: PidController;
}

/** What ChatTabs needs: a conversation for a chat (a new tab's, or one replacing another after a restart). */
export type MakeController = (chat: ChatModel) => PidController;

/** tabName is a tab's name: its conversation's title (its first message, short), else "Chat N". */
export function tabName(tab: Tab): string {
	const t = (tab.chat.state.title ?? '').replace(/\s+/g, ' ').trim();
	if (t === '') {
		return `Chat ${tab.n}`;
	}
	return t.length > 30 ? `${t.slice(0, 29)}…` : t;
}

/**
 * ChatTabs keeps the window's tabs and which one is shown. Used from the extension host's
 * one thread; listeners hear of every change of the tabs or of a tab's status.
 */
export class ChatTabs {
	private readonly tabs: Tab[] = [];
	private shownId: string;
	private next = 0;
	private readonly listeners = new Set<() => void>();
	private readonly subs = new Map<string, { dispose(): void }>();

	constructor(private readonly make: MakeController, first?: ChatModel) {
		this.shownId = this.add(first).id;
	}

	/** onChange calls l whenever a tab is added, closed, shown, or its status or title changes. */
	onChange(l: () => void): { dispose(): void } {
		this.listeners.add(l);
		return { dispose: () => this.listeners.delete(l) };
	}

	private fire(): void {
		for (const l of [...this.listeners]) {
			l();
		}
	}

	/** The tab shown. */
	get shown(): Tab {
		return this.tabs.find((t) => t.id === this.shownId) ?? this.tabs[0];
	}

	/** Every tab, in order. */
	all(): Tab[] {
		return [...this.tabs];
	}

	/** The tab with that id. */
	get(id: string): Tab | undefined {
		return this.tabs.find((t) => t.id === id);
	}

	/** The tab whose conversation is (or continues) sessionId. */
	bySession(sessionId: string): Tab | undefined {
		return this.tabs.find((t) => t.controller.currentSession === sessionId || t.controller.stopped === sessionId);
	}

	/** add opens a tab (a new conversation; chat: one to keep) and returns it; it is not shown yet. */
	add(chat: ChatModel = new ChatModel()): Tab {
		this.next++;
		const tab: Tab = { id: `tab${this.next}`, n: this.next, chat, controller: this.make(chat) };
		this.tabs.push(tab);
		let last = '';
		this.subs.set(
			tab.id,
			chat.onEvent((e) => {
				if (e.type !== 'state') {
					return;
				}
				// Only what the tab bar shows.
				const now = `${chat.state.status}|${chat.state.title ?? ''}`;
				if (now !== last) {
					last = now;
					this.fire();
				}
			}),
		);
		this.fire();
		return tab;
	}

	/** show makes the tab with that id the shown one; false when there is none. */
	show(id: string): boolean {
		if (!this.get(id)) {
			return false;
		}
		if (this.shownId !== id) {
			this.shownId = id;
			this.fire();
		}
		return true;
	}

	/**
	 * close closes a tab: its prompt is cancelled and its session closed in pid (its file stays,
	 * Session History has it). The last tab is never closed (a new session starts in it
	 * instead). The tab beside it is shown when it was.
	 */
	async close(id: string): Promise<void> {
		const i = this.tabs.findIndex((t) => t.id === id);
		if (i < 0) {
			return;
		}
		const tab = this.tabs[i];
		if (this.tabs.length === 1) {
			tab.controller.newSession();
			return;
		}
		this.tabs.splice(i, 1);
		this.subs.get(id)?.dispose();
		this.subs.delete(id);
		if (this.shownId === id) {
			this.shownId = this.tabs[Math.min(i, this.tabs.length - 1)].id;
		}
		this.fire();
		await tab.controller.dispose();
	}

	/** The tabs as the page's tab bar shows them. */
	views(): TabView[] {
		return this.tabs.map((t) => ({ id: t.id, name: tabName(t), status: t.chat.state.status, shown: t.id === this.shownId }));
	}

	/**
	 * pending returns the question the approval keys answer: the shown tab's first pending
	 * one, with its tab; else the first one waiting in another tab (elsewhere: the keys must
	 * not answer what the person does not see); undefined when none waits.
	 */
	pending(): { tab: Tab; card: ToolItem; elsewhere: boolean } | undefined {
		const shown = this.shown;
		const here = shown.chat.firstPendingApproval();
		if (here) {
			return { tab: shown, card: here, elsewhere: false };
		}
		for (const tab of this.tabs) {
			const card = tab.chat.firstPendingApproval();
			if (card) {
				return { tab, card, elsewhere: true };
			}
		}
		return undefined;
	}

	/** Reports whether any tab's prompt runs or loads a session. */
	get busy(): boolean {
		return this.tabs.some((t) => t.controller.busy);
	}

	/**
	 * replaceControllers gives every tab a new conversation (pid restarted: its settings
	 * changed), made by make(tab) while the tab still has its old one, which is then let go
	 * (its daemon is the one replaced).
	 */
	replaceControllers(make: (tab: Tab) => PidController): void {
		for (const t of this.tabs) {
			const old = t.controller;
			t.controller = make(t);
			old.detach();
		}
	}

	/** dispose disposes every tab's conversation. */
	async dispose(): Promise<void> {
		for (const s of this.subs.values()) {
			s.dispose();
		}
		this.subs.clear();
		await Promise.all(this.tabs.map((t) => t.controller.dispose()));
	}
}
