-- :PidSteer and :PidFollowUp during a run; :PidModel (the models 01_batch.lua wrote into the
-- user settings), then a message from the prompt window.

return function(t)
  local pid, approval = t.pid, t.approval
  local say, check, eq, wait_for, text, wait_run, run_lines, find, selects, has_line, user_texts = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.find, t.selects, t.has_line, t.user_texts
  local R = t.runs() -- the runs that ended before this case
  local res, L

  -- 17. :PidSteer and :PidFollowUp while a run goes (its approval waits): the steer is taken
  -- after the tools, the follow-up when the run would stop.
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'g', name = 'gate', arguments = vim.empty_dict() } } },
    { content = text('after steer') },
    { content = text('after follow-up') },
  } }, scriptedTools = { { name = 'gate', requiresApproval = true, steps = { { result = { content = text('gate ok') } } } } } })
  t.asked = {}
  t.answers = { { never = true, action = function()
    vim.cmd('PidSteer also this')
    vim.cmd('PidFollowUp and then this')
    approval.press('a')
  end } }
  vim.cmd('PidAsk steer please')
  res = wait_run(R + 1)
  eq(user_texts(res.messages), { 'steer please', 'also this', 'and then this' }, 'the user messages')
  L = run_lines('steer please')
  eq(L, { '>>> steer please', '[tool] gate {}  ok · gate ok', '[steer] also this', '[follow-up] and then this', '[approval] gate (g): allow', 'after steer', 'after follow-up', '[done] stop' }, 'the chat')
  say('ok - :PidSteer and :PidFollowUp during a run: taken after the tools and when it would stop')

  -- 18. :PidModel: models/list in vim.ui.select, session/setModel; the next message, typed in
  -- the prompt window (:PidChat), is answered by the picked model.
  pid.new_session({ model = { provider = 'script', turns = { { content = text('first model') } } } })
  t.model_answers = { { pick = function(items)
    for i, m in ipairs(items) do
      if m.id == 'alt' then return i end
    end
  end } }
  local picked = nil
  pid.pick_model({ on_done = function(err, m) picked = { err = err, model = m } end })
  wait_for('the model to be set', function() return picked ~= nil end)
  eq(picked.err, nil, 'setModel error')
  local ms_ = selects('pid.model')
  eq(ms_[1].shown, { 'Alternative (script/alt)', 'script/other' }, 'the models as listed')
  eq(ms_[1].prompt, 'Model (now: script)', 'the picker names the current model')
  check(has_line('[model] Alternative (script/alt) from the next model call on'), 'the chat says the model changed')
  vim.cmd('PidChat')
  eq(vim.api.nvim_buf_get_name(0), 'pid://prompt', 'the cursor is in the prompt window')
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('Ause it<CR>', true, false, true), 'x', false)
  res = wait_run(R + 2)
  eq(res.messages[#res.messages].content[1].text, 'the alternative model answers', 'the picked model answered')
  find(run_lines('use it'), 'the alternative model answers')
  vim.cmd('wincmd p')
  say('ok - :PidModel: listed, set; a message from the prompt window is answered by the picked model')
end
