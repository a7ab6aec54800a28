-- Issue 38's rough edges in Neovim, each as a person met it: a grep card names what it looks
-- for (no JSON); `/greet bob` (19's command) stays as typed after a redraw and in
-- :PidRewind's picker, which marks the prompts a rewind took out; the rewind float says before
-- the choice which file it will leave and why (no "pass force"); :PidAsk while a prompt runs
-- offers the text as a steer; :e in the prompt window opens the file elsewhere; a folder that
-- holds only AGENTS.md is asked about by its instruction file, not a settings file.

return function(t)
  local pid, approval = t.pid, t.approval
  local say, check, eq, wait_for, text, wait_run, find = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.find
  local R = t.runs()
  local call = function(id, name, args) return { type = 'toolCall', id = id, name = name, arguments = args } end
  local state = require('pid.state')
  state.focus()
  local ws = vim.fn.getcwd()

  -- A grep card, a command as typed, then a second prompt.
  pid.new_session({ permissions = { default = 'allow' }, model = { provider = 'script', turns = {
    { content = { call('g1', 'grep', { pattern = 'hello', path = '.', glob = '*.txt' }), call('w1', 'write', { path = 'edge.txt', content = 'pid wrote\n' }) } },
    { content = text('greeted') },
    { content = text('second answer') },
  } } })
  pid.ask('/greet bob')
  wait_run(R + 1)
  local lines = t.view.lines()
  check(t.contains(lines, '>>> /greet bob'), 'the command as typed')
  local g = lines[find(lines, '[tool] grep ')]
  check(g:find('[tool] grep hello in . (*.txt)  ok', 1, true) == 1, 'the grep card: %s', g)
  pid.ask('and then?')
  wait_run(R + 2)

  -- A rewind of the conversation to before "and then?": redrawn, /greet bob stays as typed;
  -- the picker then marks "and then?" as rewound away.
  t.checkpoint_answers = { { pick = function(items)
    for i, c in ipairs(items) do
      if c.prompt == 'and then?' then return i end
    end
  end } }
  t.answers = { { key = 'c' } }
  local done
  pid.rewind({ on_done = function(err) done = { err = err } end })
  wait_for('the rewind of the conversation', function() return done ~= nil end)
  eq(done.err, nil, 'rewind error')
  lines = t.view.lines()
  local redrawn = vim.list_slice(lines, find(lines, '[session] rewound:'), #lines)
  check(t.contains(redrawn, '>>> /greet bob') and not t.contains(redrawn, '>>> Say hello to bob, warmly.') and not t.contains(redrawn, '>>> and then?'),
    'the redrawn conversation shows the command as typed: %s', vim.inspect(redrawn))

  -- A file changed by hand since pid wrote it: the float says it will be left, and why.
  vim.fn.writefile({ 'by hand' }, ws .. '/edge.txt')
  t.checkpoint_answers = { { pick = function(items)
    for i, c in ipairs(items) do
      if c.prompt == 'Say hello to bob, warmly.' then return i end
    end
  end } }
  t.answers = { { key = 'q' } }
  t.asked, t.asked_select, done = {}, {}, nil
  pid.rewind({ on_done = function(err) done = { err = err } end })
  wait_for('the rewind float, dismissed', function() return done ~= nil end)
  local shown = t.selects('pid.checkpoint')[1].shown
  check(shown[1]:find('^undo the rewind to "and then%?" | just now | no file changed'), 'the rewind\'s own checkpoint, in words: %s', shown[1])
  check(shown[2]:find('^"and then%?" | just now | no file changed | rewound away: no longer in the conversation$'), 'the rewound prompt is marked: %s', shown[2])
  check(shown[3]:find('^"/greet bob" | just now | 1 file$'), 'the command as typed, not marked: %s', shown[3])
  local fl = t.asked[1].lines
  check(t.contains(fl, '  added     edge.txt  left as it is: it changed since pid last wrote it'), 'the file left, and why, before the choice: %s', vim.inspect(vim.list_slice(fl, 1, 10)))
  check(t.contains(fl, 'Restoring the files leaves one as it is, as said; :PidRewind! restores it too (over the changes).'), 'what to do about it')
  check(not table.concat(fl, '\n'):find('pass force', 1, true), 'no protocol words')
  eq(vim.fn.readfile(ws .. '/edge.txt'), { 'by hand' }, 'nothing rewound')
  say('ok - rough edges: a grep card without JSON; /greet bob as typed after a redraw and in the picker, which marks a rewound prompt; the rewind float says which file it leaves and why')

  -- :PidAsk while a prompt runs: the text goes as a steer.
  R = t.runs()
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { call('k1', 'gate', vim.empty_dict()) } },
    { content = text('steered') },
  } }, scriptedTools = { { name = 'gate', requiresApproval = true, steps = { { result = { content = text('gate ok') } } } } } })
  t.session_answers = { { pick = function() return 1 end } }
  t.answers = { { never = true, action = function()
    vim.cmd('PidAsk also look at b.txt')
    vim.defer_fn(function() approval.press('a') end, 100)
  end } }
  pid.ask('first this')
  local res = wait_run(R + 1)
  check(t.contains(t.run_lines('first this'), '[steer] also look at b.txt'), 'the text went as a steer: %s', vim.inspect(t.run_lines('first this')))
  eq(t.user_texts(res.messages), { 'first this', 'also look at b.txt' }, 'the model got it')

  -- :e in the prompt window: the file opens in another window; the prompt stays.
  vim.cmd('PidChat')
  vim.cmd('stopinsert')
  local pwin = vim.api.nvim_get_current_win()
  local pbuf = vim.api.nvim_get_current_buf()
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/edge.txt'))
  wait_for('the prompt back in its window', function() return vim.api.nvim_win_get_buf(pwin) == pbuf end)
  check(vim.api.nvim_get_current_win() ~= pwin and vim.api.nvim_buf_get_name(0) == ws .. '/edge.txt', 'edge.txt in another window, with the cursor')
  say('ok - rough edges: :PidAsk during a run offers its text as a steer; :e in the prompt window opens the file in another window')

  -- A folder with only AGENTS.md: the trust question names it, not a .pid/settings.json.
  pid.stop()
  local only = vim.fn.tempname()
  vim.fn.mkdir(only, 'p')
  vim.fn.writefile({ '# Rules', 'Be brief.' }, only .. '/AGENTS.md')
  vim.cmd('cd ' .. vim.fn.fnameescape(only))
  R = t.runs()
  pid.new_session({ model = { provider = 'script', turns = { { content = text('hi') } } } })
  t.asked = {}
  t.trust_answers = { { key = 'r' } }
  pid.ask('hello')
  wait_run(R + 1)
  wait_for('the trust answer said', function() return t.has_line_prefix('[trust] ' .. only .. ': kept restricted') end)
  local tq = t.of_kind('trust')[1]
  eq(vim.list_slice(tq.lines, 1, 3), { 'pid: the workspace folder ' .. only .. ' is not trusted,', 'so pid leaves out:', '  its instruction file (for the model) AGENTS.md' }, 'the trust float')
  check(t.has_line('[trust] ' .. only .. ' is not trusted; pid leaves out its instruction file (for the model) AGENTS.md'), 'the chat line')
  check(not table.concat(tq.lines, '\n'):find('settings.json', 1, true), 'no settings file named')
  pid.stop()
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  say('ok - rough edges: a folder with only AGENTS.md is asked about by its instruction file')
end
