// The VS Code side of the extension, kept thin: settings, commands, the output channel and
// the approval dialog. Everything else (pid's protocol, the run's log, approval questions)
// is in modules that do not import `vscode` and are tested under node against pid.

import * as vscode from 'vscode';
import { BusyError, PidController } from './controller';
import { errorText } from './client';

let controller: PidController | undefined;
let stale = false;

export function activate(context: vscode.ExtensionContext): void {
	const out = vscode.window.createOutputChannel('pid');
	context.subscriptions.push(out);

	const ui = {
		appendLine: (line: string) => out.appendLine(line),
		askApproval: async (q: { title: string; detail: string; choices: readonly string[] }) => {
			// A modal dialog: Allow, Always allow, Deny; closing it (Cancel, Escape) denies.
			return vscode.window.showWarningMessage(q.title, { modal: true, detail: q.detail }, ...q.choices);
		},
	};

	const make = (): PidController => {
		const cfg = vscode.workspace.getConfiguration('pid');
		const folders = vscode.workspace.workspaceFolders ?? [];
		const model = cfg.get<Record<string, unknown> | null>('model', null);
		return new PidController({
			command: cfg.get<string>('path', 'pid') || 'pid',
			args: cfg.get<string[]>('args', []),
			cwd: folders[0]?.uri.scheme === 'file' ? folders[0].uri.fsPath : undefined,
			workspaceFolders: folders.map((f) => ({ uri: f.uri.toString(), name: f.name })),
			initializationOptions: model ? { model } : undefined,
			clientInfo: { name: 'vscode', version: vscode.version },
			ui,
		});
	};

	// Settings and folders are read when pid starts; a change restarts pid once it is idle.
	const current = (): PidController => {
		if (controller && stale && !controller.busy) {
			void controller.dispose();
			controller = undefined;
		}
		if (!controller) {
			controller = make();
			stale = false;
		}
		return controller;
	};
	context.subscriptions.push(
		vscode.workspace.onDidChangeConfiguration((e) => {
			if (e.affectsConfiguration('pid')) {
				stale = true;
			}
		}),
		vscode.workspace.onDidChangeWorkspaceFolders(() => {
			stale = true;
		}),
	);

	context.subscriptions.push(
		vscode.commands.registerCommand('pid.ask', async () => {
			const c = current();
			if (c.busy) {
				void vscode.window.showInformationMessage(new BusyError().message);
				return;
			}
			const text = await vscode.window.showInputBox({ title: 'pid: Ask', prompt: 'What should pid do?', ignoreFocusOut: true });
			if (!text || text.trim() === '') {
				return;
			}
			out.show(true);
			try {
				const run = await vscode.window.withProgress(
					{ location: vscode.ProgressLocation.Window, title: 'pid is working' },
					() => c.ask(text),
				);
				if (run?.state === 'failed') {
					void vscode.window.showErrorMessage(`pid: the prompt failed; see the "pid" output.`);
				}
			} catch (err) {
				out.appendLine(`! ${errorText(err)}`);
				void vscode.window.showErrorMessage(`pid: ${errorText(err)}`);
			}
		}),
		vscode.commands.registerCommand('pid.cancel', () => {
			if (!controller?.cancel()) {
				void vscode.window.showInformationMessage('pid: nothing to cancel.');
			}
		}),
		vscode.commands.registerCommand('pid.newSession', () => {
			current().newSession();
			out.appendLine('pid: the next prompt starts a new session');
		}),
	);
}

export async function deactivate(): Promise<void> {
	const c = controller;
	controller = undefined;
	await c?.dispose();
}
