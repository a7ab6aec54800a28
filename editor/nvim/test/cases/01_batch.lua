-- A parallel batch: setup{} (the commands exist, pid starts lazily at the first prompt), the
-- cards changed in place, an approval answered with `a` in the float, the answer streamed, <CR>
-- on a card. It also writes the user settings' models that 12_steer_model.lua picks from.

return function(t)
  local pid, view, approval = t.pid, t.view, t.approval
  local say, check, eq, text, wait_run, run_lines, find, results, roles, log_of, contains = t.say, t.check, t.eq, t.text, t.wait_run, t.run_lines, t.find, t.results, t.roles, t.log_of, t.contains
  local R = t.runs() -- the runs that ended before this case

  say('%s, plugin %s, pid %s', vim.fn.execute('version'):match('NVIM v[^\n]+'), vim.api.nvim_get_runtime_file('lua/pid/init.lua', false)[1], t.pid_bin)

  -- The user settings list the models :PidModel offers (12_steer_model.lua): scripted ones.
  vim.fn.writefile({ vim.json.encode({ models = {
    { provider = 'script', id = 'alt', name = 'Alternative', turns = { { content = text('the alternative model answers') } } },
    { provider = 'script', id = 'other' },
  } }) }, t.xdg .. '/config/pid/settings.json')

  pid.setup({
    cmd = { t.pid_bin },
    env = { XDG_CONFIG_HOME = t.xdg .. '/config', XDG_STATE_HOME = t.xdg .. '/state' },
    open = 'botright 80vsplit',
    session = {
      model = { provider = 'script', turns = {
        { content = {
          { type = 'toolCall', id = 'a', name = 'slow', arguments = vim.empty_dict() },
          { type = 'toolCall', id = 'b', name = 'fast', arguments = { path = 'x.txt' } },
        } },
        { content = text('all done:\nboth tools ran') },
      } },
      scriptedTools = {
        { name = 'slow', steps = {
          -- Each ends its last word: pid holds an unfinished one back (it may be a secret's start).
          { update = { content = text('half\n') } },
          { update = { content = text('step 1\nstep 2\nthree quarters\n') } },
          { waitForEnd = 'b' },
          { result = { content = text('slow ok') } },
        } },
        { name = 'fast', requiresApproval = true, steps = {
          { result = { content = text('fast ok') } },
        } },
      },
    },
  })
  for _, c in ipairs({ 'PidAsk', 'PidChat', 'PidSteer', 'PidFollowUp', 'PidApproval', 'PidCancel', 'PidNew', 'PidSessions', 'PidModel', 'PidPermissions', 'PidResume', 'PidShow', 'PidStop' }) do
    eq(vim.fn.exists(':' .. c), 2, ':' .. c .. ' exists')
  end
  eq(pid.status().started, false, 'pid started before the first prompt (it starts lazily)')

  -- 1. A parallel batch: slow (a) reports progress and ends only after fast (b) ended; b needs
  -- approval, answered with `a` in the float. :PidAsk without text asks with vim.ui.input.
  t.inputs = { 'go' }
  t.answers = { { key = 'a' } }
  local code_win = vim.api.nvim_get_current_win()
  vim.cmd('PidAsk')
  local res = wait_run(R + 1)
  local st = pid.status()
  local sid = st.session_id
  eq(st.server_info and st.server_info.name, 'pid', 'serverInfo.name')
  check(t.asked_select[1].input, 'the first question should be vim.ui.input')
  eq(#t.asked, 1, 'questions asked (one approval)')
  local q = t.asked[1]
  eq(q.focused, false, 'the approval float did not take the cursor when it opened')
  eq(q.entered, true, ':PidApproval put the cursor in the float')
  eq(q.keys, { a = 'allow', A = 'always allow: every call of the tool fast in this workspace', d = 'deny', q = 'dismiss (deny)' }, 'the keys of the float')
  check(contains(q.lines, 'A always allows every call of the tool fast in this workspace'), 'the float says what A covers: %s', vim.inspect(q.lines))
  check(q.lines[1]:find('fast x.txt', 1, true), 'the float names the tool and its path: %q', q.lines[1])
  eq(vim.api.nvim_get_current_win(), code_win, 'after the answer the cursor is back where it was')
  eq(approval.window(), nil, 'the float closed')

  local buf = pid.bufnr()
  eq(vim.api.nvim_buf_get_name(buf), 'pid://chat', 'chat buffer name')
  eq(vim.bo[buf].buftype, 'nofile', 'chat buftype')
  eq(vim.bo[buf].filetype, 'markdown', 'chat filetype')
  check(vim.fn.bufwinid(buf) ~= -1, 'the chat should be shown in a window')

  local L = run_lines('go')
  eq(L, {
    '>>> go',
    '[tool] slow {}  ok · slow ok',
    '[tool] fast x.txt  ok · fast ok',
    '[approval] fast (b): allow',
    'all done:',
    'both tools ran',
    '[done] stop',
  }, 'the chat after the run')
  -- The cards changed in place: a showed the LATEST line of its progress, then its result.
  local la, lb = log_of(sid .. '/a'), log_of(sid .. '/b')
  eq(la, { 'running', 'running · half', 'running · three quarters', 'ok · slow ok' }, "a's card over time")
  eq(lb, { 'waiting · waiting for your answer: :PidApproval', 'running', 'running', 'ok · fast ok' }, "b's card over time")
  local b_ok, a_ok
  for i, e in ipairs(t.card_log) do
    if e.key == sid .. '/b' and e.status == 'ok' then b_ok = i end
    if e.key == sid .. '/a' and e.status == 'ok' then a_ok = i end
  end
  check(b_ok < a_ok, 'b ended (#%d) before a (#%d): completion order', b_ok, a_ok)
  eq(view.card(sid .. '/a').line, find(view.lines(true), '[tool] slow {}'), "a's card kept its line")
  eq(t.streamed_while_running, true, 'the answer was shown while the run went on (streamed)')
  -- <CR> on a card opens the call's whole output.
  local chat_win = vim.fn.bufwinid(buf)
  vim.api.nvim_set_current_win(chat_win)
  vim.api.nvim_win_set_cursor(chat_win, { view.card(sid .. '/a').line, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  eq(vim.api.nvim_buf_get_lines(0, 0, -1, false), { '[tool] slow {}', '', 'slow ok' }, 'the output view')
  vim.cmd('close')
  vim.api.nvim_set_current_win(code_win)
  eq(res.stopReason, 'stop', 'stopReason')
  eq(roles(res.messages), { 'user', 'assistant', 'toolResult', 'toolResult', 'assistant' }, 'message roles')
  eq(results(res), { { 'a', 'slow', false, 'slow ok' }, { 'b', 'fast', false, 'fast ok' } }, 'tool results in source order')
  say('ok - parallel batch: cards in place with the latest output line, approval answered with `a` in the float, answer shown')
end
