-- Issue 26 in Neovim: pid's editor/diagnostics answered from vim.diagnostic. A linter of the
-- test's (what nvim-lint or a language server does: vim.diagnostic.set, some time after the
-- buffer was written) reports an error on each line with BROKEN and a warning on each with
-- WARN. The answer waits for its report on the edited text (the stale one, of the text before
-- the edit, is never given), the column is counted in UTF-16, the model's result names the
-- error, the chat shows the problems under the edit's card; a file nothing looks at is answered
-- at once, empty; with no report coming, the answer goes after waitMs. It runs in the folder
-- 07_saved_sessions.lua moved to.

return function(t)
  local pid = t.pid
  local say, check, eq, wait_for, text, wait_run, run_lines, find, results = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run, t.run_lines, t.find, t.results
  local R = t.runs() -- the runs that ended before this case
  local call = function(id, name, args) return { type = 'toolCall', id = id, name = name, arguments = args } end
  local diagnostics = require('pid.diagnostics')
  local uv = t.uv

  -- The linter: after LINT_MS, for *.chk buffers.
  local LINT_MS = 300
  local ns = vim.api.nvim_create_namespace('pid_test_linter')
  local fresh_at -- when the linter reported on the edited text (ms)
  local function lint(buf)
    local out = {}
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if l:find('BROKEN new', 1, true) then
        fresh_at = fresh_at or uv.hrtime() / 1e6
      end
      local at = l:find('BROKEN', 1, true)
      if at then
        table.insert(out, { lnum = i - 1, col = at - 1, end_col = at + 5, severity = vim.diagnostic.severity.ERROR, message = 'BROKEN here', source = 'testlint', code = 'B1' })
      end
      at = l:find('WARN', 1, true)
      if at then
        table.insert(out, { lnum = i - 1, col = at - 1, severity = vim.diagnostic.severity.WARN, message = 'a warning\nover two lines', source = 'testlint' })
      end
    end
    vim.diagnostic.set(ns, buf, out)
  end
  local group = vim.api.nvim_create_augroup('pid_test_linter', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufWritePost' }, { group = group, pattern = '*.chk', callback = function(a)
    vim.defer_fn(function()
      if vim.api.nvim_buf_is_valid(a.buf) then
        lint(a.buf)
      end
    end, LINT_MS)
  end })

  -- When each editor/diagnostics was asked and answered (ms), and the answer.
  local answered = {}
  local real_answer = diagnostics.answer
  diagnostics.answer = function(params, respond, id)
    local e = { asked = uv.hrtime() / 1e6, params = params }
    table.insert(answered, e)
    real_answer(params, function(res, err)
      e.at, e.result = uv.hrtime() / 1e6, res
      e.ms = e.at - e.asked
      respond(res, err)
    end, id)
  end

  local dir = vim.fn.getcwd()
  vim.fn.writefile({ 'one BROKEN old', 'two' }, dir .. '/d.chk')
  vim.fn.writefile({ 'plain' }, dir .. '/d.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(dir .. '/d.chk'))
  local buf = vim.api.nvim_get_current_buf()
  wait_for("the linter's first report", function() return #vim.diagnostic.get(buf) == 1 end)
  vim.cmd('split ' .. vim.fn.fnameescape(dir .. '/d.txt'))

  pid.new_session({ mode = 'acceptEdits', diagnostics = { waitMs = 3000 }, model = { provider = 'script', turns = {
    { content = { call('r1', 'read', { path = 'd.chk' }), call('r2', 'read', { path = 'd.txt' }) } },
    { content = { call('e1', 'edit', { path = 'd.chk', edits = { { oldText = 'one BROKEN old\ntwo', newText = 'one fine\nhéé BROKEN new WARN' } } }) } },
    { content = { call('e2', 'edit', { path = 'd.txt', edits = { { oldText = 'plain', newText = 'plain BROKEN' } } }) } },
    { content = { call('g1', 'diagnostics', vim.empty_dict()) } },
    { content = text('checked') },
  } } })
  pid.ask('fix the files')
  local res = wait_run(R + 1)
  local r = results(res)

  -- The edit of d.chk: asked once, answered after the linter's report on the new text.
  eq(#answered, 3, 'editor/diagnostics asked for each edit and the tool')
  eq(answered[1].params.paths, { dir .. '/d.chk' }, 'the path asked about')
  -- (An order, not a duration: on a loaded machine the question may come after the report.)
  check(fresh_at ~= nil and answered[1].at >= fresh_at and answered[1].ms < 3000, 'the answer waited for the report on the new text: answered %s ms after it, %d ms after the question',
    fresh_at and string.format('%.0f', answered[1].at - fresh_at) or '(no report)', answered[1].ms)
  eq(answered[1].result.diagnostics, {
    { path = dir .. '/d.chk', range = { start = { line = 1, character = 4 }, ['end'] = { line = 1, character = 10 } }, severity = 1, message = 'BROKEN here', source = 'testlint', code = 'B1' },
    { path = dir .. '/d.chk', range = { start = { line = 1, character = 15 }, ['end'] = { line = 1, character = 15 } }, severity = 2, message = 'a warning\nover two lines', source = 'testlint' },
  }, 'the fresh problems only (not the old line 1), columns in UTF-16')
  eq(r[3][1], 'e1', 'the edit after the reads')
  local full
  for _, m in ipairs(res.messages) do
    if m.role == 'toolResult' and m.toolCallId == 'e1' then
      full = m
    end
  end
  local texts = {}
  for _, c in ipairs(full.content) do
    table.insert(texts, c.text)
  end
  check(table.concat(texts, '\n'):find('Problems the editor reports in d.chk after this change:\nL2:5 BROKEN here (testlint)', 1, true),
    'the model reads the error: %s', table.concat(texts, '\n'))

  -- d.txt: nothing looks at it: answered at once, with nothing.
  eq(answered[2].params.paths, { dir .. '/d.txt' }, 'the second path')
  eq(answered[2].result, { diagnostics = {} }, 'nothing for a file nothing looks at')
  -- "At once": not after waitMs (3000 ms here), the wait for a report (loose, for a loaded machine).
  check(answered[2].ms < 1500, 'answered at once: %d ms', answered[2].ms)
  -- The diagnostics tool without a path: every buffer's problems, at once.
  eq(answered[3].params.paths, {}, 'the tool asked about every file')
  local of_chk = {}
  for _, d in ipairs(answered[3].result.diagnostics) do
    if d.path == dir .. '/d.chk' then
      table.insert(of_chk, d.message)
    end
  end
  eq(of_chk, { 'BROKEN here', 'a warning\nover two lines' }, "d.chk's two problems among every buffer's")
  check(answered[3].ms < 1500, 'answered at once: %d ms', answered[3].ms)

  -- The chat: the problems under the edit's card, the card's line the tool's own text.
  local L = run_lines('fix the files')
  local at = find(L, '[tool] edit d.chk  ok', 'the edit card')
  eq(vim.list_slice(L, at + 1, at + 2), { '  ! L2:5 error: BROKEN here (testlint)', '  ! L2:16 warning: a warning over two lines (testlint)' }, 'the problems under the card')
  check(not L[at]:find('BROKEN', 1, true), 'the card line is the edit\'s own text: %s', L[at])
  local card = t.view.card(require('pid.chat').card_key(pid.status().session_id, 'e1'))
  check(card.output:find('Problems the editor reports in d.chk after this change:\nL2:5 BROKEN here (testlint)', 1, true), "<CR>'s output has them: %s", card.output)
  check(L[at + 3]:find('[tool] edit d.txt  ok', 1, true) == 1, 'the next card: %s', L[at + 3])

  -- The linter stops reporting: the next edit's answer waits waitMs, then gives what
  -- vim.diagnostic has.
  vim.api.nvim_del_augroup_by_id(group)
  pid.new_session({ mode = 'acceptEdits', diagnostics = { waitMs = 400 }, model = { provider = 'script', turns = {
    { content = { call('r3', 'read', { path = 'd.chk' }) } },
    { content = { call('e3', 'edit', { path = 'd.chk', edits = { { oldText = 'one fine', newText = 'one finer' } } }) } },
    { content = text('edited again') },
  } } })
  pid.ask('edit it once more')
  wait_run(R + 2)
  eq(#answered, 4, 'asked once more')
  check(answered[4].ms >= 390, 'waited waitMs for a report that never came: %d ms', answered[4].ms)
  eq(#answered[4].result.diagnostics, 2, 'then answered with what vim.diagnostic has')

  vim.cmd('bwipeout! ' .. buf)
  vim.cmd('silent! bwipeout! ' .. vim.fn.bufnr(dir .. '/d.txt'))
  diagnostics.answer = real_answer
  say('ok - editor/diagnostics: waits for the report on the edited text (%d ms), UTF-16 columns, the error in the result and under the card; a file nothing looks at answered at once; no report: answered after waitMs (%d ms)', answered[1].ms, answered[4].ms)
end
