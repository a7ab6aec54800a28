-- Compaction shown live and in the loaded transcript; session/list paging. It counts the
-- sessions the cases before it saved.

return function(t)
  local pid, view = t.pid, t.view
  local say, check, eq, wait_for, text, wait_run, run_lines, find, roles = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.find, t.roles
  local R = t.runs() -- the runs that ended before this case
  local L, loaded, all, head

  -- 12. Compaction: shown live as it starts and ends, and in the loaded transcript where it
  -- happened.
  local big = string.rep('x', 4000) -- about 1000 tokens
  pid.new_session({ model = { provider = 'script', contextWindow = 20000,
    compaction = { reserveTokens = 2000, keepRecentTokens = 1500 }, turns = {
      { content = text('one'), usage = { input = 3000, output = 10 } },
      -- Past the threshold (20000 - 2000): the next prompt compacts before its model call.
      { content = text('two'), usage = { input = 19000, output = 10 } },
      { content = text('three') },
    }, summaries = { { content = text('## Goal\nsummary one') } } } })
  pid.ask('a ' .. big)
  wait_run(R + 1)
  pid.ask('b ' .. big)
  wait_run(R + 2)
  pid.ask('c ' .. big)
  wait_run(R + 3)
  local three = run_lines('a ' .. big)
  L = run_lines('c ' .. big)
  local cs = find(L, '[compaction] compacting the conversation (it neared the context window)...')
  local ce = find(L, '[compaction] the conversation was compacted (it neared the context window, ')
  check(ce == cs + 1 and L[ce]:match(', %d+ tokens before%); the model now sees this summary instead of the older messages:$'), 'the compaction lines: %s', L[ce])
  -- The model's summary (compactionEnd's summary less its introduction and what was kept,
  -- as a loaded transcript has it), then what it kept word for word in words, then the answer.
  eq(vim.list_slice(L, ce + 1, ce + 2), { '    ## Goal', '    summary one' }, 'the summary')
  check(L[ce + 3]:find('[compaction] kept word for word', 1, true) == 1, 'what the compaction kept: %s', L[ce + 3])
  eq(L[ce + 4], 'three', 'then the answer')
  local kept_line = L[ce + 3]
  local csid = pid.status().session_id
  -- Loaded at once after :PidStop: the next pid starts only once the stopped one has exited,
  -- which held the session.
  vim.cmd('PidStop')
  eq(pid.status().exit, nil, 'the stopped pid is still exiting')
  loaded = nil
  pid.load_session(csid, { on_done = function(err, r) loaded = { err = err, result = r } end })
  wait_for('the load', function() return loaded ~= nil end)
  eq(loaded.err, nil, 'load error')
  eq(roles(loaded.result.messages), { 'user', 'assistant', 'user', 'assistant', 'user', 'compaction', 'assistant' }, 'the items')
  all = view.lines(true)
  head = nil
  for i, l in ipairs(all) do
    if l:find('[session] resumed ' .. csid, 1, true) == 1 then
      head = i
    end
  end
  check(head ~= nil, 'no [session] resumed line')
  local want = { '' }
  for _, l in ipairs(three) do
    if l ~= '[compaction] compacting the conversation (it neared the context window)...' and l ~= kept_line then
      table.insert(want, l)
    end
  end
  eq(vim.list_slice(all, head + 1, #all - 1), want, 'the transcript: the three runs, less the lines saying a compaction starts and what it kept')
  say('ok - compaction: live lines with the summary; in the loaded transcript where it happened')

  -- 13. Paging: more than one page of session/list (50 a page), newest first, up to max.
  pid.new_session({ model = { provider = 'script', turns = { { content = text('ok') } } } })
  local runs_before = pid.status().runs
  for i = 1, 45 do
    pid.new_session()
    pid.ask('page ' .. i)
    wait_run(runs_before + i)
  end
  local got = nil
  pid._list_sessions(500, function(err, list, more) got = { err = err, list = list, more = more } end)
  wait_for('session/list', function() return got ~= nil end)
  eq(got.err, nil, 'list error')
  eq(#got.list, 11 + 1 + 45, 'all sessions, over two pages')
  eq(got.more, false, 'nothing left out')
  eq(got.list[1].title, 'page 45', 'the newest first')
  eq(got.list[45].title, 'page 1', 'then the older ones')
  local ids = {}
  for _, x in ipairs(got.list) do
    check(not ids[x.sessionId], 'session %s listed twice', x.sessionId)
    ids[x.sessionId] = true
  end
  got = nil
  pid._list_sessions(52, function(err, list, more) got = { err = err, list = list, more = more } end)
  wait_for('session/list', function() return got ~= nil end)
  eq({ #got.list, got.more }, { 52, true }, 'up to max, saying more were left out')
  got = nil
  pid._list_sessions(50, function(err, list, more) got = { err = err, list = list, more = more } end)
  wait_for('session/list', function() return got ~= nil end)
  eq({ #got.list, got.more }, { 50, true }, 'exactly one page of max')
  say('ok - session/list paging: %d sessions over two pages, newest first; max respected', 11 + 1 + 45)
end
