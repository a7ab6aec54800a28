-- Approvals in one batch: q dismisses (= deny), A always allows (not asked again);
-- :PidPermissions lists the remembered answer in words and revokes it.

return function(t)
  local pid = t.pid
  local say, check, eq, wait_for, text, wait_run, run_lines, results, selects, has_line = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.results, t.selects, t.has_line
  local R = t.runs() -- the runs that ended before this case
  local res, L

  -- 2. Approvals in one batch: c dismissed with q (deny), d "always" with A, e the same tool
  -- as d: not asked again.
  pid.new_session({
    model = { provider = 'script', turns = {
      { content = {
        { type = 'toolCall', id = 'c', name = 'fast', arguments = { path = 'c.txt' } },
        { type = 'toolCall', id = 'd', name = 'guarded', arguments = { n = 1 } },
        { type = 'toolCall', id = 'e', name = 'guarded', arguments = { n = 2 } },
      } },
      { content = text('after approvals') },
    } },
    scriptedTools = {
      { name = 'fast', requiresApproval = true, steps = { { result = { content = text('fast ok') } } } },
      { name = 'guarded', requiresApproval = true, steps = { { result = { content = text('guarded ok') } } } },
    },
  })
  t.asked = {}
  t.answers = { { key = 'q' }, { key = 'A' } }
  vim.cmd('PidAsk approvals please')
  res = wait_run(R + 1)
  eq(#t.asked, 2, 'approval questions (c, d; e is remembered)')
  eq(t.asked[2].lines[3], 'n: 1', "d's float shows its arguments")
  L = run_lines('approvals please')
  eq(L, {
    '>>> approvals please',
    '[tool] fast c.txt  error · The user denied this call of fast.',
    '[approval] fast (c): deny (dismissed)',
    '[tool] guarded {"n":1}  ok · guarded ok',
    '[approval] guarded (d): allowAlways (every call of the tool guarded in this workspace)',
    '[tool] guarded {"n":2}  ok · guarded ok',
    'after approvals',
    '[done] stop',
  }, 'the chat after the approvals')
  eq(results(res), {
    { 'c', 'fast', true, 'The user denied this call of fast.' },
    { 'd', 'guarded', false, 'guarded ok' },
    { 'e', 'guarded', false, 'guarded ok' },
  }, 'tool results after approvals')
  say('ok - approvals: q dismisses (= deny), A always allows, remembered for the next call')

  -- 2b. :PidPermissions lists the remembered answer and revokes it.
  t.perm_answers = { { pick = function() return 1 end } }
  local revoked_perm = nil
  pid.permissions({ on_done = function(err, x) revoked_perm = { err = err, x = x } end })
  wait_for('the revoke', function() return revoked_perm ~= nil end)
  eq(revoked_perm.err, nil, 'revoke error')
  local pq = selects('pid.permission')
  eq(#pq, 1, 'permission pickers')
  eq(pq[1].shown, { 'always allow every guarded call in ' .. vim.fn.getcwd() }, 'the remembered answers as listed')
  check(has_line('[permissions] revoked: always allow every guarded call in ' .. vim.fn.getcwd() .. '; pid asks again for such calls'), 'the chat says it')
  revoked_perm = nil
  pid.permissions({ on_done = function(err, x) revoked_perm = { err = err, x = x } end })
  wait_for('the second list', function() return revoked_perm ~= nil end)
  eq(#selects('pid.permission'), 1, 'no picker when nothing is remembered')
  eq(t.notes[#t.notes].msg, 'pid remembers no "always" answers', 'said instead')
  say('ok - :PidPermissions: the remembered answer listed in words and revoked')
end
