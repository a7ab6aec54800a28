// The chat view's page: builds the DOM of pid's conversation from the extension's messages
// (items updated in place: a tool card keeps its expanded output while its status changes),
// and sends the person's clicks and messages back. It never moves focus by itself (no
// autofocus, no focus() on arrival; the prompt box only when the person opened the chat to
// type): an approval is answered only by a click on its buttons or by the approval commands'
// Ctrl+Alt keys, which no stray keystroke presses.
// Text from pid and the model is set as text; only the answer's HTML, rendered and escaped by
// the extension (markdown.ts), is set as HTML.
// The messages both ways are ../webviewProtocol.ts's ToView and FromView, the types the
// extension sends and handles: the page is compiled against them (src/webview/tsconfig.json,
// the DOM lib) into out/webview/chat.js, a classic script. It imports types only, through
// import() types, so that it stays a script and nothing is loaded for them.

type ToView = import('../webviewProtocol').ToView;
type FromView = import('../webviewProtocol').FromView;
type ItemView = import('../webviewProtocol').ItemView;
type ChatState = import('../webviewProtocol').ChatState;
type QueueMode = import('../webviewProtocol').QueueMode;
type ApprovalChoiceLabel = import('../webviewProtocol').ApprovalChoiceLabel;
type ToolStatus = import('../webviewProtocol').ToolStatus;
type ErrorAction = import('../webviewProtocol').ErrorAction;
type NoticeAction = import('../webviewProtocol').NoticeAction;
type TabView = import('../webviewProtocol').TabView;
/** An item of one kind, as the view receives it. */
type ItemOf<K extends ItemView['kind']> = Extract<ItemView, { kind: K }>;

/** The part of VS Code's webview API the page uses. */
declare function acquireVsCodeApi(): { postMessage(message: FromView): void };

