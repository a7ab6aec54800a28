-- :PidRewind's words: a checkpoint as a line of the picker, the float (the prompt, the files
-- changed since, the keys, each diff whole) and the chat's report of a rewind (restored,
-- removed, skipped with why). Pure functions: no pid.

return function(t)
  local pid = t.pid
  local say, eq = t.say, t.eq
  local R = pid._rewind
  local now = 1764633600 -- 2025-12-02T00:00:00Z
  local root = '/w'

  -- 26. The picker's line: the prompt's text on one line, when, how many files; incomplete.
  local cp = { id = 'c2', prompt = 'fix the test\nin parse.go', timestamp = '2025-12-01T23:55:00Z',
    files = { { path = '/w/parse.go', change = 'modified' }, { path = '/w/new.txt', change = 'added' } } }
  eq(R.item_label(cp, now), '"fix the test in parse.go" | 5 minutes ago | 2 files', 'a checkpoint in the picker')
  eq(R.item_label({ id = 'c1', prompt = 'just talk', timestamp = '2025-12-01T22:00:00Z', files = {} }, now),
    '"just talk" | 2 hours ago | no file changed', 'a checkpoint without files')
  eq(R.item_label({ id = 'c3', prompt = string.rep('x', 100), timestamp = '2025-12-01T23:59:30Z', files = { {} }, incomplete = true, reason = 'pid stopped during bash' }, now),
    '"' .. string.rep('x', 67) .. '..." | just now | 1 file | incomplete: pid stopped during bash', 'a long prompt, cut, and an incomplete checkpoint')

  -- 27. The float: the prompt, the files (relative to the workspace), the keys, the diffs whole
  -- (with headers added to a diff that has none).
  local diff_lines = {}
  for i = 1, 60 do
    table.insert(diff_lines, '-old ' .. i)
  end
  local lines = R.float_lines(cp, {
    { path = '/w/parse.go', change = 'modified', diff = '--- a/parse.go\n+++ b/parse.go\n@@ -1,60 +0,0 @@\n' .. table.concat(diff_lines, '\n') .. '\n' },
    { path = '/w/new.txt', change = 'added', diff = '@@ -0,0 +1 @@\n+new\n' },
    { path = '/elsewhere/x', change = 'deleted', diff = '' },
  }, root, now)
  eq(vim.list_slice(lines, 1, 12), {
    'Rewind to before this prompt (5 minutes ago):',
    '  fix the test',
    '  in parse.go',
    '',
    'Since then (3 files):',
    '  modified  parse.go',
    '  added     new.txt',
    '  deleted   /elsewhere/x',
    '',
    '[f] restore the files   [c] rewind the conversation   [b] both   [q] cancel',
    'files: the files as they were before that prompt; conversation: the session goes on from before it',
    '',
  }, 'the float head')
  eq(lines[13], '--- a/parse.go', "the first diff's own header")
  eq(lines[16], '-old 1', 'its first line')
  eq(lines[75], '-old 60', 'its last line: the diff is whole')
  eq(vim.list_slice(lines, 76, 84), {
    '', '--- new.txt (before that prompt)', '+++ new.txt (now)', '@@ -0,0 +1 @@', '+new',
    '', '--- /elsewhere/x (before that prompt)', '+++ /elsewhere/x (now)', '(deleted, no text diff)',
  }, 'headers added where a diff has none')
  eq(#lines, 84, 'nothing after the diffs')
  eq(R.float_lines({ prompt = 'p', timestamp = '2025-12-01T23:00:00Z', incomplete = true, reason = 'x' }, {}, root, now)[3],
    'Not every change of that prompt was recorded (x): some files may not come back.', 'an incomplete checkpoint is said')

  -- 28. The report: what was restored, removed, skipped (with why), the conversation.
  eq(R.report_lines(cp, 'both', {
    restored = { '/w/parse.go' }, removed = { '/w/new.txt' },
    skipped = { { path = '/w/notes.txt', reason = 'changed since pid last wrote it' } }, safetyCheckpointId = 's1',
  }, root), {
    '[rewind] the files and the conversation, back to before "fix the test in parse.go"',
    '[rewind] 1 restored, 1 removed, 1 skipped',
    '[rewind] restored parse.go',
    '[rewind] removed new.txt',
    '[rewind] skipped notes.txt: changed since pid last wrote it',
    '[rewind] skipped files are as they were; :PidRewind! restores them too (over their changes)',
    '[rewind] the conversation goes on from before that prompt: the next prompt continues it',
  }, 'the report of a rewind of both')
  eq(R.report_lines(cp, 'conversation', { restored = {}, removed = {}, skipped = {} }, root), {
    '[rewind] the conversation, back to before "fix the test in parse.go"',
    '[rewind] the conversation goes on from before that prompt: the next prompt continues it',
  }, 'the report of a rewind of the conversation')
  eq(R.report_lines(cp, 'files', { restored = { '/w/parse.go' }, removed = {}, skipped = {} }, root), {
    '[rewind] the files, back to before "fix the test in parse.go"',
    '[rewind] 1 restored, 0 removed, 0 skipped',
    '[rewind] restored parse.go',
  }, 'the report of a rewind of the files')
  say('ok - :PidRewind words: the picker line, the float (files, keys, whole diffs), the report (restored, removed, skipped with why)')
end
