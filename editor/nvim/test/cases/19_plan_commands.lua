-- Issue 24 in the chat: the plan (todo_write, planUpdate) as a checklist, the context meter and
-- the cost in the chat window's status line (usageUpdate), the session's /commands (:Pid /NAME
-- with completion of the names, the picker, a command's output, a template of the user's), and
-- what a compaction kept word for word. It runs in the folder 07_saved_sessions.lua moved to.

return function(t)
  local pid = t.pid
  local say, check, eq, wait_for, text, wait_run, run_lines, find, selects, user_texts = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.find, t.selects, t.user_texts
  local R = t.runs() -- the runs that ended before this case
  local call = function(id, name, args) return { type = 'toolCall', id = id, name = name, arguments = args } end
  local res, L

  -- A command of the user's, read by commands/list when the session starts.
  vim.fn.mkdir(t.xdg .. '/config/pid/commands', 'p')
  vim.fn.writefile({ '---', 'description: Greet someone', 'argument-hint: name', '---', 'Say hello to $ARGUMENTS, warmly.' }, t.xdg .. '/config/pid/commands/greet.md')

  -- 33. The plan: todo_write's card says how many steps; the chat shows the checklist after
  -- it, again at each change. The meter after each model call, with the cost (the model has a
  -- price).
  local usages = t.notes_of('usageUpdate')
  local big = string.rep('y', 6000)
  pid.new_session({ model = { provider = 'script', contextWindow = 200000, price = { input = 3, output = 15 },
    compaction = { keepRecentTokens = 200 }, turns = {
      { content = { call('p1', 'todo_write', { todos = {
        { content = 'Read the parser', status = 'in_progress', priority = 'high' },
        { content = 'Fix the off-by-one', status = 'pending' },
        { content = 'Run the tests', status = 'pending', priority = 'low' },
      } }) }, usage = { input = 10000, output = 1000 } },
      { content = { call('p2', 'todo_write', { todos = {
        { content = 'Read the parser', status = 'completed', priority = 'high' },
        { content = 'Fix the off-by-one', status = 'in_progress' },
        { content = 'Run the tests', status = 'pending', priority = 'low' },
      } }) }, usage = { input = 12000, output = 500 } },
      { content = text('On it. ' .. big), usage = { input = 40000, output = 2000 } },
      { content = text('Hello, World, warmly.') },
      { content = text('later ' .. big) },
    }, summaries = { { content = text('## Goal\nfix the parser') } } } })
  pid.ask('plan the fix')
  res = wait_run(R + 1)
  L = run_lines('plan the fix')
  -- The card says it in a person's words, not the result written for the model.
  eq(L[2], '[tool] todo_write (a plan of 3 steps)  ok · the plan was updated (its checklist follows)', 'the first card')
  local at = find(L, '[plan] 3 steps: 0 done, 1 in progress, 2 to do', 'the first plan')
  eq(vim.list_slice(L, at + 1, at + 3), {
    '  - [~] Read the parser (in progress) (high priority)',
    '  - [ ] Fix the off-by-one',
    '  - [ ] Run the tests',
  }, 'the first checklist')
  at = find(L, '[plan] 3 steps: 1 done, 1 in progress, 1 to do', 'the plan after the second todo_write')
  eq(vim.list_slice(L, at + 1, at + 3), {
    '  - [x] Read the parser (high priority)',
    '  - [~] Fix the off-by-one (in progress)',
    '  - [ ] Run the tests',
  }, 'the second checklist')
  check(at > find(L, '[tool] todo_write (a plan of 3 steps)  ok', 'a card') , 'the plan follows its card')
  eq(pid.status().plan[2], { content = 'Fix the off-by-one', status = 'in_progress', priority = 'medium' }, "status()'s plan")
  eq(#usages, 3, 'a usageUpdate per model call')
  local u = usages[3]
  eq({ u.used, u.size, u.cost and u.cost.currency }, { 42000, 200000, 'USD' }, 'the last usageUpdate')
  check(math.abs(u.cost.amount - (0.03 + 0.015 + 0.036 + 0.0075 + 0.12 + 0.03)) < 1e-9, 'the cost: %s', vim.inspect(u.cost))
  -- The status line fits the chat's window: whole where there is room, shortened (never cut)
  -- in a narrow one (issue 38: it was cut).
  local win = t.view.window()
  vim.api.nvim_win_set_width(win, 90)
  require('pid.modes').refresh()
  local sl = t.chat_statusline()
  check(sl:find('context 42k/200k (21%) · $0.24', 1, true) ~= nil, 'the meter in the status line: %s', sl)
  check(sl:find('mode: Default', 1, true) ~= nil, 'the mode stays in it: %s', sl)
  local function narrow(cols)
    vim.api.nvim_win_set_width(win, cols)
    require('pid.modes').refresh()
    return vim.trim(vim.api.nvim_eval_statusline(vim.wo[win].statusline, { winid = win }).str)
  end
  eq(narrow(40), 'mode: Default  42k/200k 21% · $0.24', 'the status line of a 40-column chat')
  eq(narrow(30), 'mode: Default', 'the status line of a 30-column chat')
  narrow(90)
  say('ok - the plan as a checklist after each todo_write; the context meter and the cost in the status line')

  -- 34. :Pid completes the session's commands (the user's greet among pid's own); :Pid /mode
  -- completes the modes; :Pid /plan shows the plan as pid says it, without the model.
  wait_for('the commands of the session', function()
    local S = require('pid.state').S
    return S.commands ~= nil and S.commands.session == pid.status().session_id
  end)
  eq(vim.fn.getcompletion('Pid /', 'cmdline'), { '/compact', '/init', '/review', '/plan', '/mode', '/model', '/mcp', '/rewind', '/jobs', '/help', '/greet', '/skills', '/agents' }, 'every command')
  eq(vim.fn.getcompletion('Pid /g', 'cmdline'), { '/greet' }, "the user's command")
  eq(vim.fn.getcompletion('Pid p', 'cmdline'), { '/plan' }, 'a name typed without its /')
  eq(vim.fn.getcompletion('Pid /mode a', 'cmdline'), { 'acceptEdits', 'auto' }, "/mode's argument")
  vim.cmd('Pid /plan')
  res = wait_run(R + 2)
  eq(res.command and res.command.name, 'plan', "the result's command")
  eq(#res.messages, 0, 'nothing for the model')
  L = run_lines('/plan')
  eq(L[2], '[command] /plan:', 'the output header')
  eq(vim.list_slice(L, 3, #L), { '    Plan:', '    - [x] Read the parser (high priority)', '    - [~] Fix the off-by-one', '    - [ ] Run the tests (low priority)', '[done] stop' },
    'the plan as pid says it, then the end')
  -- A mode that does not exist: the output says it failed.
  vim.cmd('Pid mode sideways')
  wait_run(R + 3)
  L = run_lines('/mode sideways')
  eq(L[2], '[command] /mode failed:', 'a failed command says so')
  say('ok - :Pid completes the commands (and /mode its modes); /plan shows its output; a failed one says it failed')

  -- 35. :Pid without a command: the picker (names, hints, descriptions), then the input its
  -- hint asks for; the template goes to the model filled in.
  t.command_answers = { { pick = function(items)
    for i, c in ipairs(items) do
      if c.name == 'greet' then return i end
    end
  end } }
  t.inputs = { 'World' }
  vim.cmd('Pid')
  res = wait_run(R + 4)
  local shown = selects('pid.command')[1].shown
  check(t.contains(shown, '/greet [name]: Greet someone'), 'the picker shows the hint and description: %s', table.concat(shown, ' | '))
  eq(shown[1], "/compact [what the summary should focus on (optional)]: Summarize the conversation so far, to free the model's context", "pid's own first")
  eq(t.asked_select[#t.asked_select].prompt, '/greet [name]: ', "the input's prompt")
  eq(user_texts(res.messages), { 'Say hello to World, warmly.' }, 'the model got the template filled in')
  check(t.has_line('Hello, World, warmly.'), 'the answer')
  say('ok - :Pid alone: the picker, the input the hint asks, the template filled in')

  -- 36. /compact: the summary, and what it kept word for word (the plan, the files) in words.
  local ends = t.notes_of('compactionEnd')
  pid.ask('more ' .. big)
  wait_run(R + 5)
  vim.cmd('Pid /compact')
  wait_run(R + 6)
  eq(#ends, 1, 'one compaction')
  check(type(ends[1].kept) == 'table' and ends[1].kept.planEntries == 3, 'pid says it kept the plan: %s', vim.inspect(ends[1].kept))
  L = run_lines('/compact')
  local ce = find(L, '[compaction] the conversation was compacted (on request', 'the compaction')
  eq(vim.list_slice(L, ce + 1, ce + 2), { '    ## Goal', '    fix the parser' }, "the model's summary")
  local kept = L[ce + 3]
  check(kept:find('[compaction] kept word for word after the summary: ', 1, true) == 1 and kept:find('the plan (3 steps)', 1, true), 'what was kept: %s', kept)
  eq(kept, require('pid.plan').kept_line(ends[1].kept), 'the kept line says what pid sent')
  check(t.has_line_prefix('[command] /compact:'), "the command's outcome")
  say('ok - /compact: the summary, then what the compaction kept word for word')
end
