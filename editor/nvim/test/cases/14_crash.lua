-- pid killed: the chat says the session was saved; :PidResume and the next prompt continue it.

return function(t)
  local pid, view = t.pid, t.view
  local say, check, eq, wait_for, text, wait_run, find, has_line_prefix = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.find, t.has_line_prefix
  local R = t.runs() -- the runs that ended before this case
  local res

  -- 20. pid killed: "pid stopped; the session was saved", :PidResume loads the same session;
  -- killed again, the next prompt continues it too (no silent new session).
  pid.new_session({ model = { provider = 'script', turns = {
    { content = text('before the crash') },
    { content = text('after the resume') },
    { content = text('after the second crash') },
  } } })
  pid.ask('remember me')
  res = wait_run(R + 1)
  local csid2 = pid.status().session_id
  t.uv.kill(pid.status().pid, 'sigkill')
  wait_for('the crash to be noticed', function() return pid.status().crashed and not pid.status().started end)
  eq(pid.status().resume_id, csid2, 'the session to resume')
  check(has_line_prefix('[exit] pid stopped; the session was saved: :PidResume (or the next prompt) continues it'), 'the chat says pid stopped')
  check(t.notes[#t.notes].msg:find('pid stopped; the session was saved', 1, true), 'notified: %s', t.notes[#t.notes].msg)
  vim.cmd('PidResume')
  wait_for('the resumed session', function() return pid.status().session_id == csid2 and not pid.status().loading end)
  check(has_line_prefix('[session] resumed ' .. csid2), 'the transcript is shown again')
  pid.ask('still there?')
  res = wait_run(R + 2)
  eq(res.messages[#res.messages].content[1].text, 'after the resume', 'the same conversation goes on')
  t.uv.kill(pid.status().pid, 'sigkill')
  wait_for('the second crash', function() return pid.status().crashed and not pid.status().started end)
  pid.ask('and now?')
  res = wait_run(R + 3)
  eq(pid.status().session_id, csid2, 'the next prompt continued the saved session')
  eq(res.messages[#res.messages].content[1].text, 'after the second crash', 'its model went on')
  local al = view.lines(true)
  check(al[#al - 2] == '>>> and now?' or al[#al - 2]:find('^>>> and now%?'), 'the prompt follows the resumed transcript: %s', table.concat(vim.list_slice(al, #al - 5, #al), ' | '))
  say('ok - pid killed: said in the chat, :PidResume and the next prompt continue the same session')
end
