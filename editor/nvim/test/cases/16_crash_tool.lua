-- pid killed while a tool runs: its card is cancelled, :PidResume shows the conversation once;
-- then :PidStop ends pid with exit code 0.

return function(t)
  local pid, view = t.pid, t.view
  local say, check, eq, wait_for, text, count = t.say, t.check, t.eq, t.wait_for, t.text, t.count

  -- 22. pid killed while a tool runs: its card says so (not "running" forever); :PidResume
  -- shows the conversation once, in place of what the chat showed of it.
  pid.new_session({ model = { provider = 'script', turns = { { content = { { type = 'text', text = 'building' }, { type = 'toolCall', id = 'k1', name = 'build', arguments = vim.empty_dict() } } } } },
    scriptedTools = { { name = 'build', steps = { { sleepMs = 600000 }, { result = { content = text('built') } } } } } })
  local shown_before = view.lines(true)
  local before = #shown_before
  pid.ask('build it')
  local key
  wait_for('the build card to run', function()
    key = pid.status().session_id and (pid.status().session_id .. '/k1')
    local c = key and view.card(key)
    return c ~= nil and c.status == 'running'
  end)
  local ksid = pid.status().session_id
  t.uv.kill(pid.status().pid, 'sigkill')
  wait_for('the crash to be noticed', function() return pid.status().crashed and not pid.status().started end)
  local kc = view.card(key)
  eq({ kc.status, kc.latest }, { 'cancelled', 'pid stopped before it ended' }, 'the card after the kill')
  vim.cmd('PidResume')
  wait_for('the resumed session', function() return pid.status().session_id == ksid and not pid.status().loading end)
  local after = vim.list_slice(view.lines(true), before + 1, #view.lines(true))
  eq(count(after, '>>> build it'), 1, 'the prompt shown once')
  eq(count(after, 'building'), 1, 'the answer shown once')
  eq(count(after, '[tool] build'), 1, 'one card')
  eq(count(after, '[session] resumed ' .. ksid), 1, 'the resumed line')
  eq(vim.list_slice(view.lines(true), 1, before), shown_before, 'what the chat showed before this session is untouched')
  local rc = view.card(key)
  check(rc ~= nil and rc.status == 'error', 'the resumed card shows the saved result: %s', vim.inspect(rc))
  say('ok - pid killed during a tool: the card is cancelled, :PidResume shows the conversation once')

  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil end)
  eq(pid.status().exit.code, 0, 'pid exit code after :PidStop')
end
