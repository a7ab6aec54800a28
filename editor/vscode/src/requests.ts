// pid's requests that belong to one conversation, answered there: an approval (beforeToolCall)
// on the call's card in the chat (and to the UI's askApproval when it has one), and an MCP
// server's question as a form in the chat. The daemon (daemon.ts) hands them over by session;
// the state is state.ts's. No `vscode` import.

import type * as rpc from 'vscode-jsonrpc/node';
import { answer, question } from './approval';
import type { ApprovalChoice } from './chat';
import { reviewable } from './proposed';
import type { BeforeToolCallAnswer, BeforeToolCallParams, ElicitationParams, ElicitationResult } from './protocol';
import type { ControllerState } from './state';

/** elicit shows an MCP server's question in the chat and answers with the person's form. */
export function elicit(s: ControllerState, params: ElicitationParams, token: rpc.CancellationToken): Promise<ElicitationResult> {
	s.log(`pid: an MCP server${params?._meta?.pid?.server ? ` (${params._meta.pid.server})` : ''} asks: ${params?.message}`);
	return s.chat.askElicitation(params, (cb) => {
		if (token.isCancellationRequested) {
			cb();
		} else {
			token.onCancellationRequested(cb);
		}
	});
}

/**
 * approve puts a beforeToolCall question on the call's card in the chat (and to the UI's
 * askApproval when it has one), logs it in the run, and answers pid with the first answer.
 */
export async function approve(s: ControllerState, params: BeforeToolCallParams, token: rpc.CancellationToken): Promise<BeforeToolCallAnswer> {
	const q = question(params);
	// A subagent's call asks with its own session and its parent's.
	const run = s.current?.run && [params.sessionId, params.parentSessionId].includes(s.current.run.sessionId) ? s.current.run : undefined;
	const key = s.chat.approvalKey(params);
	run?.approvalAsked(params.toolCallId, params.toolName, q.title);
	let withdraw: (() => void) | undefined;
	const withdrawn = new Promise<'withdrawn'>((resolve) => {
		if (token.isCancellationRequested) {
			resolve('withdrawn');
		}
		const sub = token.onCancellationRequested(() => resolve('withdrawn'));
		withdraw = () => sub.dispose();
	});
	s.asking.set(key, params);
	const fromChat = s.chat.askApproval(params, q, reviewable(params.toolName, params.args));
	const ui = s.opts.ui;
	const askUi = ui.askApproval;
	const fromUi = askUi
		? askUi.call(ui, q, token).then((c) => ({ ui: true as const, c: typeof c === 'string' || c === undefined ? (c === undefined ? undefined : { choice: c }) : c }))
		: new Promise<never>(() => {});
	let a: BeforeToolCallAnswer;
	let choice: ApprovalChoice | undefined;
	try {
		const r = await Promise.race([fromChat.then((c) => ({ ui: false as const, c })), fromUi, withdrawn]);
		if (r === 'withdrawn') {
			s.chat.withdrawApproval(key);
			a = { decision: 'deny', reason: 'The approval request was withdrawn.' };
			run?.approvalAnswered(params.toolCallId, params.toolName, a, true);
			return a;
		}
		choice = r.c;
		if (r.ui) {
			// Answered outside the chat: the card shows it too (or is withdrawn when the choice fits none of its buttons).
			if (!choice || !s.chat.answerApproval(key, choice.choice, choice.reason, choice.mode)) {
				s.chat.withdrawApproval(key);
			}
		}
		a = answer(choice?.choice, params.toolName, q.choices, choice?.mode);
		if (a.decision === 'deny' && choice?.reason) {
			// The reason as typed: pid puts it in its own sentence for the model ("The user
			// denied this call of NAME: REASON"; a plan's in plan mode's).
			a = { decision: 'deny', reason: choice.reason };
		}
	} catch (err) {
		// Answered with an error (client.ts): the person denied nothing.
		// The run's toolEnd says what pid made of it.
		s.chat.withdrawApproval(key);
		throw err;
	} finally {
		withdraw?.();
		s.asking.delete(key);
	}
	run?.approvalAnswered(params.toolCallId, params.toolName, a, false, q.always?.description);
	return a;
}
