-- Modes: a session started in plan mode; exit_plan_mode's plan shown whole as markdown in the
-- float, keys typed elsewhere not answering it, "keep planning" with a reason, then "approve;
-- accept edits" (the write after it runs unasked); :PidMode's picker (the modes with their
-- descriptions), :PidMode <id>, an unknown id, completion; the mode in the chat window's
-- status line after modeUpdate, :PidStop and session/load, and a kill and :PidResume. It runs
-- in the folder 07_saved_sessions.lua moved to.

return function(t)
  local pid, approval = t.pid, t.approval
  local say, check, eq, wait_for, text, wait_run, run_lines, results, selects, has_line, find = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.results, t.selects, t.has_line, t.find
  local R = t.runs() -- the runs that ended before this case
  local res, L

  -- 23. A plan of 40 lines (longer than the float's height) and a short one.
  local plan = { '# Plan', '' }
  for i = 1, 37 do
    table.insert(plan, string.format('%d. step %d of the plan', i, i))
  end
  table.insert(plan, 'The end of the plan.')
  local long_plan = table.concat(plan, '\n')
  local call = function(id, name, args) return { type = 'toolCall', id = id, name = name, arguments = args } end
  pid.new_session({ mode = 'plan', toolExecution = 'sequential', model = { provider = 'script', turns = {
    { content = { call('p1', 'exit_plan_mode', { plan = long_plan }) } },
    { content = { call('p2', 'exit_plan_mode', { plan = '1. Write a.txt with a.\n2. Done.' }) } },
    { content = { call('w1', 'write', { path = 'a.txt', content = 'a\n' }) } },
    { content = text('Planned and done.') },
  } } })
  local scratch = vim.fn.tempname() .. '.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(scratch))
  local typed_buf = vim.api.nvim_get_current_buf()
  t.asked = {}
  t.inputs = { 'Say what a.txt holds.' }
  local typed, status_in_plan = false, nil
  t.answers = { { key = 'p', when = function() return typed end }, { key = 'e' } }
  vim.cmd('PidAsk plan, then do it')
  wait_for('the plan float', function() return approval.window() ~= nil end)
  status_in_plan = t.chat_statusline()
  eq(vim.api.nvim_get_current_buf(), typed_buf, 'the float did not take the cursor')
  -- The float's keys typed for something else: into the file buffer, in insert mode and in
  -- normal mode (`x` deletes there).
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('ip e a A q<CR>ok<Esc>', true, false, true), 'x', false)
  eq(vim.api.nvim_buf_get_lines(typed_buf, 0, -1, false), { 'p e a A q', 'ok' }, 'the keys went to the file buffer')
  check(approval.window() ~= nil and pid.status().pending_approvals == 1, 'the plan question is still open after the stray keys')
  eq(pid.mode(), 'plan', 'still planning')
  typed = true
  res = wait_run(R + 1)
  vim.cmd('bwipeout!')

  check(status_in_plan ~= nil and status_in_plan:find('mode: Plan', 1, true), 'the status line said plan mode: %s', tostring(status_in_plan))
  eq(#t.asked, 2, 'two plans asked about (the write in acceptEdits is not)')
  local q1 = t.asked[1]
  eq(q1.q.filetype, 'markdown', "the plan's filetype")
  eq(q1.lines[1], '# pid has a plan and asks to leave plan mode', 'the title')
  -- The choices come first, then the whole plan, uncut.
  eq(vim.list_slice(q1.lines, 3, 7), {
    '- `a` approve; edits ask first (default mode)',
    '- `e` approve; accept edits',
    '- `A` approve; auto (edits and sandboxed commands run unasked)',
    '- `p` keep planning (you may say why)',
    '- `q` dismiss (keep planning)',
  }, 'the choices')
  local at = find(q1.lines, '# Plan', 'the plan in the float')
  eq(vim.list_slice(q1.lines, at, #q1.lines), plan, 'the whole plan, every line')
  check(#q1.lines > vim.o.lines, 'the plan is longer than the screen (%d lines)', #q1.lines)
  eq(t.asked[2].lines[#t.asked[2].lines], '2. Done.', "the second plan's last line")
  eq(results(res), {
    { 'p1', 'exit_plan_mode', true, 'The user did not approve the plan: Say what a.txt holds. Keep planning.' },
    { 'p2', 'exit_plan_mode', false, 'The user approved the plan. You are now in acceptEdits mode: carry it out.' },
    { 'w1', 'write', false, 'Created a.txt (1 line, 2 B).' },
  }, 'the tool results')
  eq(vim.fn.readfile(vim.fn.getcwd() .. '/a.txt'), { 'a' }, 'the write ran, unasked, in acceptEdits')
  L = run_lines('plan, then do it')
  eq(L[2], '[tool] exit_plan_mode (a plan of 40 lines)  kept planning · Say what a.txt holds. Keep planning.', 'the first card')
  check(t.contains(L, '[plan] exit_plan_mode (p1): keep planning: Say what a.txt holds.'), 'the chat says the plan was sent back, with the reason')
  check(t.contains(L, '[plan] exit_plan_mode (p2): approved, then Accept edits'), 'the chat says the plan was approved')
  local ml = find(L, '[mode] ', 'the mode change in the chat')
  eq(L[ml], '[mode] Accept edits (acceptEdits): Writes and edits inside the workspace run without asking; commands ask.', 'the mode line')
  eq(pid.mode(), 'acceptEdits', 'the mode after modeUpdate')
  check(t.chat_statusline():find('mode: Accept edits', 1, true), 'the status line: %s', t.chat_statusline())
  say('ok - exit_plan_mode: the whole plan as markdown in the float, stray keys answer nothing, keep planning with a reason, approve into acceptEdits')

  -- 24. :PidMode without an argument: the session's modes with their descriptions; :PidMode
  -- <id>; an unknown id is refused in words; completion of the ids.
  t.mode_answers = { { pick = function(items)
    for i, m in ipairs(items) do
      if m.id == 'plan' then return i end
    end
  end } }
  vim.cmd('PidMode')
  wait_for('plan mode', function() return pid.mode() == 'plan' end)
  local mq = selects('pid.mode')
  eq(#mq, 1, 'mode pickers')
  eq(mq[1].prompt, 'Mode (now: Accept edits)', 'the picker names the current mode')
  eq(mq[1].shown, {
    'Default (default): Changing files and running commands ask first, unless a rule or an "always" answer allows them.',
    'Accept edits (acceptEdits), the current mode: Writes and edits inside the workspace run without asking; commands ask.',
    'Plan (plan): Nothing changes files: the agent reads, runs commands in a read-only sandbox and proposes a plan.',
    'Auto (auto): Edits inside the workspace and sandboxed commands run without asking; leaving the sandbox asks.',
  }, 'the modes as listed (bypassPermissions is not offered without the user setting)')
  wait_for('the chat to say it', function() return has_line('[mode] Plan (plan): Nothing changes files: the agent reads, runs commands in a read-only sandbox and proposes a plan.') end)
  check(t.chat_statusline():find('mode: Plan', 1, true), 'the status line after the picker: %s', t.chat_statusline())
  vim.cmd('PidMode auto')
  wait_for('auto mode', function() return pid.mode() == 'auto' end)
  check(t.chat_statusline():find('mode: Auto', 1, true), 'the status line after :PidMode auto: %s', t.chat_statusline())
  local before = #t.notes
  vim.cmd('PidMode sideways')
  wait_for('the refusal', function() return #t.notes > before end)
  check(t.notes[#t.notes].msg:find('the mode was not changed to sideways: ', 1, true) and t.notes[#t.notes].msg:find('(the modes: default, acceptEdits, plan, auto)', 1, true),
    'the refusal names the modes: %s', t.notes[#t.notes].msg)
  eq(pid.mode(), 'auto', 'the mode stays')
  eq(vim.fn.getcompletion('PidMode a', 'cmdline'), { 'acceptEdits', 'auto' }, 'completion of the ids')
  -- Shift-Tab in the prompt window: the next mode (auto -> default -> acceptEdits).
  vim.cmd('PidChat')
  eq(vim.api.nvim_buf_get_name(0), 'pid://prompt', 'the cursor is in the prompt window')
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<S-Tab>', true, false, true), 'x', false)
  wait_for('default mode', function() return pid.mode() == 'default' end)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<S-Tab>', true, false, true), 'x', false)
  wait_for('acceptEdits mode', function() return pid.mode() == 'acceptEdits' end)
  vim.cmd('stopinsert')
  vim.cmd('wincmd p')
  vim.cmd('PidMode auto')
  wait_for('auto mode again', function() return pid.mode() == 'auto' end)
  say('ok - :PidMode: the picker lists the modes with their descriptions, an id switches, an unknown one is refused in words, ids complete; Shift-Tab in the prompt window cycles')

  -- 25. The mode after :PidStop (no session: none shown), session/load (the saved mode), and a
  -- kill (kept, said to be of a stopped pid) and :PidResume.
  local sid = pid.status().session_id
  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil and not pid.status().started end)
  eq(pid.mode(), nil, 'no mode without a session')
  check(t.chat_statusline():find('mode: (no session yet)', 1, true), 'the status line after :PidStop: %s', t.chat_statusline())
  local loaded = nil
  pid.load_session(sid, { on_done = function(err) loaded = { err = err } end })
  wait_for('the load', function() return loaded ~= nil end)
  eq(loaded.err, nil, 'load error')
  eq(pid.mode(), 'auto', 'the saved mode, from session/load')
  check(t.chat_statusline():find('mode: Auto', 1, true), 'the status line after session/load: %s', t.chat_statusline())
  t.uv.kill(pid.status().pid, 'sigkill')
  wait_for('the crash to be noticed', function() return pid.status().crashed and not pid.status().started end)
  check(t.chat_statusline():find('mode: Auto (pid stopped)', 1, true), 'the status line after the kill: %s', t.chat_statusline())
  loaded = nil
  pid.resume({ on_done = function(err) loaded = { err = err } end })
  wait_for('the resume', function() return loaded ~= nil end)
  eq(loaded.err, nil, 'resume error')
  eq(pid.mode(), 'auto', 'the mode after :PidResume')
  local sl = t.chat_statusline()
  check(sl:find('mode: Auto', 1, true) and not sl:find('stopped', 1, true), 'the status line after :PidResume: %s', sl)
  say('ok - the mode in the status line: after modeUpdate, :PidStop, session/load, a kill and :PidResume')
end
