-- Files changed on disk behind a buffer, within the second Neovim's own check ignores: while an
-- edit waits, between its read and its write, under unsaved changes, deleted; a write Neovim did
-- not do.

return function(t)
  local pid, approval = t.pid, t.approval
  local say, check, eq, text, wait_run, run_lines, find, count, results = t.say, t.check, t.eq, t.text, t.wait_run, t.run_lines, t.find, t.count, t.results
  local res
  local ws = vim.fn.getcwd() -- the folder of 07_saved_sessions.lua

  -- 21. Files changed on disk behind a buffer, within the second Neovim's own check ignores.
  -- (a) greet.txt is open and unchanged; while the edit's approval waits, another line changes
  -- on disk (same size): the edit must not write the buffer's old text over it, and what the
  -- model is told must be true; the buffer shows the disk's text. (b) notes2.txt has unsaved
  -- changes and changed on disk too: the read fails with why, the chat says so, nothing is
  -- lost. (c) a write Neovim did not do (a BufWriteCmd that writes nothing) is not a success.
  local R = t.runs() -- the runs that ended before this case
  vim.fn.writefile({ 'hello world', 'second line', 'third line' }, ws .. '/greet.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/greet.txt'))
  local greet_buf = vim.api.nvim_get_current_buf()
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'g1', name = 'read', arguments = { path = 'greet.txt' } } } },
    { content = { { type = 'toolCall', id = 'g2', name = 'edit', arguments = { path = 'greet.txt', edits = { { oldText = 'hello world', newText = 'hi world' } } } } } },
    { content = text('greeted') },
  } } })
  local on_disk = { 'hello world', 'second LINE', 'third line' }
  t.asked = {}
  t.answers = { { never = true, action = function()
    vim.fn.writefile(on_disk, ws .. '/greet.txt') -- another program changes line 2
    approval.press('a')
  end } }
  pid.ask('greet')
  res = wait_run(R + 1)
  local edit_result = results(res)[2]
  eq({ edit_result[1], edit_result[3] }, { 'g2', true }, 'the edit failed')
  check(edit_result[4]:find('changed', 1, true), 'the model is told the file changed: %s', edit_result[4])
  eq(vim.fn.readfile(ws .. '/greet.txt'), on_disk, 'the change on disk was kept')
  eq(vim.api.nvim_buf_get_lines(greet_buf, 0, -1, false), on_disk, 'the buffer shows the file as it is now')
  eq(vim.bo[greet_buf].modified, false, 'greet.txt has nothing unsaved')
  say('ok - a file changed on disk while its edit waited: not overwritten, the model told, the buffer reloaded')

  -- The same change made between the edit's read and its write (another program wins the
  -- race): the write refuses, the change stays.
  local files_mod = require('pid.files')
  vim.fn.writefile({ 'alpha', 'beta' }, ws .. '/race.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/race.txt'))
  local race_buf = vim.api.nvim_get_current_buf()
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'x1', name = 'read', arguments = { path = 'race.txt' } } } },
    { content = { { type = 'toolCall', id = 'x2', name = 'edit', arguments = { path = 'race.txt', edits = { { oldText = 'alpha', newText = 'ALPHA' } } } } } },
    { content = text('raced') },
  } } })
  local real_read, race_reads = files_mod.read, 0
  files_mod.read = function(params, on_conflict)
    local r, e = real_read(params, on_conflict)
    if params.path:match('race%.txt$') then
      race_reads = race_reads + 1
      if race_reads == 2 then
        vim.fn.writefile({ 'alpha', 'BETA' }, ws .. '/race.txt') -- after the edit's read
      end
    end
    return r, e
  end
  t.answers = { { key = 'a' } }
  pid.ask('race')
  res = wait_run(R + 2)
  files_mod.read = real_read
  local x2 = results(res)[2]
  eq(race_reads, 2, 'the read and the edit read race.txt')
  eq(x2[3], true, 'the edit failed')
  check(x2[4]:find('changed on disk since it was read; nothing was written', 1, true), 'the model is told: %s', x2[4])
  eq(vim.fn.readfile(ws .. '/race.txt'), { 'alpha', 'BETA' }, 'the change on disk was kept')
  eq(vim.api.nvim_buf_get_lines(race_buf, 0, -1, false), { 'alpha', 'BETA' }, 'the buffer shows it')
  say('ok - a change on disk between the edit\'s read and its write: the write refuses, the change stays')

  vim.fn.writefile({ 'one', 'two' }, ws .. '/notes2.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/notes2.txt'))
  local n2 = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(n2, 1, 2, false, { 'two (unsaved)' })
  vim.fn.writefile({ 'one', 'TWO' }, ws .. '/notes2.txt')
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'n1', name = 'read', arguments = { path = 'notes2.txt' } } } },
    { content = { { type = 'toolCall', id = 'n2', name = 'read', arguments = { path = 'notes2.txt' } } } },
    { content = text('seen') },
  } } })
  pid.ask('read notes2')
  res = wait_run(R + 3)
  local read2 = results(res)[1]
  eq(read2[3], true, 'the read failed')
  check(read2[4]:find('changed on disk while its buffer in Neovim has unsaved changes', 1, true) and read2[4]:find(':e!', 1, true),
    'the model is told why and what the person can do: %s', read2[4])
  eq(results(res)[2][3], true, 'the second read failed too')
  eq(count(run_lines('read notes2'), '[file] ' .. ws .. '/notes2.txt changed on disk while its buffer has unsaved changes'), 1, 'the chat says so, once')
  eq(vim.api.nvim_buf_get_lines(n2, 0, -1, false), { 'one', 'two (unsaved)' }, 'the unsaved change is still in the buffer')
  eq(vim.fn.readfile(ws .. '/notes2.txt'), { 'one', 'TWO' }, 'the file is as the other program left it')
  -- Deleted on disk under unsaved changes: the model is told, the unsaved text stays.
  os.remove(ws .. '/notes2.txt')
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'd1', name = 'read', arguments = { path = 'notes2.txt' } } } },
    { content = text('gone') },
  } } })
  pid.ask('read deleted notes2')
  res = wait_run(R + 4)
  local d1 = results(res)[1]
  eq({ d1[3], d1[4] }, { true, 'file not found: notes2.txt' }, 'the model is told the file is gone (pid looks on disk first)')
  eq(vim.api.nvim_buf_get_lines(n2, 0, -1, false), { 'one', 'two (unsaved)' }, 'the unsaved text is still in the buffer')
  say('ok - unsaved changes over a file changed on disk: the read fails with why, the chat says so once, nothing lost')

  vim.fn.writefile({ 'keep' }, ws .. '/w.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/w.txt'))
  local wgroup = vim.api.nvim_create_augroup('PidTestNoWrite', { clear = true })
  vim.api.nvim_create_autocmd('BufWriteCmd', { group = wgroup, pattern = ws .. '/w.txt', callback = function() end })
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'w1', name = 'read', arguments = { path = 'w.txt' } } } },
    { content = { { type = 'toolCall', id = 'w2', name = 'edit', arguments = { path = 'w.txt', edits = { { oldText = 'keep', newText = 'changed' } } } } } },
    { content = text('tried') },
  } } })
  t.answers = { { key = 'a' } }
  pid.ask('change w')
  res = wait_run(R + 5)
  vim.api.nvim_del_augroup_by_id(wgroup)
  local w2 = results(res)[2]
  eq(w2[3], true, 'the edit is not a success')
  check(w2[4]:find('did not write', 1, true), 'the model is told the file was not written: %s', w2[4])
  eq(vim.fn.readfile(ws .. '/w.txt'), { 'keep' }, 'nothing was written')
  vim.cmd('edit! ' .. vim.fn.fnameescape(ws .. '/w.txt'))
  say('ok - a write Neovim did not do is reported as not done')
end
