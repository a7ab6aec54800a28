-- Workspace trust declined, granted after the run ended, listed and revoked; the scope "Always
-- allow" offers (npm test, not echo $(date)). It leaves Neovim's cwd in the trusted folder.

return function(t)
  local pid = t.pid
  local say, check, eq, wait_for, text, wait_run, run_lines, find, results, of_kind, has_line, contains = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.find, t.results, t.of_kind, t.has_line, t.contains
  local R = t.runs() -- the runs that ended before this case
  local res, L

  -- 7. Trust declined. A workspace whose .pid/settings.json allows writes under notes/; pid
  -- (started again, in that folder) asks whether to trust it; "Keep restricted": the allow
  -- rule is ignored, so a write of notes/a.txt asks.
  local tws = vim.fn.tempname()
  vim.fn.mkdir(tws .. '/.pid', 'p')
  vim.fn.writefile({ '{"permissions":{"tools":{"write":[{"pattern":"notes/**","decision":"allow"}]}}}' }, tws .. '/.pid/settings.json')
  tws = t.uv.fs_realpath(tws)
  vim.cmd('cd ' .. vim.fn.fnameescape(tws))
  local ignored = 'permissions.tools["write"][0] allow "notes/**"'
  local function write_session(id, file)
    return { model = { provider = 'script', turns = {
      { content = { { type = 'toolCall', id = id, name = 'write', arguments = { path = file, content = id .. '\n' } } } },
      { content = text('written') },
    } } }
  end
  pid.new_session(write_session('w1', 'notes/a.txt'))
  t.asked = {}
  t.trust_answers = { { key = 'r' } }
  t.answers = { { key = 'a' } }
  vim.cmd('PidAsk write a')
  res = wait_run(R + 1)
  wait_for('the trust answer', function() return has_line('[trust] ' .. tws .. ': kept restricted') end)
  local tq = of_kind('trust')
  eq(#tq, 1, 'trust questions')
  eq(tq[1].keys, { t = 'trust this folder', r = 'keep restricted', q = 'dismiss (keep restricted)' }, 'trust keys')
  eq(tq[1].focused, false, 'the trust float did not take the cursor')
  local tl = table.concat(tq[1].lines, '\n')
  check(tl:find(tws, 1, true) and tl:find(ignored, 1, true),
    'the trust question should name the folder and the ignored rule: %q', tl)
  check(has_line('[trust] ' .. tws .. ' is not trusted; pid leaves out what its .pid/settings.json would enable: ' .. ignored), 'the run buffer shows the question')
  local aq = of_kind('approval')
  eq(#aq, 1, 'approvals: the write asked')
  eq(aq[1].keys.A, 'always allow: write calls on the path `notes/a.txt` in this workspace', 'the always key says its scope')
  eq(vim.list_slice(aq[1].lines, 3, 7), { '(a new file)', '--- notes/a.txt', '+++ notes/a.txt (proposed)', '@@ -0,0 +1 @@', '+w1' }, 'the float shows the diff of the new file')
  find(run_lines('write a'), '[approval] write (w1): allow')
  eq(results(res), { { 'w1', 'write', false, 'Created notes/a.txt (1 line, 3 B).' } }, 'the write ran')
  eq(vim.fn.readfile(tws .. '/notes/a.txt'), { 'w1' }, 'notes/a.txt')
  say('ok - trust declined: the workspace allow rule is ignored, the write asked')

  -- 8. Trust granted, answered only after the first run ended (a run's end does not withdraw
  -- a trust question). Once pid says the trust is in force, a write of notes/ in a new session
  -- runs without asking.
  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil end)
  pid.new_session({ model = { provider = 'script', turns = { { content = text('hello') } } } })
  t.asked = {}
  t.trust_answers = { { key = 't', when = function() return pid.status().runs >= R + 2 end } }
  t.answers = {}
  vim.cmd('PidAsk hi')
  wait_run(R + 2)
  local in_force = '[log] pid: ' .. tws .. ' is trusted: its settings apply in full from now on'
  wait_for("pid's log message that the trust is in force", function() return has_line(in_force) end)
  check(has_line('[trust] ' .. tws .. ': trusted'), 'the run buffer shows the answer')
  eq(#of_kind('trust'), 1, 'trust questions')
  pid.new_session(write_session('w2', 'notes/b.txt'))
  vim.cmd('PidAsk write b')
  res = wait_run(R + 3)
  eq(#of_kind('approval'), 0, 'approvals: the folder allows writes under notes/ now')
  eq(results(res), { { 'w2', 'write', false, 'Created notes/b.txt (1 line, 3 B).' } }, 'the write ran')
  eq(vim.fn.readfile(tws .. '/notes/b.txt'), { 'w2' }, 'notes/b.txt')
  -- trust/list lists it; revoked, it is gone, and revoking again fails.
  local listed, revoked, again = nil, nil, nil
  check(pid.trusted_folders(function(err, folders) listed = { err = err, folders = folders } end), 'trusted_folders while pid runs')
  wait_for('trust/list', function() return listed ~= nil end)
  eq(listed.err, nil, 'trust/list error')
  eq(#listed.folders, 1, 'trusted folders')
  eq(listed.folders[1].folder, tws, 'the trusted folder')
  check(pid.revoke_trust(tws, function(err) revoked = { err = err } end), 'revoke_trust while pid runs')
  wait_for('trust/revoke', function() return revoked ~= nil end)
  eq(revoked.err, nil, 'trust/revoke error')
  check(pid.revoke_trust(tws, function(err) again = { err = err } end), 'revoke_trust again')
  wait_for('the second trust/revoke', function() return again ~= nil end)
  check(type(again.err) == 'string' and again.err:find('not a trusted folder', 1, true), 'revoking twice: %s', vim.inspect(again))
  say('ok - trust granted (after the run ended): a write of notes/ in a new session did not ask; listed, revoked')

  -- 9. The scope of "Always allow": offered for `npm test`, labelled with what it covers; not
  -- offered for `echo $(date)`, which pid cannot scope as narrowly as the call.
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'b1', name = 'bash', arguments = { command = 'echo $(date)' } } } },
    { content = { { type = 'toolCall', id = 'b2', name = 'bash', arguments = { command = 'npm test' } } } },
    { content = text('both denied') },
  } } })
  t.asked = {}
  t.answers = { { key = 'd' }, { key = 'd' } }
  vim.cmd('PidAsk run them')
  res = wait_run(R + 4)
  aq = of_kind('approval')
  eq(#aq, 2, 'approvals')
  eq(aq[1].keys, { a = 'allow', d = 'deny', q = 'dismiss (deny)' }, 'keys for echo $(date)')
  eq(aq[2].keys.A, 'always allow: bash commands starting with `npm test` in this workspace', 'the always key for npm test')
  check(contains(aq[2].lines, 'A always allows bash commands starting with `npm test` in this workspace'), 'the float says what A covers')
  check(contains(aq[2].lines, '$ npm test'), 'the float shows the command: %s', vim.inspect(aq[2].lines))
  L = run_lines('run them')
  find(L, '[approval] bash (b1): deny')
  find(L, '[approval] bash (b2): deny')
  eq(results(res), {
    { 'b1', 'bash', true, 'The user denied this call of bash.' },
    { 'b2', 'bash', true, 'The user denied this call of bash.' },
  }, 'both denied')
  say('ok - "Always allow" offered with its scope for npm test, not for echo $(date)')
end
