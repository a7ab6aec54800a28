-- Keys typed elsewhere while an approval waits, and closing the float, answer nothing; only `d`
-- in the float denies.

return function(t)
  local pid, approval = t.pid, t.approval
  local say, check, eq, wait_for, text, wait_run, results = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.results
  local R = t.runs() -- the runs that ended before this case
  local res

  -- 5. Keys typed for something else never answer: while an approval is open, `x = 1<Enter>`
  -- typed in insert mode into a file buffer lands in that buffer; the question stays open and
  -- the tool does not run; only `d` in the float answers it.
  local scratch = vim.fn.tempname() .. '.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(scratch))
  local typed_buf = vim.api.nvim_get_current_buf()
  pid.new_session({
    model = { provider = 'script', turns = {
      { content = { { type = 'toolCall', id = 'k', name = 'bash', arguments = { command = 'echo should-not-run > ran.txt' } } } },
      { content = text('denied, as asked') },
    } },
  })
  t.asked = {}
  local typed = false
  t.answers = { { key = 'd', when = function() return typed end } }
  vim.cmd('PidAsk type while it asks')
  wait_for('the approval float', function() return approval.window() ~= nil end)
  eq(vim.api.nvim_get_current_buf(), typed_buf, 'the cursor stayed in the file buffer')
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('ix = 1<CR>y = 2<CR>a<Esc>', true, false, true), 'x', false)
  eq(vim.api.nvim_buf_get_lines(typed_buf, 0, -1, false), { 'x = 1', 'y = 2', 'a' }, 'the keys went to the file buffer')
  check(approval.window() ~= nil and pid.status().pending_approvals == 1, 'the question is still open after the stray keys')
  eq(pid.status().running, true, 'the run still waits')
  eq(vim.fn.filereadable(vim.fn.getcwd() .. '/ran.txt'), 0, 'the command did not run')
  -- Closing the float (:q in it, <C-w>o) does not answer either: it comes back.
  local first_float = approval.window()
  vim.api.nvim_win_close(first_float, true)
  wait_for('the float to come back', function() return approval.window() ~= nil and approval.window() ~= first_float end)
  eq(pid.status().pending_approvals, 1, 'still asked')
  typed = true
  res = wait_run(R + 1)
  eq(results(res), { { 'k', 'bash', true, 'The user denied this call of bash.' } }, 'only `d` in the float answered')
  eq(t.asked[1].lines[3], '$ echo should-not-run > ran.txt', 'the float shows the whole command')
  vim.cmd('bwipeout!')
  say('ok - keys typed elsewhere (x = 1<Enter> in insert mode) and closing the float do not answer; the command did not run; d in the float denied')
end
