// The review of a prompt's changes (review.ts): the file before the prompt from pid's diff,
// the hunk under a line and the next one, the chat's "N files changed · Review" line; then
// against the real pid: a prompt that edits a file in two places and runs bash that changes
// another; the chat's changed-files card follows changesUpdate with the counts; the review
// lists both files with their hunks and tools; the file before the prompt is whole; an undo of
// one hunk leaves the other on disk; a keep leaves nothing pending.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ChatModel } from '../chat';
import type { ReviewFile } from '../protocol';
import { beforeText, firstLine, hunkAt, nextHunkLine, summary } from '../review';
import { STEP_TIMEOUT_MS, start, text, until, within } from './harness';

const T = { timeout: 60_000 };

test('beforeText applies pid\'s diff backwards: changed, removed and added lines, a new file, no text diff', () => {
	assert.equal(beforeText('a\nB\nc\nd\n', '--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n'), 'a\nb\nc\nd\n');
	assert.equal(beforeText('a\nc\n', '@@ -1,3 +1,2 @@\n a\n-b\n c\n'), 'a\nb\nc\n');
	assert.equal(beforeText('a\nnew\nb\n', '@@ -1,2 +1,3 @@\n a\n+new\n b\n'), 'a\nb\n');
	assert.equal(beforeText('x', '@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n\\ No newline at end of file\n'), 'x');
	assert.equal(beforeText('x\n', 'Binary files differ\n'), undefined);
});

test('the hunk under a line, the next and previous ones, the chat\'s line', () => {
	const f: ReviewFile = { path: '/w/x.go', change: 'modified', reviewed: false, by: ['edit'], hunks: [
		{ id: 'h1', oldStart: 1, oldLines: 3, newStart: 1, newLines: 4, header: '@@ -1,3 +1,4 @@', state: 'pending' },
		{ id: 'h2', oldStart: 10, oldLines: 1, newStart: 9, newLines: 0, header: '@@ -10 +9,0 @@', state: 'pending' },
	] };
	assert.equal(hunkAt(f, 4)?.id, 'h1');
	assert.equal(hunkAt(f, 10)?.id, 'h2', 'a deletion sits after its line');
	assert.equal(hunkAt(f, 6), undefined);
	assert.equal(firstLine(f.hunks[1]), 10);
	assert.deepEqual([nextHunkLine(f, 1, 1), nextHunkLine(f, 10, 1), nextHunkLine(f, 10, -1)], [10, undefined, 1]);
	assert.deepEqual(summary([{ path: '/w/x.go', change: 'modified', added: 3, removed: 1, pending: 2 }, { path: '/w/y', change: 'added', added: 1, removed: 0, pending: 0 }], '/w'),
		{ title: '2 files changed · Review', files: ['x.go +3 -1 (2 pending)', 'y +1 -0'], pending: 2 });
	const chat = new ChatModel();
	chat.setChanges(1, [{ path: '/w/x.go', before: 'one\n', state: 'changed' }]);
	chat.handle('changesUpdate', { sessionId: 's', checkpointId: 'c', files: [{ path: '/w/x.go', change: 'modified', added: 1, removed: 1, pending: 1 }] });
	assert.equal(chat.changesItem()?.review?.title, '1 file changed · Review', 'the card shows the review line');
});

test('against pid: the card follows changesUpdate; the review lists an edit\'s two hunks and bash\'s file; the file before is whole; undo of one hunk, then keep', T, async (t) => {
	const lines = Array.from({ length: 20 }, (_, i) => `line ${String(i + 1).padStart(2, '0')}`);
	const original = lines.join('\n') + '\n';
	const h = start(t, {
		workspace: true,
		session: {
			permissions: { default: 'allow' },
			model: {
				provider: 'script',
				turns: [
					{ content: [{ type: 'toolCall', id: 'r1', name: 'read', arguments: { path: 'rv.txt' } }] },
					{ content: [{ type: 'toolCall', id: 'e1', name: 'edit', arguments: { path: 'rv.txt', edits: [{ oldText: 'line 02', newText: 'LINE 02' }, { oldText: 'line 18', newText: 'LINE 18' }] } }] },
					{ content: [{ type: 'toolCall', id: 'b1', name: 'bash', arguments: { command: 'printf "two\\n" >> other.txt' } }] },
					{ content: text('edited') },
				],
			},
		},
	});
	const file = path.join(h.ws, 'rv.txt');
	fs.writeFileSync(file, original);
	fs.writeFileSync(path.join(h.ws, 'other.txt'), 'one\n');
	assert.equal((await within(h.c.ask('edit rv.txt'), 'the prompt', STEP_TIMEOUT_MS))?.state, 'done', h.ui.lines.join('\n'));
	const line = h.c.chat.reviewItem();
	assert.deepEqual(line, { title: '2 files changed · Review', files: ['other.txt +1 -0 (1 pending)', 'rv.txt +2 -2 (2 pending)'], pending: 3 }, 'the chat follows changesUpdate');

	const r = await h.c.reviewList();
	assert.deepEqual(r.files.map((f) => [path.basename(f.path), f.hunks.length, f.by]), [['other.txt', 1, ['bash']], ['rv.txt', 2, ['edit']]]);
	assert.equal(await h.c.reviewBefore(file), original, 'the file before the prompt, whole');

	const rv = h.c.reviewed(file);
	assert.ok(rv);
	const u = await h.c.reviewUndo(file, [rv.hunks[0].id]);
	assert.deepEqual(u.undone, [rv.hunks[0].id]);
	assert.notEqual(u.safetyCheckpointId, '');
	assert.equal(fs.readFileSync(file, 'utf8'), original.replace('line 18', 'LINE 18'), 'the first hunk undone, the other change stays');
	assert.deepEqual(h.c.reviewed(file)?.hunks.map((x) => x.id), [rv.hunks[1].id], 'the review follows');

	await h.c.reviewKeep(file);
	assert.deepEqual(h.c.reviewed(file)?.hunks.map((x) => x.state), ['kept']);
	assert.equal(h.c.reviewed(file)?.reviewed, true);
	await until(() => h.c.chat.reviewItem()?.files.find((f) => f.startsWith('rv.txt')) === 'rv.txt +1 -1', 'the chat to follow the undo and the keep (no pending hunk of rv.txt)');
});
