-- Files through the editor: a buffer's unsaved line seen by pid, the edit's diff against the
-- buffer, the edit in the buffer and on disk, a file bash rewrote reloaded.

return function(t)
  local pid = t.pid
  local say, check, eq, text, wait_run, run_lines, find, of_kind, contains = t.say, t.check, t.eq, t.text, t.wait_run, t.run_lines, t.find, t.of_kind, t.contains
  local res, L

  -- 15. Files through the editor. notes.txt is open with unsaved changes: pid reads it through
  -- fs/read_text_file (the model sees the unsaved line), the edit's float shows the diff
  -- against the buffer, and the edit lands in the buffer, which is written (buffer and file
  -- agree: nothing to reload, no W11). other.txt is open and unchanged: a bash command
  -- rewrites it on disk, and its buffer is reloaded without a question.
  local R = t.runs() -- the runs that ended before this case
  local ws = vim.fn.getcwd()
  vim.fn.writefile({ 'one', 'two' }, ws .. '/notes.txt')
  vim.fn.writefile({ 'before' }, ws .. '/other.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/other.txt'))
  local other_buf = vim.api.nvim_get_current_buf()
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/notes.txt'))
  local notes_buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(notes_buf, 1, 2, false, { 'two (unsaved)' })
  eq(vim.bo[notes_buf].modified, true, 'notes.txt has unsaved changes')
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'r1', name = 'read', arguments = { path = 'notes.txt' } } } },
    { content = { { type = 'toolCall', id = 'e1', name = 'edit', arguments = { path = 'notes.txt', edits = { { oldText = 'two (unsaved)', newText = 'two (edited)' } } } } } },
    { content = { { type = 'toolCall', id = 'b1', name = 'bash', arguments = { command = "printf 'after\\n' > other.txt" } } } },
    { content = text('edited') },
  } } })
  t.asked = {}
  t.answers = { { key = 'a' }, { key = 'a' } }
  local reads, writes = pid.status().fs_reads, pid.status().fs_writes
  vim.cmd('PidAsk edit it')
  res = wait_run(R + 1)
  local read_result = res.messages[3]
  eq(read_result.role, 'toolResult', 'the read result')
  check(read_result.content[1].text:find('two (unsaved)', 1, true), 'the model saw the unsaved line: %s', read_result.content[1].text)
  check(pid.status().fs_reads > reads and pid.status().fs_writes > writes, 'fs requests: %d reads, %d writes', pid.status().fs_reads - reads, pid.status().fs_writes - writes)
  local eq_lines = of_kind('approval')[1].lines
  check(contains(eq_lines, '-two (unsaved)') and contains(eq_lines, '+two (edited)') and contains(eq_lines, ' one'),
    'the edit float shows the diff against the buffer: %s', vim.inspect(eq_lines))
  eq(vim.api.nvim_buf_get_lines(notes_buf, 0, -1, false), { 'one', 'two (edited)' }, 'the edit landed in the buffer')
  eq(vim.bo[notes_buf].modified, false, 'the buffer was written')
  eq(vim.fn.readfile(ws .. '/notes.txt'), { 'one', 'two (edited)' }, 'the file on disk agrees')
  eq(vim.api.nvim_buf_get_lines(other_buf, 0, -1, false), { 'after' }, "other.txt's buffer was reloaded after bash changed the file")
  eq(vim.bo[other_buf].modified, false, 'other.txt is not modified')
  L = run_lines('edit it')
  find(L, '[tool] read notes.txt  ok · 2 lines')
  find(L, '[tool] edit notes.txt  ok · Edited notes.txt')
  find(L, '[tool] bash $ printf')
  say('ok - files through the editor: the unsaved line seen, the edit in the buffer and on disk, a file bash changed reloaded')
end
