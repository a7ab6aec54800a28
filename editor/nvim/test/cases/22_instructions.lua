-- The instruction files the model gets (AGENTS.md, CLAUDE.md), as session/new and session/load
-- say them, shown in the chat and in status(): the user's own, the trusted workspace folder's,
-- and the one of the subfolder the session runs in (cut at 32 KiB). It starts pid in a folder
-- of its own, trusts it with trust/grant (the user settings stay as 01 wrote them), and puts
-- back what it changed: the user's AGENTS.md goes, the trust is revoked, Neovim's cwd is again
-- the folder 07_saved_sessions.lua moved to.

return function(t)
  local pid = t.pid
  local say, check, eq, wait_for, text, wait_run, run_lines = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines
  local S = require('pid.state').S
  local lifecycle = require('pid.lifecycle')
  local R = t.runs() -- the runs that ended before this case
  local back = vim.fn.getcwd()

  local function write_bytes(path, n)
    local f = assert(io.open(path, 'wb'))
    f:write(string.rep('x', n - 1) .. '\n')
    f:close()
  end
  local function request(method, params)
    local got = nil
    S.client.request(method, params, function(err, res) got = { err = err, result = res } end)
    wait_for('pid to answer ' .. method, function() return got ~= nil end)
    eq(got.err, nil, method .. ' error')
    return got.result
  end

  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil and not pid.status().started end)
  local ws = vim.fn.tempname()
  vim.fn.mkdir(ws .. '/sub', 'p')
  ws = t.uv.fs_realpath(ws)
  local user_file = t.xdg .. '/config/pid/AGENTS.md'
  write_bytes(user_file, 10)
  write_bytes(ws .. '/AGENTS.md', 1234)
  write_bytes(ws .. '/sub/CLAUDE.md', 40000)
  local user_shown = vim.fn.fnamemodify(user_file, ':~')

  -- pid starts in ws (its workspace folder), which is trusted before the session is made; the
  -- session runs in ws/sub: the model gets the user's file, ws's AGENTS.md and sub's CLAUDE.md.
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  local started = nil
  lifecycle.ensure_started(function(err) started = { err = err } end)
  wait_for('pid to start', function() return started ~= nil end)
  eq(started.err, nil, 'start error')
  request('trust/grant', { folder = ws })
  vim.cmd('cd sub')
  pid.new_session({ model = { provider = 'script', turns = { { content = text('read them') } } } })
  t.asked = {}
  vim.cmd('PidAsk which instructions?')
  wait_run(R + 1)
  local want = string.format('[instructions] %s (10 B), AGENTS.md (1.2 KB), sub/CLAUDE.md (40 KB, cut to 32 KiB)', user_shown)
  eq(run_lines('which instructions?'), { '>>> which instructions?', want, 'read them', '[done] stop' }, 'the new session in the chat')
  eq(pid.status().instructions, {
    { path = user_file, bytes = 10, truncated = false },
    { path = ws .. '/AGENTS.md', bytes = 1234, truncated = false },
    { path = ws .. '/sub/CLAUDE.md', bytes = 40000, truncated = true },
  }, 'status().instructions')
  eq(#t.of_kind('trust'), 0, 'no trust question: the folder was trusted')
  say('ok - a new session says its instruction files under the prompt (relative to the workspace folder, the user\'s own, one cut at 32 KiB); status() has them')

  -- Loaded in the next pid (started in ws again), after ws's AGENTS.md changed: the line says
  -- the files as session/load read them, right under the [session] resumed line.
  local sid = pid.status().session_id
  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil and not pid.status().started end)
  write_bytes(ws .. '/AGENTS.md', 500)
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  local loaded = nil
  check(pid.load_session(sid, { on_done = function(err) loaded = { err = err } end }), 'load_session')
  wait_for('the load', function() return loaded ~= nil end)
  eq(loaded.err, nil, 'load error')
  local all = t.view.lines(true)
  local head = nil
  for i, l in ipairs(all) do
    if l == string.format('[session] resumed %s (2 messages)', sid) then
      head = i
    end
  end
  check(head ~= nil, 'no [session] resumed line in:\n  %s', table.concat(all, '\n  '))
  eq(all[head + 1], string.format('[instructions] %s (10 B), AGENTS.md (500 B), sub/CLAUDE.md (40 KB, cut to 32 KiB)', user_shown), 'the line under it')
  eq(vim.list_slice(all, head + 2, head + 3), { '', '>>> which instructions?' }, 'then the transcript, as 07 has it')
  eq(pid.status().instructions[2], { path = ws .. '/AGENTS.md', bytes = 500, truncated = false }, 'status() after the load')
  say('ok - a loaded session says its instruction files as session/load read them, under the [session] resumed line')

  -- Put back what this case changed.
  request('trust/revoke', { folder = ws })
  vim.fn.delete(user_file)
  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil and not pid.status().started end)
  vim.cmd('cd ' .. vim.fn.fnameescape(back))
end
