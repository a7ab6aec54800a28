-- Issue 31, "The person is told": a bash call asking to leave the sandbox (`unsandboxed: true`,
-- beforeToolCall's `sandbox: {escalation: true, justification}`) has a float of its own: the
-- warning title, what running outside means, the model's justification quoted, what the
-- sandbox refused before (the failed call's output and pid's note, not the note's words for
-- the model), the command; "always" only when pid scopes it to exactly this command, labelled
-- so. The float does not take the cursor. The finished card says "ran outside the sandbox".
-- In auto mode (sandboxed bash runs unasked: this is the one question). It runs in the folder
-- 07_saved_sessions.lua moved to, and writes next to it (outside the workspace).

return function(t)
  local pid, approval = t.pid, t.approval
  local say, check, eq, wait_for, text, wait_run, run_lines, results, find = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.results, t.find
  local R = t.runs() -- the runs that ended before this case
  local call = function(id, name, args) return { type = 'toolCall', id = id, name = name, arguments = args } end
  local S = require('pid.state').S

  local outside = vim.fn.fnamemodify(vim.fn.getcwd(), ':h') .. '/outside-esc'
  vim.fn.delete(outside .. '.txt')
  vim.fn.delete(outside, 'rf')
  local one = 'touch ../outside-esc.txt'
  local two = 'mkdir -p ../outside-esc && touch ../outside-esc/f'
  pid.new_session({ mode = 'auto', toolExecution = 'sequential', model = { provider = 'script', turns = {
    { content = { call('s1', 'bash', { command = one }) } },
    { content = { call('e1', 'bash', { command = one, unsandboxed = true, justification = 'The file belongs next to the workspace,\nnot in it.' }) } },
    { content = { call('e2', 'bash', { command = two, unsandboxed = true, justification = 'Same place, two steps.' }) } },
    { content = { call('e3', 'bash', { command = two, unsandboxed = true, justification = 'Again.' }) } },
    { content = text('Done outside.') },
  } } })
  local scratch = vim.fn.tempname() .. '.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(scratch))
  local typed_buf = vim.api.nvim_get_current_buf()
  t.asked = {}
  t.answers = { { key = 'a' }, { key = 'A' } }
  vim.cmd('PidAsk write next to the workspace')
  local res = wait_run(R + 1)

  local r = results(res)
  eq(#r, 4, 'four results')
  check(r[1][3] == true and r[1][4]:find("pid's sandbox (workspace-write) may have refused this", 1, true) ~= nil, 'the sandboxed call failed with the note: %s', tostring(r[1][4]))
  eq({ r[2][3], r[3][3], r[4][3] }, { false, false, false }, 'the calls outside the sandbox ran')
  eq(vim.fn.filereadable(outside .. '.txt'), 1, 'e1 wrote outside the workspace')
  eq(vim.fn.filereadable(outside .. '/f'), 1, 'e2 wrote outside the workspace')

  -- Two questions: e1 and e2; e3 is the same command as e2, allowed "always" for the session.
  eq(#t.asked, 2, 'questions asked (e3 was remembered)')
  local q1, q2 = t.asked[1], t.asked[2]
  check(not q1.focused and not q2.focused, 'the float did not take the cursor')
  eq(vim.api.nvim_get_current_buf(), typed_buf, 'the cursor is back where it was')
  local L1 = q1.lines
  if os.getenv('PID_NVIM_TEST_DUMP') == '1' then
    say('%s', table.concat(L1, '\n'))
    say('%s', table.concat(q2.lines, '\n'))
  end
  eq(L1[1], 'Run outside the sandbox?', 'the title')
  eq(vim.list_slice(L1, 2, 3), {
    'pid asks to run this command WITHOUT its sandbox: with all your rights (it can',
    'change or delete any file you can) and with the network.',
  }, 'what running outside means')
  local why = find(L1, "Why, in the model's words:", 'the justification')
  eq(vim.list_slice(L1, why + 1, why + 2), { '  > The file belongs next to the workspace,', '  > not in it.' }, 'the justification, quoted')
  local refused = find(L1, 'What the sandbox refused before ($ ' .. one .. '):', 'what the sandbox refused')
  -- The output's last lines before the note (the command's error, pid's exit line), then the note.
  eq(L1[refused + 1]:match("^  touch: cannot touch '../outside%-esc.txt': (.*)$") ~= nil, true, 'the failed output: ' .. L1[refused + 1])
  eq(L1[refused + 2], '  Command exited with code 1.', "pid's line about it")
  check(L1[refused + 3]:find("  pid's sandbox (workspace-write) may have refused this. Writable: ", 1, true) == 1, 'the note: %s', L1[refused + 3])
  check(L1[refused + 3]:find("The network goes through pid's proxy only", 1, true) ~= nil, 'the note says the network goes through the proxy: %s', L1[refused + 3])
  check(L1[refused + 3]:find('unsandboxed', 1, true) == nil, "the note's words for the model are left out: %s", L1[refused + 3])
  eq(L1[refused + 5], '$ ' .. one, 'the command')
  local always1 = 'exactly the bash command `' .. one .. '`, run outside the sandbox, for this session'
  eq(L1[#L1 - 2], 'A always allows ' .. always1, 'an escalation is scoped to exactly its command')
  eq(L1[#L1 - 1], '[a] allow once   [A] always: this command, this session   [d] deny   [q] dismiss (deny)', 'the keys')
  eq(q1.keys.A, 'always allow outside the sandbox: ' .. always1, "A's label")
  eq(q1.q.title, 'Run outside the sandbox?', "the float's title (Neovim 0.9+)")
  eq(q1.q.warn, { 0 }, 'the warning line: the title')

  -- e2: scoped to exactly itself too: A is offered, said so.
  local L2 = q2.lines
  eq(L2[1], 'Run outside the sandbox?', 'the second title')
  eq(L2[find(L2, 'What the sandbox refused before ($ ' .. one .. '):', 'the refusal is the last one the session had') + 5], '$ ' .. two, 'the second command')
  local always = 'exactly the bash command `' .. two .. '`, run outside the sandbox, for this session'
  eq(L2[#L2 - 2], 'A always allows ' .. always, 'what A covers')
  eq(L2[#L2 - 1], '[a] allow once   [A] always: this command, this session   [d] deny   [q] dismiss (deny)', 'the keys with A')
  eq(q2.keys.A, 'always allow outside the sandbox: ' .. always, "A's label")

  -- The chat: each call that ran outside is marked on its card; the answers said.
  local L = run_lines('write next to the workspace')
  eq(L, {
    '>>> write next to the workspace',
    '[tool] bash $ ' .. one .. '  error · ' .. L[2]:match('error · (.*)$'),
    '[tool] bash $ ' .. one .. '  ok · ran outside the sandbox · (no output)',
    '[approval] bash (e1): allow (once, outside the sandbox)',
    '[tool] bash $ ' .. two .. '  ok · ran outside the sandbox · (no output)',
    '[approval] bash (e2): allowAlways (' .. always .. ')',
    '[tool] bash $ ' .. two .. '  ok · ran outside the sandbox · (no output)',
    'Done outside.',
    '[done] stop',
  }, 'the chat')
  check(L[2]:find("touch: cannot touch '../outside-esc.txt'", 1, true) ~= nil, 'the sandboxed card shows its failure: %s', L[2])

  -- Loaded again, the cards keep their mark and the refusal is known for the next question.
  local sid = S.session_id
  S.refusals = {}
  local loaded = nil
  pid.load_session(sid, { on_done = function(err) loaded = err or true end })
  wait_for('the session to load', function() return loaded ~= nil end)
  eq(loaded, true, 'loaded')
  check(t.has_line('[tool] bash $ ' .. two .. '  ok · ran outside the sandbox · (no output)'), 'the loaded card is marked')
  eq(S.refusals[sid] and S.refusals[sid].command, one, 'the refusal, read from the transcript')
  vim.cmd('bwipeout!')
  vim.fn.delete(outside .. '.txt')
  vim.fn.delete(outside, 'rf')
  say('ok - leaving the sandbox: its own float (title, what it means, justification, what the sandbox refused, the command, always only for exactly the command), the cards marked "ran outside the sandbox", live and loaded')
end
