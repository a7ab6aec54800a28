// ChatItems is the chat's store, without VS Code: its items in order (queued messages last),
// their ids, the state (status, mode, model, meter, commands), the context chips waiting for the
// next prompt, notices, and the listeners told of every change. ChatCards (chatCards.ts) and
// ChatModel (chat.ts) build the conversation on it.

import type { ContextChip } from './context';
import { BUILTIN_COMMANDS } from './chatText';
import { DEFAULT_MODES, modeView } from './modes';
import type { ChatItem, ChatState, NoticeAction, NoticeItem } from './webviewProtocol';

export type ChatEvent = { type: 'upsert'; item: ChatItem } | { type: 'remove'; id: string } | { type: 'reset' } | { type: 'state' };

export type Listener = (e: ChatEvent) => void;

/**
 * ChatItems holds the chat's items and state and tells its listeners about every change. Used
 * from the extension host's one thread.
 */
export class ChatItems {
	protected items: ChatItem[] = [];
	protected readonly byId = new Map<string, ChatItem>();
	private nextId = 0;
	private readonly listeners = new Set<Listener>();
	protected contextChips: ContextChip[] = [];
	/** The session's folder, to show paths relative to it. */
	folder: string | undefined;
	readonly state: ChatState = { status: 'idle', running: false, context: [], mode: modeView(DEFAULT_MODES, 'default'), commands: BUILTIN_COMMANDS };

	/** onEvent calls l for every change, in order. */
	onEvent(l: Listener): { dispose(): void } {
		this.listeners.add(l);
		return { dispose: () => this.listeners.delete(l) };
	}

	protected emit(e: ChatEvent): void {
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

	protected id(prefix: string): string {
		this.nextId++;
		return `${prefix}${this.nextId}`;
	}

	protected add<T extends ChatItem>(item: T): T {
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

	protected update(item: ChatItem): void {
		if (this.byId.get(item.id) === item) {
			this.emit({ type: 'upsert', item });
		}
	}

	protected remove(item: ChatItem): void {
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
		this.forget();
		this.emit({ type: 'reset' });
	}

	/** forget drops what a subclass knows of the items clear() removes (each level calls its parent's). */
	protected forget(): void {
		// The store keeps nothing else.
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

}
