-- Issue 27 in the chat: two task calls of one batch run their children at once; each child is
-- shown under its task's card ("[task] AGENT: DESCRIPTION"), its steps (its tool calls as cards
-- of their own, what it says, how it ended) in a fold under it, none of them as a conversation
-- of its own; a child's approval says which task asks and is answered under that task. It runs
-- in the folder 07_saved_sessions.lua moved to.

return function(t)
  local pid, view = t.pid, t.view
  local say, check, eq, wait_for, text, wait_run, run_lines, find, results = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.find, t.results
  local R = t.runs() -- the runs that ended before this case
  local call = function(id, name, args) return { type = 'toolCall', id = id, name = name, arguments = args } end
  local S = require('pid.state').S

  vim.fn.writefile({ 'func Add(a, b int) int { return a + b }' }, vim.fn.getcwd() .. '/sub_a.go')
  local starts = t.notes_of('subagentStart')
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { call('t1', 'task', { description = 'find Add', prompt = 'Where is Add defined?', agent = 'explore' }),
      call('t2', 'task', { description = 'write notes', prompt = 'Write notes.txt saying hi.', agent = 'general' }) } },
    { content = text('Both tasks are done.') },
  }, subagents = {
    ['find Add'] = { provider = 'script', turns = {
      { content = { call('r1', 'read', { path = 'sub_a.go' }) } },
      { content = text('Add is defined in sub_a.go, line 1.') },
    } },
    ['write notes'] = { provider = 'script', turns = {
      { content = { call('w1', 'write', { path = 'sub_notes.txt', content = 'hi\n' }) } },
      { content = text('Wrote sub_notes.txt.') },
    } },
  } } })
  t.asked = {}
  t.answers = { { key = 'a' } }
  pid.ask('look around with helpers')
  local res = wait_run(R + 1)

  eq(results(res), {
    { 't1', 'task', false, 'Add is defined in sub_a.go, line 1.' },
    { 't2', 'task', false, 'Wrote sub_notes.txt.' },
  }, 'the task results')
  eq(vim.fn.readfile(vim.fn.getcwd() .. '/sub_notes.txt'), { 'hi' }, "the general child's write")
  eq(#starts, 2, 'two children started')
  local child = {}
  for _, s in ipairs(starts) do
    child[s.toolCallId] = s.childSessionId
  end

  -- Each child under its own card, its steps in order; nothing of theirs at the top level.
  local L = run_lines('look around with helpers')
  local c1 = find(L, '[task] explore: find Add  ok · Add is defined in sub_a.go, line 1.', 'the first task card')
  local c2 = find(L, '[task] general: write notes  ok · Wrote sub_notes.txt.', 'the second task card')
  local function steps_after(at)
    local out = {}
    for i = at + 1, #L do
      if L[i]:find(view.STEP, 1, true) ~= 1 then
        break
      end
      table.insert(out, L[i])
    end
    return out
  end
  local step = function(s) return view.STEP .. s end
  eq(steps_after(c1), {
    step('explore subagent started (session ' .. child.t1 .. ')'),
    step('[tool] read sub_a.go  ok · 1 line'),
    step('says: Add is defined in sub_a.go, line 1.'),
    step('[done] stop'),
  }, "the first child's steps")
  eq(steps_after(c2), {
    step('general subagent started (session ' .. child.t2 .. ')'),
    step('[tool] write sub_notes.txt  ok · Created sub_notes.txt (1 line, 3 B).'),
    step('[approval] write (w1): allow'),
    step('says: Wrote sub_notes.txt.'),
    step('[done] stop'),
  }, "the second child's steps, its approval among them")
  for _, l in ipairs(L) do
    check(l:find('[tool] read', 1, true) ~= 1 and l:find('[tool] write', 1, true) ~= 1 and l ~= 'Add is defined in sub_a.go, line 1.',
      'a child step at the top level: %s', l)
  end
  -- (After the done line, the files the prompt changed: review.lua's line.)
  local done_at = #L
  while done_at > 1 and L[done_at] ~= '[done] stop' do
    done_at = done_at - 1
  end
  eq(L[done_at - 1], 'Both tasks are done.', "the parent's answer after the tasks")

  -- The approval said which task asks.
  eq(#t.asked, 1, 'one approval')
  eq(t.asked[1].lines[1], 'pid wants to run write sub_notes.txt:', 'the question')
  eq(t.asked[1].lines[2], 'asked by a subagent, for the task "write notes" (general subagent, call t2)', 'which task asks')
  check(t.asked[1].entered, 'answered in the float')

  -- The steps fold in the chat's window: closed, under the card line.
  local win = view.window()
  check(win ~= nil, 'the chat shows')
  local first = t.view.card(require('pid.chat').card_key(S.session_id, 't1')).line
  vim.api.nvim_win_call(win, function()
    vim.cmd('silent! normal! zx')
    eq(vim.fn.foldclosed(first + 1), first + 1, 'the first step starts a closed fold')
    eq(vim.fn.foldclosedend(first + 1), first + 4, 'the fold holds the four steps')
    eq(vim.fn.foldclosed(first), -1, 'the card line itself is not folded')
  end)
  say('ok - two children at once: each under its task card, its steps folded, its approval saying which task asks')
end
