-- :PidReview (issue 35): its words (the quickfix entries, the hunk under the cursor, the file
-- before the prompt made from checkpoints/diff, the chat's changesUpdate line), then for real
-- against pid: a prompt edits a file in two places; the chat lists it with its counts;
-- :PidReview fills the quickfix list with its two hunks; on the file, the diff mode against
-- the state before the prompt; `gu` on the first hunk undoes it on disk (the buffer follows,
-- the other change stays), `]h` moves to the other, `gk` keeps it: nothing left to review.
-- It runs in the folder 07_saved_sessions.lua moved to.

return function(t)
  local pid = t.pid
  local say, check, eq, wait_for, text, wait_run = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run
  local Rv = require('pid.review')

  -- The words.
  eq(Rv.before_lines({ 'a', 'B', 'c', 'd' }, '--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n'), { 'a', 'b', 'c', 'd' },
    'a changed line, applied backwards')
  eq(Rv.before_lines({ 'a', 'c' }, '@@ -1,3 +1,2 @@\n a\n-b\n c\n'), { 'a', 'b', 'c' }, 'a removed line comes back')
  eq(Rv.before_lines({ 'new' }, '--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+new\n'), {}, 'an added file was empty before')
  eq(Rv.before_lines({ 'x' }, 'Binary files differ\n'), nil, 'no text diff')
  local f = { path = '/w/x.go', change = 'modified', by = { 'edit', 'bash' }, hunks = {
    { id = 'h1', newStart = 1, newLines = 4, header = '@@ -1,3 +1,4 @@', state = 'pending' },
    { id = 'h2', newStart = 9, newLines = 0, header = '@@ -10 +9,0 @@', state = 'pending' },
    { id = 'h3', newStart = 20, newLines = 3, header = '@@ -21,3 +20,3 @@', state = 'kept' },
  } }
  eq(Rv.qf_items({ f }), {
    { filename = '/w/x.go', lnum = 1, text = 'modified @@ -1,3 +1,4 @@ (by edit, bash)' },
    { filename = '/w/x.go', lnum = 10, text = 'modified @@ -10 +9,0 @@ (by edit, bash)' },
  }, 'one quickfix entry per pending hunk, at its line now')
  eq(Rv.hunk_at(f, 4).id, 'h1', 'the hunk under line 4')
  eq(Rv.hunk_at(f, 10).id, 'h2', 'a deletion sits after its line')
  eq(Rv.hunk_at(f, 6), nil, 'no hunk under line 6')
  eq({ Rv.next_line(f, 1, 1), Rv.next_line(f, 10, 1), Rv.next_line(f, 20, -1) }, { 10, 20, 10 }, ']h and [h')
  eq(Rv.update_lines({ files = { { path = '/w/x.go', change = 'modified', added = 3, removed = 1, pending = 2 },
    { path = '/w/y.txt', change = 'added', added = 1, removed = 0, pending = 0 } } }, '/w'),
    { '[changes] 2 files changed, 2 hunks to review (:PidReview): x.go +3 -1 (2 pending), y.txt +1 -0' }, "the chat's line")
  say('ok - :PidReview words: quickfix entries, the hunk under the cursor, the file before, the chat line')

  -- For real.
  local R = t.runs()
  local ws = vim.fn.getcwd()
  local lines = {}
  for i = 1, 20 do
    table.insert(lines, string.format('line %02d', i))
  end
  local file = ws .. '/rv.txt'
  vim.fn.writefile(lines, file)
  local call = function(id, name, args) return { type = 'toolCall', id = id, name = name, arguments = args } end
  pid.new_session({ permissions = { default = 'allow' }, model = { provider = 'script', turns = {
    { content = { call('r1', 'read', { path = 'rv.txt' }) } },
    { content = { call('e1', 'edit', { path = 'rv.txt', edits = {
      { oldText = 'line 02', newText = 'LINE 02' }, { oldText = 'line 18', newText = 'LINE 18' } } }) } },
    { content = text('edited') },
  } } })
  pid.ask('edit rv.txt in two places')
  wait_run(R + 1)
  check(t.contains(t.view.lines(), '[changes] 1 file changed, 2 hunks to review (:PidReview): rv.txt +2 -2 (2 pending)'),
    'the chat lists the changed file with its counts')

  local items
  Rv.review({ on_done = function(err, it) items = it or err end })
  wait_for('changes/list', function() return items ~= nil end)
  check(type(items) == 'table' and #items == 2, 'the quickfix list: %s', vim.inspect(items))
  eq(vim.fn.getqflist({ title = 1 }).title, 'pid review: 2 hunks to review', "the quickfix list's title")
  vim.cmd('cfirst')
  eq(vim.api.nvim_buf_get_name(0), file, 'the first entry opens the file')
  wait_for('the diff against the state before the prompt', function() return vim.wo.diff end)
  local before_buf
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(w)
    if vim.api.nvim_buf_get_name(b):find('pid://before/', 1, true) then
      before_buf = b
    end
  end
  check(before_buf ~= nil, 'a window shows the file before the prompt')
  eq(vim.api.nvim_buf_get_lines(before_buf, 0, -1, false), lines, 'the file before the prompt, whole')

  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.api.nvim_feedkeys('gu', 'mx', false)
  wait_for('the undo', function() return #vim.fn.getqflist() == 1 end)
  local want = vim.deepcopy(lines)
  want[18] = 'LINE 18'
  eq(vim.fn.readfile(file), want, 'gu undid the first hunk on disk, the other change stays')
  wait_for('the buffer to follow', function() return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1] == 'line 02' end)

  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.api.nvim_feedkeys(']h', 'mx', false)
  eq(vim.api.nvim_win_get_cursor(0)[1], 15, ']h moves to the other hunk')
  vim.api.nvim_feedkeys('gk', 'mx', false)
  wait_for('the keep', function() return #vim.fn.getqflist() == 0 end)
  eq(vim.fn.readfile(file), want, 'a keep changes nothing on disk')
  vim.cmd('cclose')
  vim.cmd('only')
  say('ok - :PidReview for real: the quickfix list, the diff before the prompt, gu undoes a hunk, ]h, gk keeps one')
end
