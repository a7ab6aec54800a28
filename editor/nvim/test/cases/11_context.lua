-- :'<,'>PidAsk sends the selection; :PidAsk! the diagnostics; @path a link to a file that
-- exists.

return function(t)
  local pid = t.pid
  local say, check, eq, text, wait_run, run_lines, find, user_texts = t.say, t.check, t.eq, t.text, t.wait_run, t.run_lines, t.find, t.user_texts
  local R = t.runs() -- the runs that ended before this case
  local res, L
  local ws = vim.fn.getcwd() -- the folder of 07_saved_sessions.lua

  -- 16. :'<,'>PidAsk: the selected lines go with the question as a resource block.
  vim.fn.writefile({ 'alpha', 'beta', 'gamma', 'delta' }, ws .. '/sel.lua')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/sel.lua'))
  pid.new_session({ model = { provider = 'script', turns = { { content = text('a selection') } } } })
  vim.cmd('2,3PidAsk what is this?')
  res = wait_run(R + 1)
  L = run_lines('what is this?')
  eq(L, { '>>> what is this?', '[context] sel.lua lines 2-3', 'a selection', '[done] stop' }, 'the chat names the selection')
  local sent = user_texts(res.messages)[1]
  check(sent:find('what is this?', 1, true) == 1 and sent:find('beta\ngamma', 1, true) and sent:find('sel.lua', 1, true) and not sent:find('alpha', 1, true),
    'the model got the question, then the selection with its path: %q', sent)
  -- :PidAsk! adds the buffer's diagnostics; @path names a file (a resource_link).
  local dns = vim.api.nvim_create_namespace('pid_test')
  vim.diagnostic.set(dns, 0, { { lnum = 1, col = 2, severity = vim.diagnostic.severity.ERROR, message = 'beta is undefined', source = 'lint' } })
  pid.new_session({ model = { provider = 'script', turns = { { content = text('fixed') } } } })
  vim.cmd('PidAsk! fix it, see @sel.lua and @missing.txt')
  res = wait_run(R + 2)
  L = run_lines('fix it, see @sel.lua and @missing.txt')
  eq(vim.list_slice(L, 1, 3), { '>>> fix it, see @sel.lua and @missing.txt', '[context] diagnostics of sel.lua (1)', '[context] @sel.lua' }, 'the chat names the diagnostics and the file')
  sent = user_texts(res.messages)[1]
  check(sent:find('sel.lua:2:3: error: beta is undefined [lint]', 1, true), 'the diagnostics were sent: %q', sent)
  check(select(2, sent:gsub('sel%.lua', '')) >= 3, 'the file link was sent too: %q', sent)
  check(not sent:find('missing.txt', #'fix it, see @sel.lua and @missing.txt' + 1, true), 'no link to a file that does not exist: %q', sent)
  say("ok - :'<,'>PidAsk sends the selection as a resource with the question; :PidAsk! the diagnostics, @path a link")
end
