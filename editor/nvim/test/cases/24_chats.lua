-- Issue 38, "several conversations at once": :PidChat in a second tab page opens a
-- conversation of its own there (pid://chat/2, its own session and mode); both run at once,
-- each chat showing only its session's notifications; the approval float says which chat asks
-- and the answer is said in that chat; :PidNew! opens a third chat in the window of the
-- second; :PidSessions lists the live ones first and jumps to the one chosen.

return function(t)
  local pid, approval = t.pid, t.approval
  local say, check, eq, wait_for, text = t.say, t.check, t.eq, t.wait_for, t.text
  local state = require('pid.state')
  local function lines_of(c)
    return vim.api.nvim_buf_get_lines(c.chat.buf, 0, -1, false)
  end
  local function has(c, line)
    return vim.tbl_contains(lines_of(c), line)
  end

  local tab1 = vim.api.nvim_get_current_tabpage()
  local one = state.focus()
  check(one.n == 1, 'the first conversation is active')

  -- A second tab page: :PidChat opens a conversation of its own, with its own session params.
  vim.cmd('tabnew')
  vim.cmd('PidChat')
  vim.cmd('stopinsert')
  local two = state.active
  check(two ~= one and two.n == 2, 'a second conversation: %s', vim.inspect(two.n))
  eq(vim.api.nvim_buf_get_name(0), 'pid://prompt/2', 'its prompt window')
  eq(vim.api.nvim_buf_get_name(two.chat.buf), 'pid://chat/2', 'its chat')
  pid.new_session({ mode = 'plan', model = { provider = 'script', turns = { { content = text('two done') } } } })

  -- The first conversation's prompt waits for an approval; the float says which chat asks.
  vim.api.nvim_set_current_tabpage(tab1)
  vim.cmd('wincmd t')
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'g1', name = 'gate', arguments = vim.empty_dict() } } },
    { content = text('one done') },
  } }, scriptedTools = { { name = 'gate', requiresApproval = true, steps = { { result = { content = text('gate ok') } } } } } })
  t.asked = {}
  t.answers = { { never = true } }
  vim.cmd('PidAsk first chat')
  wait_for('the first chat\'s question', function() return approval.current() ~= nil end)
  eq(approval.current().lines[1], 'asked in pid://chat ("first chat")', 'the float names the chat that asks')

  -- Meanwhile the second conversation runs to its end, in its own session and mode.
  vim.api.nvim_set_current_tabpage(vim.api.nvim_list_tabpages()[2])
  vim.cmd('PidAsk second chat')
  wait_for('the second chat\'s run', function() return two.last_result ~= nil end)
  check(has(two, 'two done') and has(two, '>>> second chat'), 'the second chat: %s', vim.inspect(lines_of(two)))
  check(not has(one, 'two done') and not has(one, '>>> second chat'), 'nothing of it in the first chat')
  check(two.session_id ~= nil and two.session_id ~= one.session_id, 'two sessions')
  eq(two.modes and two.modes.current, 'plan', 'the second session\'s mode')
  eq(one.modes and one.modes.current, 'default', 'the first session\'s mode')
  check(one.run ~= nil, 'the first conversation still runs')

  -- The first one's question answered: said in its chat, and its run ends there.
  approval.press('a')
  wait_for('the first chat\'s run', function() return one.run == nil end)
  check(has(one, '[approval] gate (g1): allow') and has(one, 'one done'), 'the first chat: %s', vim.inspect(lines_of(one)))
  check(not has(two, '[approval] gate (g1): allow'), 'the answer is not in the second chat')

  -- :PidNew! in the second tab page: a third chat in the second one's window.
  local win = vim.fn.bufwinid(two.chat.buf)
  vim.api.nvim_set_current_win(win)
  vim.cmd('PidNew!')
  local three = state.active
  eq(three.n, 3, 'a third conversation')
  eq(vim.api.nvim_win_get_buf(win), three.chat.buf, 'its chat in the second one\'s window')

  -- :PidSessions: the live conversations first; the second chosen, its chat shown again.
  t.session_answers = { { pick = function(items)
    for i, it in ipairs(items) do
      if it.live == two then return i end
    end
  end } }
  t.asked_select = {}
  vim.cmd('PidSessions')
  wait_for('the second chat shown', function() return vim.api.nvim_get_current_buf() == two.chat.buf end)
  local shown = t.selects('pid.session')[1].shown
  eq({ shown[1], shown[2] }, { 'live: pid://chat: "first chat" (idle)', 'live: pid://chat/2: "second chat" (idle)' }, 'the live ones first')
  eq(state.active, two, 'the second conversation is active')
  vim.cmd('tabclose')
  vim.api.nvim_set_current_tabpage(tab1)
  state.active = one
  say('ok - several conversations: a second tab page\'s own chat and session, both running at once, each chat its own session\'s; the float names the chat; :PidNew!; :PidSessions jumps to a live one')
end