(function () {
	'use strict';
	const vscode = acquireVsCodeApi();

	/** byId returns the page's element with that id (chatview.ts's html has each of them). */
	function byId<T extends HTMLElement = HTMLElement>(id: string): T {
		const e = document.getElementById(id);
		if (!e) {
			throw new Error(`the chat page has no #${id}`);
		}
		return e as T;
	}

	const log = byId('log');
	const queue = byId('queue');
	const chips = byId('chips');
	const prompt = byId<HTMLTextAreaElement>('prompt');
	const sendBtn = byId<HTMLButtonElement>('send');
	const stopBtn = byId<HTMLButtonElement>('stop');
	const modelBtn = byId<HTMLButtonElement>('model');
	const modeBtn = byId<HTMLButtonElement>('mode');
	const statusline = byId('statusline');
	const meter = byId('meter');
	const jobsBar = byId('jobs');
	const completions = byId('completions');
	const tabsBar = byId('tabs');

	const nodes = new Map<string, HTMLElement>();
	let state: ChatState = { status: 'idle', running: false, context: [] };

	const post = (m: FromView): void => vscode.postMessage(m);

	// The keys of the approval commands (package.json's keybindings), as this machine writes them.
	const MAC = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent || '');
	const KEYS = MAC
		? { allow: '⌃⌥Y', always: '⌃⌥⇧Y', deny: '⌃⌥⇧N' }
		: { allow: 'Ctrl+Alt+Y', always: 'Ctrl+Alt+Shift+Y', deny: 'Ctrl+Alt+Shift+N' };

	/** el makes an element with a class and, optionally, text. */
	function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string | number | null): HTMLElementTagNameMap[K] {
		const e = document.createElement(tag);
		if (cls) {
			e.className = cls;
		}
		if (text !== undefined && text !== null) {
			e.textContent = String(text);
		}
		return e;
	}

	/** child returns node's element that matches selector (one the page made itself). */
	function child<T extends Element = HTMLElement>(node: ParentNode, selector: string): T {
		const e = node.querySelector<Element>(selector);
		if (!e) {
			throw new Error(`the chat page has no ${selector} here`);
		}
		return e as T;
	}

	function button(label: string, cls: string, onClick: (b: HTMLButtonElement) => void, title?: string): HTMLButtonElement {
		const b = el('button', cls, label);
		b.type = 'button';
		if (title) {
			b.title = title;
		}
		b.addEventListener('click', (ev) => {
			ev.preventDefault();
			onClick(b);
		});
		return b;
	}

	// Scroll to the end when new content arrives, unless the person scrolled up to read. A new
	// question to leave the sandbox is shown from its top (its warning title, the model's
	// reasons) when it does not fit: the view is held there (heldAt) and still counts as
	// following until the person scrolls.
	let stick = true;
	let heldAt: number | undefined;
	const revealed = new Set<string>();
	log.addEventListener('scroll', () => {
		stick = log.scrollHeight - log.scrollTop - log.clientHeight < 40 || (heldAt !== undefined && Math.abs(log.scrollTop - heldAt) < 2);
		if (!stick) {
			heldAt = undefined;
		}
	});
	function follow(): void {
		if (!stick) {
			return;
		}
		const q = log.querySelector<HTMLElement>('.approval.escalation.state-pending');
		const id = q?.closest<HTMLElement>('.item')?.id;
		if (q && id && heldAt !== undefined && revealed.has(id)) {
			return; // still held at the question's top
		}
		heldAt = undefined;
		log.scrollTop = log.scrollHeight;
		if (q && id && !revealed.has(id)) {
			revealed.add(id);
			const top = q.getBoundingClientRect().top - log.getBoundingClientRect().top + log.scrollTop - 8;
			if (top < log.scrollTop) {
				log.scrollTop = top;
				heldAt = log.scrollTop;
			}
		}
	}

	// --- items -------------------------------------------------------------------------------

	const STATUS_TEXT: Record<ToolStatus, string> = {
		preparing: 'starting',
		waiting: 'waiting for approval',
		running: 'running',
		done: 'done',
		failed: 'failed',
		denied: 'denied',
		cancelled: 'cancelled',
	};
	const STATUS_ICON: Record<ToolStatus, string> = { preparing: '○', waiting: '●', running: '◌', done: '✓', failed: '✗', denied: '⊘', cancelled: '■' };

	function renderUser(node: HTMLElement, item: ItemOf<'user'>): void {
		node.replaceChildren();
		node.className = `item user${item.queued ? ' queued' : ''}`;
		if (item.queued) {
			node.append(el('div', 'badge', item.queued === 'steer' ? 'queued: pid reads it after the current step' : 'queued: pid reads it when it would stop'));
		}
		if (item.checkpointId) {
			// Back to before this message: the extension shows the diff, then asks files, conversation or both.
			node.append(button('↶ Rewind to here', 'rewind secondary small', () => post({ type: 'rewind', id: item.id }), 'Put the files and/or the conversation back as they were before this message (the diff is shown first)'));
		}
		node.append(el('div', 'text', item.text));
		if (item.chips && item.chips.length > 0) {
			const c = el('div', 'chips');
			for (const chip of item.chips) {
				const s = el('span', `chip kind-${chip.kind}`, chip.label);
				s.title = chip.title;
				c.append(s);
			}
			node.append(c);
		}
	}

	/** decorate gives each code block of an answer a bar with its language and a Copy button. */
	function decorate(md: HTMLElement): void {
		for (const block of md.querySelectorAll('.code-block')) {
			if (block.querySelector('.code-head')) {
				continue;
			}
			const code = block.querySelector('code');
			const head = el('div', 'code-head');
			const lang = block.querySelector('.code-lang');
			head.append(lang || el('span', 'code-lang', ''));
			head.append(
				button('Copy', 'copy secondary small', (b) => {
					void navigator.clipboard.writeText(code ? code.textContent || '' : '').then(
						() => {
							b.textContent = 'Copied';
						},
						() => {
							b.textContent = 'Copy failed';
						},
					);
				}),
			);
			block.prepend(head);
		}
	}

	function renderAssistant(node: HTMLElement, item: ItemOf<'assistant'>): void {
		node.className = `item assistant${item.streaming ? ' streaming' : ''}`;
		let thinking = node.querySelector<HTMLDetailsElement>(':scope > details.thinking');
		if (item.thinking) {
			if (!thinking) {
				thinking = el('details', 'thinking');
				thinking.append(el('summary', '', 'Thinking'), el('div', 'thinking-text'));
				node.prepend(thinking);
			}
			child(thinking, '.thinking-text').textContent = item.thinking;
		} else if (thinking) {
			thinking.remove();
		}
		let md = node.querySelector<HTMLElement>(':scope > .md');
		if (!md) {
			md = el('div', 'md');
			node.append(md);
		}
		if (md.dataset.src !== item.html) {
			// HTML rendered by the extension from the model's markdown with every tag escaped.
			md.innerHTML = item.html || '';
			md.dataset.src = item.html || '';
			decorate(md);
		}
		let err = node.querySelector<HTMLElement>(':scope > .error');
		if (item.error) {
			if (!err) {
				err = el('div', 'error');
				node.append(err);
			}
			err.replaceChildren(el('span', '', item.error), ...actionButtons(item.errorActions || []));
		} else if (err) {
			err.remove();
		}
	}

	/** actionButtons are the buttons of an error's actions (kind) or a notice's (action), each asking the extension to run it. */
	function actionButtons(actions: readonly (ErrorAction | NoticeAction)[]): HTMLButtonElement[] {
		return actions.map((a) => {
			const action = 'kind' in a ? a.kind : a.action;
			const arg = 'kind' in a ? a.setting || a.path : a.arg;
			return button(a.label, action === 'openSettings' ? 'secondary small' : 'small', () => {
				post({ type: 'action', action, arg });
			});
		});
	}

	/** diffLines shows a diff's lines colored by their first character. */
	function diffLines(text: string): HTMLPreElement {
		const pre = el('pre', 'detail');
		for (const line of String(text).split('\n')) {
			let cls = '';
			if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('@@')) {
				cls = 'hunk';
			} else if (line.startsWith('+')) {
				cls = 'add';
			} else if (line.startsWith('-')) {
				cls = 'del';
			}
			pre.append(el('span', cls, line), document.createTextNode('\n'));
		}
		return pre;
	}

	/** withCode appends text to node, its `backquoted` parts as code (pid's scope descriptions use them). */
	function withCode(node: HTMLElement, text: string): HTMLElement {
		String(text)
			.split('`')
			.forEach((part, i) => {
				if (part !== '') {
					node.append(i % 2 === 1 ? el('code', '', part) : document.createTextNode(part));
				}
			});
		return node;
	}

	function renderApproval(box: HTMLElement, item: ItemOf<'tool'>): void {
		const a = item.approval;
		if (!a) {
			return;
		}
		box.replaceChildren();
		box.className = `approval state-${a.state}`;
		if (a.planModes) {
			renderPlanApproval(box, item, a);
			return;
		}
		if (a.escalation) {
			renderEscalation(box, item, a, a.escalation);
			return;
		}
		if (a.state !== 'pending') {
			const said = {
				allowed: 'Allowed once.',
				allowedAlways: `Allowed always: ${a.always || ''}`,
				denied: a.reason ? `Denied: ${a.reason}` : 'Denied.',
				withdrawn: 'The question was withdrawn (the run was stopped).',
			}[a.state];
			box.append(a.state === 'allowedAlways' ? withCode(el('div', 'answered', 'Allowed always: '), a.always || '') : el('div', 'answered', said));
			return;
		}
		if (item.askedBy) {
			box.append(el('div', 'asked-by', `Asked by ${item.askedBy}:`));
		}
		box.append(el('div', 'approval-title', a.title));
		box.append(diffLines(a.detail));
		if (a.claims) {
			box.append(el('div', 'claims', a.claims));
		}
		const buttons = el('div', 'buttons');
		const reason = el('input', 'reason');
		reason.type = 'text';
		reason.placeholder = 'Reason for denying (optional; pid tells the model)';
		reason.setAttribute('aria-label', 'Reason for denying');
		const answer = (choice: ApprovalChoiceLabel) => {
			for (const b of buttons.querySelectorAll('button')) {
				b.disabled = true;
			}
			post({ type: 'approve', toolCallId: item.toolCallId, choice, reason: choice === 'Deny' ? reason.value : undefined });
		};
		buttons.append(button('Allow', 'allow', () => answer('Allow'), `Run this call once (${KEYS.allow})`));
		if (a.always) {
			buttons.append(button('Allow always', 'always secondary', () => answer('Always allow'), `Allow always covers: ${a.always} (${KEYS.always})`));
		}
		buttons.append(button('Deny', 'deny secondary', () => answer('Deny'), `Do not run it; pid tells the model (${KEYS.deny})`));
		if (a.canReview) {
			buttons.append(button('Review', 'review secondary', () => post({ type: 'review', toolCallId: item.toolCallId }), "Open VS Code's diff editor: the file now ↔ what pid proposes"));
		}
		box.append(buttons);
		if (a.always) {
			box.append(withCode(el('div', 'scope', 'Allow always covers: '), a.always));
		} else {
			box.append(el('div', 'scope muted', 'Allow always is not offered: pid cannot limit it to calls like this one.'));
		}
		// The approval keys deny with the reason typed so far (the extension keeps it).
		reason.addEventListener('input', () => post({ type: 'reason', toolCallId: item.toolCallId, text: reason.value }));
		reason.addEventListener('keydown', (ev) => {
			if (ev.key === 'Enter') {
				ev.preventDefault();
				answer('Deny');
			}
		});
		box.append(reason);
		// The keys answer the first pending question of the chat (markKeyed shows this line there only).
		const keys = el('div', 'keys');
		keys.append(
			document.createTextNode('Keys (from anywhere in VS Code): '),
			el('kbd', '', KEYS.allow),
			document.createTextNode(' allow · '),
			...(a.always ? [el('kbd', '', KEYS.always), document.createTextNode(' allow always · ')] : []),
			el('kbd', '', KEYS.deny),
			document.createTextNode(' deny'),
		);
		box.append(keys);
	}

	/**
	 * renderEscalation is the question of a bash call asking to run outside the sandbox: a
	 * warning title, what it means, the model's justification quoted, what the sandbox refused
	 * before (when the session has such a result), the command; Allow once, "Always allow" only
	 * when pid scoped it to exactly this command (for this session), Deny with a reason.
	 */
	function renderEscalation(box: HTMLElement, item: ItemOf<'tool'>, a: NonNullable<ItemOf<'tool'>['approval']>, e: NonNullable<NonNullable<ItemOf<'tool'>['approval']>['escalation']>): void {
		box.classList.add('escalation');
		if (a.state !== 'pending') {
			if (a.state === 'allowedAlways') {
				box.append(withCode(el('div', 'answered', 'Allowed always: '), a.always || ''));
			} else {
				const said = { allowed: 'Allowed once, outside the sandbox.', denied: a.reason ? `Denied: ${a.reason}` : 'Denied: it stays in the sandbox.', withdrawn: 'The question was withdrawn (the run was stopped).', pending: '' }[a.state];
				box.append(el('div', 'answered', said));
			}
			return;
		}
		if (item.askedBy) {
			box.append(el('div', 'asked-by', `Asked by ${item.askedBy}:`));
		}
		box.append(el('div', 'approval-title escalation-title', `⚠ ${a.title}`));
		box.append(el('div', 'escalation-means', e.means));
		box.append(el('div', 'escalation-label', "Why, in the model's words:"));
		box.append(e.justification.trim() === '' ? el('div', 'justification muted', '(the model gave no reason)') : el('blockquote', 'justification', e.justification.trim()));
		if (e.refused) {
			const first = e.refused.command.split('\n')[0];
			box.append(el('div', 'escalation-label', 'What the sandbox refused before:'));
			// The refused command and its own words, as a terminal shows them; pid's note (what
			// the sandbox allows: long paths) folded.
			const refused = el('pre', 'detail refused');
			refused.textContent = [`$ ${first}${e.refused.command.includes('\n') ? ' …' : ''}`, ...e.refused.lines].join('\n');
			const note = el('details', 'sandbox-note');
			note.append(el('summary', '', "pid's note: what the sandbox allows"), el('div', 'note', e.refused.note));
			box.append(refused, note);
		}
		box.append(el('div', 'escalation-label', 'The command:'));
		box.append(diffLines(a.detail));
		const buttons = el('div', 'buttons');
		const reason = el('input', 'reason');
		reason.type = 'text';
		reason.placeholder = 'Reason for denying (optional; pid tells the model)';
		reason.setAttribute('aria-label', 'Reason for denying');
		const answer = (choice: ApprovalChoiceLabel) => {
			for (const b of buttons.querySelectorAll('button')) {
				b.disabled = true;
			}
			post({ type: 'approve', toolCallId: item.toolCallId, choice, reason: choice === 'Deny' ? reason.value : undefined });
		};
		buttons.append(button('Allow once', 'allow', () => answer('Allow'), `Run this command once outside the sandbox (${KEYS.allow})`));
		if (a.always) {
			buttons.append(button('Always allow this command (this session)', 'always secondary', () => answer('Always allow'), `Covers: ${a.always} (${KEYS.always})`));
		}
		buttons.append(button('Deny', 'deny secondary', () => answer('Deny'), `Do not run it; pid tells the model (${KEYS.deny})`));
		box.append(buttons);
		if (a.always) {
			box.append(withCode(el('div', 'scope', '“Always” covers: '), a.always));
		} else {
			box.append(
				e.wider
					? withCode(el('div', 'scope muted', '“Always” is not offered: it would cover more than this command: '), e.wider)
					: el('div', 'scope muted', '“Always” is not offered: pid cannot limit it to this command.'),
			);
		}
		reason.addEventListener('input', () => post({ type: 'reason', toolCallId: item.toolCallId, text: reason.value }));
		reason.addEventListener('keydown', (ev) => {
			if (ev.key === 'Enter') {
				ev.preventDefault();
				answer('Deny');
			}
		});
		box.append(reason);
		const keys = el('div', 'keys');
		keys.append(
			document.createTextNode('Keys (from anywhere in VS Code): '),
			el('kbd', '', KEYS.allow),
			document.createTextNode(' allow once · '),
			...(a.always ? [el('kbd', '', KEYS.always), document.createTextNode(' always (this command, this session) · ')] : []),
			el('kbd', '', KEYS.deny),
			document.createTextNode(' deny'),
		);
		box.append(keys);
	}

	/**
	 * renderPlanApproval is a plan's question (exit_plan_mode; the plan itself is on the card
	 * above it): Approve (pid goes on in default mode), Approve in one of the other modes it
	 * offers, Keep planning with what to change (the reason, which pid tells the model).
	 */
	function renderPlanApproval(box: HTMLElement, item: ItemOf<'tool'>, a: NonNullable<ItemOf<'tool'>['approval']>): void {
		box.classList.add('plan-approval');
		if (a.state !== 'pending') {
			const said =
				a.state === 'allowed' || a.state === 'allowedAlways'
					? `Approved: pid carries the plan out in ${a.approvedMode ? a.approvedMode.name : 'Default'} mode.`
					: a.state === 'denied'
						? a.reason
							? `Kept planning: ${a.reason}`
							: 'Kept planning.'
						: 'The question was withdrawn (the run was stopped).';
			box.append(el('div', 'answered', said));
			return;
		}
		box.append(el('div', 'approval-title', a.title));
		const buttons = el('div', 'buttons');
		const reason = el('input', 'reason');
		reason.type = 'text';
		reason.placeholder = 'What to change in the plan (optional; pid tells the model)';
		reason.setAttribute('aria-label', 'What to change in the plan');
		const answer = (choice: ApprovalChoiceLabel, mode?: string) => {
			for (const b of buttons.querySelectorAll('button')) {
				b.disabled = true;
			}
			post({ type: 'approve', toolCallId: item.toolCallId, choice, reason: choice === 'Deny' ? reason.value : undefined, ...(mode ? { mode } : {}) });
		};
		buttons.append(button('Approve', 'allow', () => answer('Allow'), `Carry the plan out in Default mode: changes ask first (${KEYS.allow})`));
		for (const m of a.planModes || []) {
			buttons.append(button(`Approve, ${m.name}`, `allow-mode secondary mode-${m.id}`, () => answer('Allow', m.id), `Carry the plan out in ${m.name} mode${m.description ? `: ${m.description}` : ''}`));
		}
		buttons.append(button('Keep planning', 'deny secondary', () => answer('Deny'), `Do not carry it out yet: pid goes on planning, with what you typed below (${KEYS.deny})`));
		box.append(buttons);
		reason.addEventListener('input', () => post({ type: 'reason', toolCallId: item.toolCallId, text: reason.value }));
		reason.addEventListener('keydown', (ev) => {
			if (ev.key === 'Enter') {
				ev.preventDefault();
				answer('Deny');
			}
		});
		box.append(reason);
		const keys = el('div', 'keys');
		keys.append(document.createTextNode('Keys (from anywhere in VS Code): '), el('kbd', '', KEYS.allow), document.createTextNode(' approve · '), el('kbd', '', KEYS.deny), document.createTextNode(' keep planning'));
		box.append(keys);
	}

	/** markKeyed marks the approval the keys answer: the first pending one (as the extension's firstPendingApproval). */
	function markKeyed(): void {
		const pending = log.querySelectorAll('.approval.state-pending');
		pending.forEach((b, i) => b.classList.toggle('keyed', i === 0));
	}

	function renderTool(node: HTMLElement, item: ItemOf<'tool'>): void {
		node.className = `item tool status-${item.status}`;
		node.dataset.toolCallId = item.toolCallId;
		let head = node.querySelector<HTMLElement>(':scope > .tool-head');
		if (!head) {
			head = el('div', 'tool-head');
			head.append(el('span', 'icon'), el('span', 'tool-name'), el('span', 'tool-title'), el('span', 'tool-status'));
			node.append(head);
		}
		child(head, '.icon').textContent = STATUS_ICON[item.status] || '•';
		child(head, '.tool-name').textContent = item.toolName;
		const title = child(head, '.tool-title');
		title.textContent = item.title || '';
		title.classList.toggle('link', Boolean(item.path));
		title.title = item.path ? `Open ${item.path}` : item.title || '';
		const file = item.path;
		title.onclick = file ? () => post({ type: 'openFile', path: file }) : null;
		child(head, '.tool-status').textContent = STATUS_TEXT[item.status] || item.status;
		// A call that ran outside the sandbox says so on a line of its own, under its command.
		node.classList.toggle('escalated', Boolean(item.escalated));
		let outside = node.querySelector<HTMLElement>(':scope > .outside');
		if (item.escalated && !outside) {
			outside = el('div', 'outside', '⚠ ran outside the sandbox');
			outside.title = 'pid ran this command without its sandbox: with your rights and the network, as you allowed';
			head.after(outside);
		} else if (!item.escalated && outside) {
			outside.remove();
		}

		let last = node.querySelector<HTMLElement>(':scope > .tool-last');
		const showLast = item.lastLine && (item.status === 'running' || item.status === 'preparing');
		if (showLast) {
			if (!last) {
				last = el('div', 'tool-last');
				head.after(last);
			}
			last.textContent = item.lastLine || '';
		} else if (last) {
			last.remove();
		}

		// A plan (exit_plan_mode) is shown whole, rendered: it is what the person approves.
		let plan = node.querySelector<HTMLElement>(':scope > .plan');
		if (item.plan !== undefined) {
			if (!plan) {
				plan = el('div', 'plan md');
				node.insertBefore(plan, node.querySelector(':scope > details.output, :scope > .approval'));
			}
			if (plan.dataset.src !== item.html) {
				// HTML rendered by the extension from the plan's markdown with every tag escaped.
				plan.innerHTML = item.html || '';
				plan.dataset.src = item.html || '';
				decorate(plan);
			}
		} else if (plan) {
			plan.remove();
		}

		// The problems the editor reported in the file after this change.
		let probs = node.querySelector<HTMLElement>(':scope > .problems');
		if (item.problems && item.problems.length > 0) {
			if (!probs) {
				probs = el('div', 'problems');
				node.insertBefore(probs, node.querySelector(':scope > details.output, :scope > .approval'));
			}
			const errors = item.problems.filter((x) => x.severity === 'error').length;
			const shown = item.problems.slice(0, 20);
			probs.replaceChildren(
				el('div', 'problems-title', `${errors > 0 ? '⚠ ' : ''}The editor reports ${item.problems.length} problem${item.problems.length === 1 ? '' : 's'} after this change${errors > 0 ? ` (${errors} error${errors === 1 ? '' : 's'}, told to the model)` : ''}:`),
				...shown.map((x) => el('div', `problem severity-${x.severity}`, `${x.label ? `${x.label} ` : ''}L${x.line}:${x.column} ${x.severity}: ${x.message}${x.source ? ` (${x.source})` : ''}`)),
				...(item.problems.length > shown.length ? [el('div', 'problem', `… and ${item.problems.length - shown.length} more`)] : []),
			);
		} else if (probs) {
			probs.remove();
		}

		// A task call's subagent: its steps (the child's tool cards) folded under the card.
		let sub = node.querySelector<HTMLDetailsElement>(':scope > details.subagent');
		if (item.subagent) {
			if (!sub) {
				sub = el('details', 'subagent');
				sub.append(el('summary', ''), el('div', 'children'));
				node.insertBefore(sub, node.querySelector(':scope > details.output, :scope > .approval'));
			}
			const sa = item.subagent;
			const running = sa.state === 'running';
			child(sub, 'summary').textContent = `${sa.agent} subagent: ${sa.description} · ${sa.steps} step${sa.steps === 1 ? '' : 's'} · ${running ? 'running' : sa.state === 'stop' ? 'done' : sa.state}${sa.worktree ? ' · in its own worktree' : ''}`;
			sub.title = sa.worktree ? `It works in the git worktree ${sa.worktree}; its changes are merged into your files when it ends.` : '';
			sub.dataset.state = sa.state;
			// The files its merge could not apply, each with Open.
			let conf = node.querySelector<HTMLElement>(':scope > .conflicts');
			if (sa.conflicts && sa.conflicts.length > 0) {
				if (!conf) {
					conf = el('div', 'conflicts');
					node.insertBefore(conf, sub.nextSibling);
				}
				conf.replaceChildren(
					el('div', 'conflicts-head', 'Not merged (conflicts; the subagent\'s worktree is kept):'),
					...sa.conflicts.map((p) => {
						const row = el('div', 'conflict', `${p} `);
						const open = el('button', 'open', 'Open');
						open.addEventListener('click', () => post({ type: 'openFile', path: p }));
						row.append(open);
						return row;
					}),
				);
			} else if (conf) {
				conf.remove();
			}
		} else if (sub) {
			sub.remove();
		}

		let box = node.querySelector<HTMLElement>(':scope > .approval');
		if (item.approval) {
			if (!box) {
				box = el('div', 'approval');
				node.append(box);
			}
			const key = `${item.approval.state}|${item.approval.detail}|${item.approval.reason || ''}|${item.approval.approvedMode ? item.approval.approvedMode.id : ''}`;
			if (box.dataset.key !== key) {
				box.dataset.key = key;
				renderApproval(box, item);
			}
		} else if (box) {
			box.remove();
		}

		let out = node.querySelector<HTMLDetailsElement>(':scope > details.output');
		if (item.output) {
			if (!out) {
				out = el('details', 'output');
				out.append(el('summary', ''), el('pre', 'output-text'));
				// Before the approval box (if any): the question stays at the card's end.
				node.insertBefore(out, node.querySelector(':scope > .approval'));
			}
			const lines = item.output.replace(/\n+$/, '').split('\n').length;
			const running = item.status === 'running' || item.status === 'preparing';
			child(out, 'summary').textContent = `${running ? 'Output so far' : item.status === 'failed' || item.status === 'denied' ? 'Error' : 'Result'} (${lines} line${lines === 1 ? '' : 's'})`;
			child(out, 'pre').textContent = item.output;
			// A failure opens its error; a denial's is the approval's answer, shown already.
			if (item.status === 'failed' && !out.dataset.touched) {
				out.open = true;
			}
		} else if (out) {
			out.remove();
		}
	}

	function renderNotice(node: HTMLElement, item: ItemOf<'notice'>): void {
		node.replaceChildren();
		node.className = `item notice level-${item.level}`;
		node.append(el('span', 'notice-text', item.text), ...actionButtons(item.actions || []));
	}

	function renderElicitation(node: HTMLElement, item: ItemOf<'elicitation'>): void {
		node.replaceChildren();
		node.className = `item elicitation state-${item.state}`;
		node.append(el('div', 'who', `${item.server ? `The MCP server "${item.server}"` : 'An MCP server'} asks:`));
		node.append(el('div', 'question', item.message));
		if (item.state !== 'pending') {
			node.append(el('div', 'answered', { accepted: 'Answered.', declined: 'Declined.', cancelled: 'Withdrawn.' }[item.state]));
			return;
		}
		const form = el('form', 'form');
		const inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
		for (const f of item.fields) {
			const row = el('label', 'field');
			row.append(el('span', 'label', `${f.label}${f.required ? ' *' : ''}`));
			let input: HTMLInputElement | HTMLSelectElement;
			if (f.type === 'enum') {
				const select = el('select');
				if (!f.required) {
					select.append(new Option('', ''));
				}
				for (const o of f.options || []) {
					select.append(new Option(o.label, o.value, false, f.default === o.value));
				}
				input = select;
			} else if (f.type === 'boolean') {
				const box = el('input');
				box.type = 'checkbox';
				box.checked = f.default === true;
				input = box;
			} else {
				const text = el('input');
				text.type = f.type === 'number' || f.type === 'integer' ? 'number' : 'text';
				if (f.default !== undefined) {
					text.value = String(f.default);
				}
				input = text;
			}
			input.name = f.name;
			inputs.set(f.name, input);
			row.append(input);
			if (f.description) {
				row.append(el('span', 'hint', f.description));
			}
			form.append(row);
		}
		if (item.problems && item.problems.length > 0) {
			const p = el('ul', 'problems');
			for (const t of item.problems) {
				p.append(el('li', '', t));
			}
			form.append(p);
		}
		const values = () => {
			const v: Record<string, string | boolean> = {};
			for (const [name, input] of inputs) {
				v[name] = input instanceof HTMLInputElement && input.type === 'checkbox' ? input.checked : input.value;
			}
			return v;
		};
		const buttons = el('div', 'buttons');
		buttons.append(
			button('Submit', 'allow', () => post({ type: 'elicit', id: item.id, action: 'accept', values: values() })),
			button('Decline', 'secondary', () => post({ type: 'elicit', id: item.id, action: 'decline', values: {} })),
		);
		form.append(buttons);
		form.addEventListener('submit', (ev) => ev.preventDefault());
		node.append(form);
	}

	function renderChanges(node: HTMLElement, item: ItemOf<'changes'>): void {
		node.replaceChildren();
		node.className = `item changes${item.current ? '' : ' old'}`;
		node.append(el('div', 'changes-title', item.files.length === 1 ? 'File changed in this run' : `${item.files.length} files changed in this run`));
		if (item.review) {
			// pid's review of the prompt's changes (changesUpdate): every change, bash's too.
			const line = el('div', 'changes-review');
			const open = button(item.review.title, 'secondary small', () => post({ type: 'reviewChanges' }), 'Open the changes in the multi-file diff editor (before the prompt | now): keep or undo each hunk');
			line.append(open);
			line.append(el('span', 'muted', ` ${item.review.files.join(', ')}`));
			node.append(line);
		}
		for (const f of item.files) {
			const row = el('div', `file state-${f.state}`);
			const name = el('span', 'file-name link', f.label);
			name.title = `Open ${f.path}`;
			name.addEventListener('click', () => post({ type: 'openFile', path: f.path }));
			row.append(name);
			if (f.created) {
				row.append(el('span', 'muted', ' (new)'));
			}
			if (f.deleted) {
				row.append(el('span', 'muted', ' (deleted)'));
			}
			if (f.untracked) {
				// Changed by a command: pid's checkpoint lists it; Rewind to here takes it back.
				row.append(el('span', 'muted', ' by a command'));
				row.append(button('Open diff', 'secondary small', () => post({ type: 'openDiff', path: f.path }), "The file before this run's prompt ↔ now (pid's checkpoint)"));
			} else if (f.state === 'undone') {
				row.append(el('span', 'muted', f.created ? ' removed (undone)' : ' undone'));
			} else {
				row.append(button('Open diff', 'secondary small', () => post({ type: 'openDiff', path: f.path }), 'The file before this run ↔ now'));
				const undo = button('Undo', 'secondary small', () => post({ type: 'undo', path: f.path }), f.created ? 'Remove the file this run created' : 'Put back what the file held before this run changed it');
				undo.disabled = !item.current;
				if (!item.current) {
					undo.title = 'A later run may have changed this file: undo is offered for the last run only';
				}
				row.append(undo);
			}
			if (f.error) {
				row.append(el('div', 'error', `Undo failed: ${f.error}`));
			}
			node.append(row);
		}
	}

	const PLAN_CHECK = { pending: '☐', in_progress: '◐', completed: '☑' } as const;

	/** renderPlan is the model's plan as a checklist. */
	function renderPlan(node: HTMLElement, item: ItemOf<'plan'>): void {
		node.replaceChildren();
		node.className = 'item plan';
		const done = item.entries.filter((e) => e.status === 'completed').length;
		node.append(el('div', 'plan-title', `Plan · ${done}/${item.entries.length} done`));
		const list = el('ul', 'plan-list');
		for (const e of item.entries) {
			const li = el('li', `plan-entry status-${e.status}`);
			li.append(el('span', 'check', PLAN_CHECK[e.status] || '☐'), el('span', 'plan-text', e.content));
			if (e.priority && e.priority !== 'medium') {
				li.append(el('span', 'priority', e.priority));
			}
			list.append(li);
		}
		node.append(list);
	}

	/** renderCommand is what a `/NAME` command answered, rendered as Markdown (the extension's HTML, every tag escaped). */
	function renderCommand(node: HTMLElement, item: ItemOf<'command'>): void {
		node.replaceChildren();
		node.className = `item command${item.isError ? ' is-error' : ''}`;
		node.append(el('div', 'command-name', `/${item.name}${item.isError ? ' failed' : ''}`));
		if (item.html === undefined) {
			node.append(el('pre', 'command-text', item.text));
			return;
		}
		const md = el('div', 'command-text md');
		// HTML rendered by the extension from the command's markdown with every tag escaped.
		md.innerHTML = item.html;
		decorate(md);
		node.append(md);
	}

	/** renderCompaction is a compaction: running, then what the model now sees and what it kept word for word. */
	function renderCompaction(node: HTMLElement, item: ItemOf<'compaction'>): void {
		const open = node.querySelector<HTMLDetailsElement>('details')?.open === true;
		node.replaceChildren();
		node.className = `item compaction state-${item.state}`;
		const why = item.reason === 'manual' ? 'as asked' : item.reason === 'overflow' ? 'the model said the context was too long' : item.reason === 'threshold' ? 'the context was nearly full' : '';
		if (item.state === 'running') {
			node.append(el('div', 'compaction-title', `Compacting the conversation${why ? ` (${why})` : ''}: the model will see a summary of the older messages…`));
			return;
		}
		if (item.state === 'failed') {
			node.append(el('div', 'compaction-title', `The conversation was not compacted: ${item.error || ''}`));
			return;
		}
		node.append(el('div', 'compaction-title', `The conversation was compacted${why ? ` (${why})` : ''}${item.tokensBefore ? ` from ${item.tokensBefore} tokens` : ''}: the model now sees a summary of the older messages.`));
		if (item.kept) {
			const k = item.kept;
			const parts = [
				k.userMessage ? 'your latest request, word for word' : 'your latest request is among the recent messages kept',
				k.planEntries > 0 ? `the plan (${k.planEntries} step${k.planEntries === 1 ? '' : 's'})` : 'no plan',
				k.files.length > 0 ? `the paths of ${k.files.length} file${k.files.length === 1 ? '' : 's'} read or changed: ${k.files.join(', ')}` : 'no file paths',
			];
			node.append(el('div', 'kept', `Kept with the summary: ${parts.join('; ')}.`));
		}
		if (item.summary) {
			const d = el('details', 'summary');
			d.open = open;
			d.append(el('summary', '', 'What the model now sees'), el('pre', 'summary-text', item.summary));
			node.append(d);
		}
	}

	/** renderInstructions is one line naming the instruction files the model gets, each a link that opens it. */
	function renderInstructions(node: HTMLElement, item: ItemOf<'instructions'>): void {
		node.replaceChildren();
		node.className = 'item instructions';
		node.title = 'The files pid gives the model as instructions (AGENTS.md, CLAUDE.md)';
		node.append(el('span', 'instructions-title', 'Instructions: '));
		item.files.forEach((f, i) => {
			if (i > 0) {
				node.append(', ');
			}
			const name = el('span', 'file-name link', f.label);
			name.title = `Open ${f.path}`;
			name.addEventListener('click', () => post({ type: 'openFile', path: f.path }));
			const size = el('span', 'muted', ` (${f.size}${f.truncated ? ', cut to 32 KiB' : ''})`);
			if (f.truncated) {
				size.title = 'The model gets the first 32 KiB and is told it can read the rest';
			}
			node.append(name, size);
		});
	}

	/** render draws an item into its node, by its kind. */
	function render(node: HTMLElement, item: ItemView): void {
		switch (item.kind) {
			case 'user':
				return renderUser(node, item);
			case 'assistant':
				return renderAssistant(node, item);
			case 'tool':
				return renderTool(node, item);
			case 'notice':
				return renderNotice(node, item);
			case 'elicitation':
				return renderElicitation(node, item);
			case 'changes':
				return renderChanges(node, item);
			case 'plan':
				return renderPlan(node, item);
			case 'command':
				return renderCommand(node, item);
			case 'compaction':
				return renderCompaction(node, item);
			case 'instructions':
				return renderInstructions(node, item);
			default:
				// A kind this page does not know: typecheck fails here when webviewProtocol.ts adds one.
				return unknownItem(item);
		}
	}

	/** unknownItem leaves an item of a kind the page does not know undrawn (an extension newer than the page). */
	function unknownItem(item: never): void {
		void item;
	}

	function upsert(item: ItemView): void {
		let node = nodes.get(item.id);
		// A subagent's step goes under its task's card (folded), else in the log.
		const owner = item.kind === 'tool' && item.parentId ? nodes.get(item.parentId)?.querySelector<HTMLElement>(':scope > details.subagent > .children') : undefined;
		const parent = item.kind === 'user' && item.queued ? queue : owner ?? log;
		if (!node) {
			node = el('div', 'item');
			node.id = `item-${item.id}`;
			node.dataset.kind = item.kind;
			nodes.set(item.id, node);
			parent.append(node);
		}
		render(node, item);
		// A step that asks for approval unfolds its subagent, so that the question is seen.
		if (owner && item.kind === 'tool' && item.approval?.state === 'pending') {
			const d = owner.parentElement;
			if (d instanceof HTMLDetailsElement) {
				d.open = true;
			}
		}
	}

	function remove(id: string): void {
		const node = nodes.get(id);
		if (node) {
			node.remove();
			nodes.delete(id);
		}
	}

	// --- tabs: one conversation each; the bar shows when there are several -----------------

	/** The tab shown (its prompt box's text comes back with it: the extension keeps each tab's draft). */
	let shownTab: string | undefined;

	const TAB_STATUS: Partial<Record<ChatState['status'], string>> = { starting: '◌', working: '◌', loading: '◌', approval: '●', stopped: '■' };

	/** renderTabs draws the tab bar (none with one tab); it reports whether another tab is shown now. */
	function renderTabs(tabs: readonly TabView[]): boolean {
		const shown = tabs.find((t) => t.shown)?.id;
		// A switch is from a tab that is still there to another: the shown tab's id changing
		// while the old one goes (the first tab taking its session's id) is the same
		// conversation, and its box keeps what is being typed (the extension's copy of the
		// draft may be a key or two behind).
		const switched = shown !== shownTab && shown !== undefined && shownTab !== undefined && tabs.some((t) => t.id === shownTab);
		shownTab = shown;
		tabsBar.hidden = tabs.length === 0;
		document.body.classList.toggle('tabbed', tabs.length > 0);
		tabsBar.replaceChildren(
			...tabs.map((t) => {
				const tab = el('div', `tab status-${t.status}${t.shown ? ' shown' : ''}`);
				tab.setAttribute('role', 'tab');
				tab.setAttribute('aria-selected', t.shown ? 'true' : 'false');
				tab.dataset.tabId = t.id;
				const mark = TAB_STATUS[t.status];
				const name = button(`${mark ? `${mark} ` : ''}${t.name}`, 'tab-name', () => post({ type: 'showTab', id: t.id }), t.status === 'approval' ? `${t.name}: pid waits for your answer here` : t.status === 'working' ? `${t.name}: pid is working` : t.name);
				tab.append(name, button('×', 'tab-close', () => post({ type: 'closeTab', id: t.id }), `Close ${t.name} (its session stays in Session History)`));
				return tab;
			}),
			button('+', 'tab-new', () => post({ type: 'newTab' }), 'A new conversation in a tab of its own (pid: New Chat Tab)'),
		);
		return switched;
	}

	// --- state, composer ---------------------------------------------------------------------

	const STATUS: Record<ChatState['status'], string> = {
		idle: '',
		starting: 'Starting pid…',
		working: 'pid is working…',
		approval: 'pid is waiting for your answer above.',
		loading: 'Loading the session…',
		stopped: 'pid stopped.',
	};

	function applyState(s: ChatState): void {
		state = s;
		document.body.dataset.status = s.status;
		document.body.dataset.sessionId = s.sessionId || '';
		statusline.textContent = STATUS[s.status] || '';
		statusline.className = `status-${s.status}`;
		stopBtn.hidden = !s.running;
		sendBtn.textContent = s.running ? 'Steer' : 'Send';
		sendBtn.title = s.running ? 'Send now: pid reads it after the current step (Enter). Alt+Enter queues it for when pid would stop.' : 'Send (Enter; Shift+Enter for a new line)';
		prompt.placeholder = s.running
			? 'Steer pid: Enter sends now (read after the current step); Alt+Enter queues a follow-up'
			: 'Ask pid… (Enter sends, Shift+Enter adds a line, @ adds a file)';
		modelBtn.textContent = s.model ? `${s.model} ▾` : 'Model ▾';
		modeBtn.hidden = !s.mode;
		document.body.dataset.mode = s.mode ? s.mode.id : '';
		if (s.mode) {
			modeBtn.textContent = `${s.mode.name} mode ▾`;
			modeBtn.dataset.mode = s.mode.id;
			modeBtn.className = `secondary mode mode-${s.mode.id}`;
			modeBtn.title = `${s.mode.name} mode${s.mode.description ? `: ${s.mode.description}` : ''}\nClick to switch (pid: Set Mode); Shift+Tab in the prompt box goes to the next mode.`;
			if (!s.running && s.mode.id === 'plan') {
				prompt.placeholder = 'Plan mode: pid explores and proposes a plan, nothing changes files (Shift+Tab switches the mode)';
			}
		}
		if (s.usage) {
			const pct = s.usage.size > 0 ? Math.min(100, (100 * s.usage.used) / s.usage.size) : 0;
			meter.hidden = false;
			meter.classList.toggle('high', pct >= 80);
			child(meter, '.meter-fill').style.width = `${pct.toFixed(1)}%`;
			child(meter, '.meter-text').textContent = usageText(s.usage);
			meter.title = `Context: ${s.usage.used} of ${s.usage.size} tokens go to the model's next call. pid compacts the conversation when it is nearly full.${s.usage.cost ? `\nCost: ${s.usage.cost.amount} ${s.usage.cost.currency}, everything this session paid for so far: every model call, those a rewind took back and its subagents' included, at the prices in pid's settings.` : ''}`;
		} else {
			meter.hidden = true;
		}
		renderJobs(s.jobs || []);
		refreshCompletions();
		chips.replaceChildren();
		for (const c of s.context || []) {
			const chip = el('span', `chip kind-${c.kind}`);
			chip.title = c.title;
			chip.append(el('span', '', c.label), button('×', 'chip-remove', () => post({ type: 'removeContext', id: c.id }), `Remove ${c.label}`));
			chips.append(chip);
		}
		document.body.classList.toggle('empty', log.childElementCount === 0);
	}

	/** renderJobs shows the session's running background jobs: command, how long it runs (ticking), its last lines, Show output and Stop. */
	function renderJobs(jobs: NonNullable<ChatState['jobs']>): void {
		jobsBar.replaceChildren();
		jobsBar.hidden = jobs.length === 0;
		for (const j of jobs) {
			const row = el('div', 'job');
			row.dataset.jobId = j.jobId;
			const label = el('span', 'job-label', '');
			label.dataset.jobId = j.jobId;
			label.dataset.command = j.command;
			label.title = `${j.jobId}: ${j.command}`;
			label.dataset.startedAt = j.startedAt;
			row.append(
				label,
				button('Show output', 'secondary job-output', () => post({ type: 'job', action: 'output', jobId: j.jobId }), `Open what ${j.jobId} printed in an output channel`),
				button('Stop', 'secondary job-stop', () => post({ type: 'job', action: 'stop', jobId: j.jobId }), `Stop ${j.jobId} (SIGTERM, then SIGKILL after 2 s)`),
			);
			if (j.last) {
				row.append(el('pre', 'job-last', j.last));
			}
			jobsBar.append(row);
		}
		tickJobs();
		clearInterval(jobsTicker);
		jobsTicker = jobs.length > 0 ? setInterval(tickJobs, 1000) : undefined;
	}

	/** The timer that makes the running jobs' times tick, while any is shown. */
	let jobsTicker: ReturnType<typeof setInterval> | undefined;

	/** tickJobs writes each shown job's label with how long it runs now, before its command (which a narrow view cuts). */
	function tickJobs(): void {
		for (const label of Array.from(jobsBar.querySelectorAll<HTMLElement>('.job-label'))) {
			const started = Date.parse(label.dataset.startedAt || '');
			const secs = Number.isNaN(started) ? -1 : Math.max(0, Math.round((Date.now() - started) / 1000));
			const since = secs < 0 ? '' : secs < 60 ? ` · ${secs}s` : ` · ${Math.floor(secs / 60)}m ${secs % 60}s`;
			label.textContent = `${label.dataset.jobId || ''}${since} · ${label.dataset.command || ''}`;
		}
	}

	/** usageText is the meter in words (as chat.ts's usageText): `48.2k / 200k tokens (24%) · $0.19`. */
	function usageText(u: NonNullable<ChatState['usage']>): string {
		const k = (n: number) => (n >= 1_000_000 ? `${+(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${+(n / 1000).toFixed(1)}k` : String(Math.round(n)));
		const pct = u.size > 0 ? Math.round((100 * u.used) / u.size) : 0;
		const cost = u.cost ? ` · ${u.cost.currency === 'USD' ? '$' : `${u.cost.currency} `}${u.cost.amount < 0.01 && u.cost.amount > 0 ? u.cost.amount.toFixed(4) : u.cost.amount.toFixed(2)}` : '';
		return `${k(u.used)} / ${k(u.size)} tokens (${pct}%)${cost}`;
	}

	// --- the `/` completion: the session's commands while the box holds `/` and a partial name.

	let shownCommands: NonNullable<ChatState['commands']> = [];
	let selected = 0;

	/** refreshCompletions shows the commands starting with what follows `/` (nothing else typed yet), or hides the list. */
	function refreshCompletions(): void {
		const m = /^\/([A-Za-z0-9_-]*)$/.exec(prompt.value);
		const all = state.commands || [];
		shownCommands = m ? all.filter((c) => c.name.startsWith(m[1])) : [];
		if (shownCommands.length === 0 || (shownCommands.length === 1 && m && shownCommands[0].name === m[1] && !shownCommands[0].hint)) {
			// Nothing to offer, or the name is whole and takes nothing: Enter sends it.
			shownCommands = m && shownCommands.length === 1 && shownCommands[0].name === m[1] ? [] : shownCommands;
		}
		completions.hidden = shownCommands.length === 0;
		selected = Math.min(selected, Math.max(0, shownCommands.length - 1));
		completions.replaceChildren(
			...shownCommands.map((c, i) => {
				const row = el('div', `completion${i === selected ? ' selected' : ''}`);
				row.setAttribute('role', 'option');
				row.dataset.name = c.name;
				row.append(el('span', 'name', `/${c.name}`));
				if (c.hint) {
					row.append(el('span', 'hint', `[${c.hint}]`));
				}
				if (c.description) {
					row.append(el('span', 'desc', c.description));
				}
				row.addEventListener('mousedown', (ev) => {
					ev.preventDefault();
					pick(c.name, false);
				});
				return row;
			}),
		);
	}

	/** pick puts `/NAME` in the box (and a space when it takes input); send: a command that takes nothing is sent at once. */
	function pick(name: string, sendIt: boolean): void {
		const c = (state.commands || []).find((x) => x.name === name);
		prompt.value = `/${name}${c && c.hint ? ' ' : ''}`;
		prompt.selectionStart = prompt.selectionEnd = prompt.value.length;
		shownCommands = [];
		completions.hidden = true;
		selected = 0;
		saveDraft();
		if (sendIt && c && !c.hint) {
			send('steer');
		}
	}

	function send(mode: QueueMode): void {
		const text = prompt.value.trim();
		if (text === '' && (state.context || []).length === 0) {
			return;
		}
		post({ type: 'send', text, mode });
		prompt.value = '';
		refreshCompletions();
		saveDraft();
	}

	/** The prompt box's text the extension was last told of. */
	let draftSaid = '';
	/**
	 * saveDraft tells the extension what the prompt box holds whenever it changes, so that it
	 * outlives a reload of this page or of the window (the extension keeps it, and the
	 * workspace's state), and each tab keeps its own.
	 */
	function saveDraft(): void {
		// (Until the first reset, the extension's word is the one that counts: see receive.)
		if (loaded && prompt.value !== draftSaid) {
			draftSaid = prompt.value;
			post({ type: 'draft', text: draftSaid });
		}
	}

	prompt.addEventListener('keydown', (ev) => {
		if (ev.isComposing) {
			return;
		}
		if (!completions.hidden && shownCommands.length > 0) {
			if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
				ev.preventDefault();
				selected = (selected + (ev.key === 'ArrowDown' ? 1 : shownCommands.length - 1)) % shownCommands.length;
				refreshCompletions();
				return;
			}
			if ((ev.key === 'Tab' && !ev.shiftKey) || (ev.key === 'Enter' && !ev.shiftKey && !ev.altKey)) {
				ev.preventDefault();
				pick(shownCommands[selected].name, ev.key === 'Enter');
				return;
			}
			if (ev.key === 'Escape') {
				ev.preventDefault();
				completions.hidden = true;
				shownCommands = [];
				return;
			}
		}
		if (ev.key === 'Enter' && !ev.shiftKey) {
			ev.preventDefault();
			send(ev.altKey ? 'followUp' : 'steer');
		} else if (ev.key === 'Escape' && state.running) {
			ev.preventDefault();
			post({ type: 'cancel' });
		} else if (ev.key === 'Tab' && ev.shiftKey && !ev.ctrlKey && !ev.altKey && !ev.metaKey && state.mode) {
			// Shift+Tab goes to the next mode (the focus stays in the box).
			ev.preventDefault();
			post({ type: 'cycleMode' });
		}
	});
	prompt.addEventListener('input', () => {
		selected = 0;
		refreshCompletions();
		// "@" typed at a word's start picks a file (the picker puts the file as a chip).
		const v = prompt.value;
		const at = prompt.selectionStart || 0;
		if (v[at - 1] === '@' && (at === 1 || /\s/.test(v[at - 2]))) {
			prompt.value = v.slice(0, at - 1) + v.slice(at);
			prompt.selectionStart = prompt.selectionEnd = at - 1;
			post({ type: 'addContext', kind: 'file' });
		}
		saveDraft();
	});
	sendBtn.addEventListener('click', () => send('steer'));
	stopBtn.addEventListener('click', () => post({ type: 'cancel' }));
	modelBtn.addEventListener('click', () => post({ type: 'command', command: 'model' }));
	modeBtn.addEventListener('click', () => post({ type: 'command', command: 'mode' }));
	byId('add-file').addEventListener('click', () => post({ type: 'addContext', kind: 'file' }));
	byId('add-selection').addEventListener('click', () => post({ type: 'addContext', kind: 'selection' }));
	byId('add-problems').addEventListener('click', () => post({ type: 'addContext', kind: 'diagnostics' }));

	// Links in answers open through the extension (http, https and mailto only).
	log.addEventListener('click', (ev) => {
		const a = ev.target instanceof Element ? ev.target.closest('a[data-href]') : null;
		if (a) {
			ev.preventDefault();
			post({ type: 'openLink', href: a.getAttribute('data-href') || '' });
		}
	});
	// An output the person opened or closed stays as they left it.
	log.addEventListener(
		'toggle',
		(ev) => {
			const t = ev.target;
			if (t instanceof HTMLDetailsElement && t.classList.contains('output')) {
				t.dataset.touched = '1';
				// Opened: its end in view (test results, the error, are at the end).
				const pre = t.querySelector('pre');
				if (t.open && pre) {
					pre.scrollTop = pre.scrollHeight;
				}
			}
		},
		true,
	);

	/** Whether the first reset came (the page's chat and its prompt box's text from before a reload). */
	let loaded = false;

	/** receive handles one message of the extension. */
	function receive(m: ToView): void {
		switch (m.type) {
			case 'reset': {
				const switched = renderTabs(m.tabs || []);
				const draft = typeof m.draft === 'string' ? m.draft : '';
				if (!loaded) {
					// This page was just loaded (a reload): the text its box held before goes back
					// in, before what was typed since the page came.
					loaded = true;
					draftSaid = draft;
					if (draft !== '') {
						prompt.value = draft + prompt.value;
						prompt.selectionStart = prompt.selectionEnd = prompt.value.length;
					}
					saveDraft();
					refreshCompletions();
				} else if (switched) {
					// Another tab: its own text.
					prompt.value = draftSaid = draft;
					refreshCompletions();
				}
				log.replaceChildren();
				queue.replaceChildren();
				nodes.clear();
				for (const item of m.items) {
					upsert(item);
				}
				applyState(m.state);
				markKeyed();
				stick = true;
				follow();
				break;
			}
			case 'batch':
				for (const o of m.ops) {
					if (o.op === 'upsert') {
						upsert(o.item);
					} else if (o.op === 'remove') {
						remove(o.id);
					} else if (o.op === 'state') {
						applyState(o.state);
					}
				}
				document.body.classList.toggle('empty', log.childElementCount === 0);
				markKeyed();
				follow();
				break;
			case 'tabs':
				renderTabs(m.tabs);
				break;
			case 'focusPrompt':
				// Only on the person's request (pid: Focus Chat). text: what they typed while the
				// page loaded (before what the page itself caught, which was typed after it).
				if (typeof m.text === 'string' && m.text !== '') {
					prompt.value = m.text + prompt.value;
					saveDraft();
				}
				prompt.focus();
				prompt.selectionStart = prompt.selectionEnd = prompt.value.length;
				break;
			default:
				// A message this page does not know: typecheck fails here when ToView gains one.
				unknownMessage(m);
		}
	}

	/** unknownMessage ignores a message of a type the page does not know. */
	function unknownMessage(m: never): void {
		void m;
	}

	window.addEventListener('message', (ev: MessageEvent<ToView>) => {
		const m = ev.data;
		if (!m || typeof m !== 'object') {
			return;
		}
		receive(m);
	});

	// Keys typed as the chat first loads (pid: Focus Chat, then typing at once) are kept: when
	// the extension asked for the prompt box before the page existed, or the page has the
	// focus with nothing focused in it (the person put the focus in the chat), the box takes
	// it as soon as this script runs, not after the ready round trip. A character typed while
	// nothing on the page has the focus goes into the box too (never Enter: it would send).
	function typedOnPage(ev: KeyboardEvent): void {
		const t = ev.target;
		if (ev.defaultPrevented || ev.isComposing || ev.ctrlKey || ev.metaKey || ev.altKey || ev.key.length !== 1) {
			return;
		}
		if (t !== document.body && t !== document.documentElement && t !== null) {
			return;
		}
		ev.preventDefault();
		prompt.focus();
		prompt.setRangeText(ev.key, prompt.selectionStart, prompt.selectionEnd, 'end');
		prompt.dispatchEvent(new Event('input'));
	}
	document.addEventListener('keydown', typedOnPage);
	if (document.body.dataset.focusPrompt === '1' || (document.hasFocus() && (document.activeElement === null || document.activeElement === document.body))) {
		prompt.focus();
	}

	post({ type: 'ready', focused: document.hasFocus() && document.activeElement === prompt });
})();
