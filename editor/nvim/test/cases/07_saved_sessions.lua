-- Saved sessions: listed in a new pid (title, folder, when), loaded as the live run showed them,
-- continued; a session another pid holds; an unknown id. It counts the sessions the cases before
-- it saved, and moves Neovim's cwd to a folder of its own, where the cases after it run.

return function(t)
  local pid, view = t.pid, t.view
  local say, check, eq, wait_for, text, wait_run, run_lines, find, selects, has_line_prefix = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.find, t.selects, t.has_line_prefix
  local R = t.runs() -- the runs that ended before this case
  local res

  -- 10. Saved sessions: a session prompted in one pid, pid stopped, :PidSessions in the next
  -- pid lists it (title, folder, when), loads it into the run buffer as the live run showed
  -- it, and the next :PidAsk continues it (the scripted model plays its third turn). In a
  -- folder of its own (pid was stopped at the end of 9: it starts there).
  vim.cmd('PidStop')
  local sws = vim.fn.tempname()
  vim.fn.mkdir(sws, 'p')
  sws = t.uv.fs_realpath(sws)
  vim.cmd('cd ' .. vim.fn.fnameescape(sws))
  pid.new_session({
    model = { provider = 'script', turns = {
      { content = { { type = 'toolCall', id = 'c1', name = 'probe', arguments = { path = 'a.txt' } } } },
      { content = text('probed') },
      { content = text('second answer') },
    } },
    scriptedTools = { { name = 'probe', steps = { { result = { content = text('ok') } } } } },
  })
  t.asked = {}
  vim.cmd('PidAsk Probe it, please.')
  wait_run(R + 1)
  local live = run_lines('Probe it, please.')
  eq(live, { '>>> Probe it, please.', '[tool] probe a.txt  ok · ok', 'probed', '[done] stop' }, 'the live run')
  local sid = pid.status().session_id
  check(type(sid) == 'string', 'a session id')
  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil and not pid.status().started end)

  t.session_answers = { { pick = function(items)
    for i, it in ipairs(items) do
      if it.sessionId == sid then
        return i
      end
    end
  end } }
  local loaded = nil
  check(pid.sessions({ on_done = function(err, r) loaded = { err = err, result = r } end }), ':PidSessions started')
  wait_for('the session to load', function() return loaded ~= nil end)
  eq(loaded.err, nil, 'load error')
  eq(pid.status().session_id, sid, 'the loaded session is the current one')
  local sq = selects('pid.session')
  eq(#sq, 1, 'session pickers')
  eq(sq[1].prompt, 'Resume which session?', 'the picker prompt')
  eq(sq[1].items[1].sessionId, sid, 'the newest session first')
  eq(sq[1].items[1].title, 'Probe it, please.', 'its title')
  eq(sq[1].items[1].cwd, sws, 'its folder')
  eq(sq[1].items[1].messageCount, 4, 'its messages')
  local shown1 = sq[1].shown[1]
  check(shown1 == 'Probe it, please. | ' .. sws .. ' | just now, 4 messages'
    or shown1 == 'Probe it, please. | ' .. sws .. ' | 1 minute ago, 4 messages',
    'the picker line (title | folder | when, messages): %q', shown1)
  eq(#sq[1].items, 11, 'every saved session is listed (each earlier run had its own)')
  for i = 2, #sq[1].items do
    local sm_ = require('pid.sessions')
    check(sm_.parse_time(sq[1].items[i - 1].updatedAt) >= sm_.parse_time(sq[1].items[i].updatedAt), 'newest first: %s before %s', sq[1].items[i - 1].updatedAt, sq[1].items[i].updatedAt)
  end
  local all = view.lines(true)
  local head = nil
  for i, l in ipairs(all) do
    if l == string.format('[session] resumed %s "Probe it, please." (4 messages, in %s)', sid, sws) then
      head = i
    end
  end
  check(head ~= nil, 'no [session] resumed line in:\n  %s', table.concat(all, '\n  '))
  eq(all[head + 1], '', 'a blank line before the first prompt, as before a live run')
  eq(vim.list_slice(all, head + 2, head + 1 + #live), live, 'the transcript reads as the live run did')
  eq(all[head + 2 + #live], '[session] end of the saved transcript: the next prompt continues this session', 'the last line')
  eq(head + 2 + #live, #all, 'nothing after it')
  vim.cmd('PidAsk Again?')
  res = wait_run(R + 2)
  eq(pid.status().session_id, sid, 'the same session')
  eq(res.messages[#res.messages].content[1].text, 'second answer', "the saved model's third turn")
  find(run_lines('Again?'), 'second answer')
  say('ok - :PidSessions in a new pid: listed (title, folder, when), transcript as the live run, :PidAsk continues it')

  -- 11. A session another pid holds: said in words, nothing changes; once closed there, it
  -- loads. The other pid is started here, with the same state folder.
  local other_exit = nil
  local other = require('pid.rpc').start({ t.pid_bin }, {
    exit = function(code) other_exit = code end,
  }, { cwd = sws, env = { XDG_CONFIG_HOME = t.xdg .. '/config', XDG_STATE_HOME = t.xdg .. '/state' } })
  check(other ~= nil, 'the second pid started')
  local function other_call(method, params)
    local got = nil
    other.request(method, params, function(err, r) got = { err = err, result = r } end)
    wait_for('the second pid to answer ' .. method, function() return got ~= nil end)
    return got
  end
  local uri = vim.uri_from_fname(sws)
  eq(other_call('initialize', { processId = vim.NIL, rootUri = uri, workspaceFolders = { { uri = uri, name = 'ws' } }, capabilities = vim.empty_dict() }).err, nil, 'initialize')
  other.notify('initialized', vim.empty_dict())
  vim.cmd('PidStop')
  wait_for('pid to exit (and let go of the session)', function() return pid.status().exit ~= nil end)
  local ol = other_call('session/load', { sessionId = sid })
  check(ol.err == nil, 'the second pid loads the session: %s %s %s', tostring(ol.err), type(ol.err) == 'table' and tostring(ol.err.code) or '', type(ol.err) == 'table' and tostring(ol.err.message) or '')
  t.notes = {}
  t.session_answers = { { pick = function() return 1 end } }
  loaded = nil
  vim.cmd('PidSessions')
  wait_for('the refused load', function() return #selects('pid.session') == 2 and not pid.status().loading and has_line_prefix('[error] the session ' .. sid) end)
  local held = string.format('[error] the session %s is open in another pid (another Neovim or editor, or a pid still running): close it there, or quit that editor, then :PidSessions again. pid says: ', sid)
  local held_line = nil
  for _, l in ipairs(view.lines(true)) do
    if l:find(held, 1, true) == 1 then
      held_line = l
    end
  end
  check(held_line ~= nil and held_line:find('process %d+'), 'the run buffer says who holds it: %s', tostring(held_line))
  check(t.notes[#t.notes] and t.notes[#t.notes].msg == held_line:sub(#'[error] ' + 1), 'notified in the same words: %s', vim.inspect(t.notes[#t.notes]))
  eq(pid.status().session_id, nil, 'no current session')
  eq(other_call('session/close', { sessionId = sid }).err, nil, 'closed in the second pid')
  loaded = nil
  check(pid.load_session(sid, { on_done = function(err, r) loaded = { err = err, result = r } end }), 'load_session')
  wait_for('the load', function() return loaded ~= nil end)
  eq(loaded.err, nil, 'load error once closed there')
  eq(pid.status().session_id, sid, 'loaded')
  -- An id pid does not know.
  loaded = nil
  pid.load_session('no-such-session', { on_done = function(err) loaded = { err = err } end })
  wait_for('the unknown load', function() return loaded ~= nil end)
  check(type(loaded.err) == 'string' and loaded.err:find('pid has no saved session no-such-session any more', 1, true) == 1, 'unknown id: %s', tostring(loaded.err))
  eq(pid.status().session_id, sid, 'the current session is unchanged')
  other.request('shutdown', nil, function() other.notify('exit', nil) end)
  wait_for('the second pid to exit', function() return other_exit ~= nil end)
  eq(other_exit, 0, "the second pid's exit code")
  say('ok - a session another pid holds: said in words (process named); loaded once closed there; an unknown id said too')
end
