// Leaving the sandbox, read from pid's results: the sandbox note a refused bash call's result
// ends with (workspace/launch/results.go's Sandboxed.Note), as the question to run outside shows it, and
// whether a finished call ran outside (details.sandbox.escalated). See docs/permissions.md,
// "Results, and asking to leave the sandbox". No `vscode` import: tests run this under node.

/** How pid's sandbox note begins in a bash result: "[pid's sandbox (MODE) may have refused this. ...]". */
const NOTE_START = "[pid's sandbox";

/** How many lines of the refused command's output (those just before the note) are shown. */
export const OUTPUT_LINES = 3;

/** The mark of a call that ran outside the sandbox. */
export const RAN_OUTSIDE = 'ran outside the sandbox';

function obj(v: unknown): Record<string, unknown> | undefined {
	return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/**
 * refusal reads a bash result's text: when it holds pid's sandbox note, the output's last
 * OUTPUT_LINES non-empty lines before it and the note for a person (without its brackets and
 * its last sentence, which tells the model how to ask); undefined otherwise.
 */
export function refusal(text: string | undefined): { lines: string[]; note: string } | undefined {
	if (typeof text !== 'string') {
		return undefined;
	}
	const at = text.lastIndexOf(NOTE_START);
	if (at < 0) {
		return undefined;
	}
	const note = text
		.slice(at + 1)
		.trimEnd()
		.replace(/\]$/, '')
		.replace(/\s*If the command needs more,[\s\S]*$/, '')
		.replace(/\s+/g, ' ')
		.trim();
	const lines = text
		.slice(0, at)
		.split(/\r?\n/)
		.filter((l) => l.trim() !== '')
		.slice(-OUTPUT_LINES);
	return { lines, note };
}

/** escalated reports whether a result's details say the call ran outside the sandbox. */
export function escalated(details: unknown): boolean {
	return obj(obj(details)?.sandbox)?.escalated === true;
}
