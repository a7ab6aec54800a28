-- :PidRewind: its words (a checkpoint as a line of the picker, the float: the prompt, the files
-- changed since, the keys, each diff whole; the chat's report: restored, removed, skipped with
-- why), then for real against pid: two prompts that add and edit files, a rewind of both to
-- before the first (the buffer follows, the chat shows the rewound conversation, the next
-- prompt continues from there), a file changed by a person skipped and restored with
-- :PidRewind!, and the undo of a rewind. It runs in the folder 07_saved_sessions.lua moved to.

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
    '[rewind] the conversation goes on from before that prompt',
    '[rewind] undo: :PidRewind, then "undo the rewind to "fix the test in parse.go""',
  }, 'the report of a rewind of both')
  eq(R.report_lines(cp, 'conversation', { restored = {}, removed = {}, skipped = {} }, root), {
    '[rewind] the conversation, back to before "fix the test in parse.go"',
    '[rewind] the conversation goes on from before that prompt',
  }, 'the report of a rewind of the conversation')
  eq(R.report_lines(cp, 'files', { restored = { '/w/parse.go' }, removed = {}, skipped = {} }, root), {
    '[rewind] the files, back to before "fix the test in parse.go"',
    '[rewind] 1 restored, 0 removed, 0 skipped',
    '[rewind] restored parse.go',
  }, 'the report of a rewind of the files')
  say('ok - :PidRewind words: the picker line, the float (files, keys, whole diffs), the report (restored, removed, skipped with why)')

  -- 29. For real: prompt 1 adds rw_new.txt and edits rw_greet.txt (open in a buffer), prompt 2
  -- edits it again. :PidRewind lists both, newest first; the float shows the diff from before
  -- prompt 1 to now; `b` rewinds both: rw_new.txt removed, rw_greet.txt back (its buffer too),
  -- the chat shows the conversation without the two prompts, and the next prompt goes on from
  -- there.
  local text, wait_run, wait_for, check, selects, find = t.text, t.wait_run, t.wait_for, t.check, t.selects, t.find
  local runs = t.runs()
  local ws = vim.fn.getcwd()
  local call = function(id, name, args) return { type = 'toolCall', id = id, name = name, arguments = args } end
  vim.fn.writefile({ 'hello' }, ws .. '/rw_greet.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/rw_greet.txt'))
  local gbuf = vim.api.nvim_get_current_buf()
  local read = function(id) return call(id, 'read', { path = 'rw_greet.txt' }) end
  pid.new_session({ permissions = { default = 'allow' }, toolExecution = 'sequential', model = { provider = 'script', turns = {
    { content = { read('r1'), call('n1', 'write', { path = 'rw_new.txt', content = 'new\n' }), call('g1', 'edit', { path = 'rw_greet.txt', edits = { { oldText = 'hello', newText = 'hi' } } }) } },
    { content = text('one done') },
    { content = { read('r2'), call('g2', 'edit', { path = 'rw_greet.txt', edits = { { oldText = 'hi', newText = 'hey' } } }) } },
    { content = text('two done') },
    { content = text('three, after the rewind') },
    { content = { read('r3'), call('g3', 'edit', { path = 'rw_greet.txt', edits = { { oldText = 'hello', newText = 'howdy' } } }) } },
    { content = text('four done') },
  } } })
  t.asked = {}
  pid.ask('first: add and greet')
  wait_run(runs + 1)
  pid.ask('second: greet again')
  wait_run(runs + 2)
  eq(vim.api.nvim_buf_get_lines(gbuf, 0, -1, false), { 'hey' }, 'the buffer after the two prompts')
  eq(vim.fn.readfile(ws .. '/rw_new.txt'), { 'new' }, 'rw_new.txt was added')
  local sid = pid.status().session_id

  t.checkpoint_answers = { { pick = function(items)
    for i, c in ipairs(items) do
      if c.prompt == 'first: add and greet' then return i end
    end
  end } }
  t.answers = { { key = 'b' } }
  local done = nil
  check(pid.rewind({ on_done = function(err, res) done = { err = err, res = res } end }), ':PidRewind started')
  wait_for('the rewind', function() return done ~= nil end)
  eq(done.err, nil, 'rewind error')
  local cq = selects('pid.checkpoint')
  eq(#cq, 1, 'checkpoint pickers')
  eq(cq[1].prompt, 'Rewind to before which prompt? (newest first)', 'the picker prompt')
  eq(cq[1].shown, { '"second: greet again" | just now | 1 file', '"first: add and greet" | just now | 2 files' }, 'the checkpoints, newest first')
  eq(#t.asked, 1, 'one float')
  local fl = t.asked[1]
  eq(fl.kind, 'rewind', 'the float is the rewind one')
  eq(fl.q.filetype, 'diff', "the float's filetype")
  check(fl.entered, 'the float had the cursor when the key was typed')
  eq(vim.list_slice(fl.lines, 1, 9), {
    'Rewind to before this prompt (just now):',
    '  first: add and greet',
    '',
    'Since then (2 files):',
    '  added     rw_new.txt',
    '  modified  rw_greet.txt',
    '',
    '[f] restore the files   [c] rewind the conversation   [b] both   [q] cancel',
    'files: the files as they were before that prompt; conversation: the session goes on from before it',
  }, 'the float head (the files, in the order pid gives them)')
  check(t.contains(fl.lines, '-hello') and t.contains(fl.lines, '+hey') and t.contains(fl.lines, '+new'), 'the diffs from before prompt 1 to now: %s', table.concat(fl.lines, ' | '))
  eq(vim.fn.filereadable(ws .. '/rw_new.txt'), 0, 'rw_new.txt is removed')
  eq(vim.fn.readfile(ws .. '/rw_greet.txt'), { 'hello' }, 'rw_greet.txt is back')
  eq(vim.api.nvim_buf_get_lines(gbuf, 0, -1, false), { 'hello' }, 'its buffer follows')
  eq(vim.bo[gbuf].modified, false, 'the buffer has nothing unsaved')
  eq(done.res.restored, { ws .. '/rw_greet.txt' }, 'restored')
  eq(done.res.removed, { ws .. '/rw_new.txt' }, 'removed')
  local lines = t.view.lines()
  local at = find(lines, '[rewind] the files and the conversation, back to before "first: add and greet"', 'the report')
  eq(vim.list_slice(lines, at, #lines), {
    '[rewind] the files and the conversation, back to before "first: add and greet"',
    '[rewind] 1 restored, 1 removed, 0 skipped',
    '[rewind] restored rw_greet.txt',
    '[rewind] removed rw_new.txt',
    '[rewind] the conversation goes on from before that prompt',
    '[rewind] undo: :PidRewind, then "undo the rewind to "first: add and greet""',
  }, 'the report, at the end of the chat')
  check(not t.contains(lines, '>>> first: add and greet') and not t.contains(lines, '>>> second: greet again'), 'the rewound prompts are gone from the chat')
  check(t.has_line_prefix('[session] rewound: ' .. sid .. ' (0 messages)'), 'the chat shows the session again from session/load')
  eq(pid.status().session_id, sid, 'the same session')
  pid.ask('third')
  local res = wait_run(runs + 3)
  eq(t.user_texts(res.messages), { 'third' }, 'the model sees only what came after the rewind')
  say('ok - :PidRewind: checkpoints newest first, the diff in the float, both rewound (the buffer follows), the chat redrawn, the next prompt goes on from there')

  -- 30. A file a person changed since pid's edit is skipped, with why; :PidRewind! restores it.
  pid.ask('fourth: greet once more')
  wait_run(runs + 4)
  eq(vim.api.nvim_buf_get_lines(gbuf, 0, -1, false), { 'howdy' }, 'the buffer after the fourth prompt')
  vim.api.nvim_buf_set_lines(gbuf, 0, -1, false, { 'howdy, by hand' })
  vim.api.nvim_buf_call(gbuf, function() vim.cmd('silent write') end)
  local function pick_fourth(items)
    for i, c in ipairs(items) do
      if c.prompt == 'fourth: greet once more' then return i end
    end
  end
  t.checkpoint_answers = { { pick = pick_fourth } }
  t.answers = { { key = 'f' } }
  done = nil
  pid.rewind({ on_done = function(err, r) done = { err = err, res = r } end })
  wait_for('the rewind of the files', function() return done ~= nil end)
  eq(done.err, nil, 'rewind error')
  eq(#done.res.skipped, 1, 'one file skipped')
  eq(done.res.skipped[1].path, ws .. '/rw_greet.txt', 'the one a person changed')
  eq(vim.fn.readfile(ws .. '/rw_greet.txt'), { 'howdy, by hand' }, "the person's change stays")
  check(t.has_line_prefix('[rewind] skipped rw_greet.txt: '), 'the chat says it was skipped, and why')
  check(t.has_line('[rewind] skipped files are as they were; :PidRewind! restores them too (over their changes)'), 'and what to do')
  t.checkpoint_answers = { { pick = pick_fourth } }
  t.answers = { { key = 'f' } }
  done = nil
  vim.cmd('PidRewind!')
  wait_for('the forced rewind', function() return pid.status().pending_approvals == 0 and t.has_line('[rewind] 1 restored, 0 removed, 0 skipped') end)
  eq(vim.fn.readfile(ws .. '/rw_greet.txt'), { 'hello' }, 'restored over the change')
  eq(vim.api.nvim_buf_get_lines(gbuf, 0, -1, false), { 'hello' }, 'its buffer follows')
  say('ok - :PidRewind: a file changed by hand is skipped, with why; :PidRewind! restores it')

  -- 31. The undo: the forced rewind's own checkpoint, newest, puts the person's change back.
  -- The buffer has unsaved words: the float says the rewind replaces them, and u brings them back.
  vim.api.nvim_buf_set_lines(gbuf, 0, -1, false, { 'unsaved words' })
  vim.api.nvim_buf_call(gbuf, function() vim.cmd('let &undolevels = &undolevels') end) -- an undo break, as leaving insert mode makes
  t.asked = {}
  t.checkpoint_answers = { { pick = function(items)
    return items[1].prompt:find('Before rewinding to: ', 1, true) == 1 and 1 or nil
  end } }
  t.answers = { { key = 'f' } }
  done = nil
  pid.rewind({ on_done = function(err, r) done = { err = err, res = r } end })
  wait_for('the undo', function() return done ~= nil end)
  eq(done.err, nil, 'undo error')
  check(selects('pid.checkpoint')[#selects('pid.checkpoint')].shown[1]:find('^undo the rewind to "fourth: greet once more" | just now | 1 file'), 'the newest checkpoint is the rewind\'s own: %s', selects('pid.checkpoint')[#selects('pid.checkpoint')].shown[1])
  eq(vim.fn.readfile(ws .. '/rw_greet.txt'), { 'howdy, by hand' }, 'the undo put the change back')
  eq(vim.api.nvim_buf_get_lines(gbuf, 0, -1, false), { 'howdy, by hand' }, 'in the buffer too')
  check(t.contains(t.asked[1].lines, 'Unsaved changes in Neovim: rw_greet.txt. Restoring the files replaces them (u in the buffer brings them back).'),
    'the float warned of the unsaved words: %s', table.concat(t.asked[1].lines, ' | '))
  vim.api.nvim_buf_call(gbuf, function() vim.cmd('silent undo') end)
  eq(vim.api.nvim_buf_get_lines(gbuf, 0, -1, false), { 'unsaved words' }, 'u brings the unsaved words back')
  vim.api.nvim_buf_call(gbuf, function() vim.cmd('silent edit!') end)
  say('ok - :PidRewind: the rewind\'s own checkpoint undoes it')

  -- 32. Cancelling: closing the float rewinds nothing.
  t.checkpoint_answers = { { pick = function() return 1 end } }
  t.answers = { { never = true, action = function() vim.api.nvim_win_close(t.approval.window(), true) end } }
  done = nil
  pid.rewind({ on_done = function(err, r) done = { err = err, res = r } end })
  wait_for('the cancel', function() return done ~= nil end)
  eq(done, { err = nil, res = nil }, 'closing the float cancelled it')
  eq(pid.status().pending_approvals, 0, 'no question left open')
  eq(vim.fn.readfile(ws .. '/rw_greet.txt'), { 'howdy, by hand' }, 'nothing changed')
  vim.cmd('bwipeout! ' .. gbuf)
  say('ok - :PidRewind: closing the float rewinds nothing')
end
