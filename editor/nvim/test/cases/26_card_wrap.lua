-- Issue 38, "card lines wrap inside words" (seen: "touch: cannot touch '../outside." on one
-- row, "txt'" on the next: 'linebreak' with Neovim's 'breakat' also breaks after . / -): a
-- tool card's line longer than the chat window wraps between words only (no path or name cut
-- across two screen rows), in the chat's own window and in any window of the person's that
-- shows the chat (a tab page of theirs, :buffer); that window's next file keeps the window's
-- own wrapping, and 'breakat' (global) is Neovim's again once no chat is shown. Checked on the
-- screen as drawn (screenpos), not only by the options.

return function(t)
  local pid = t.pid
  local say, check, eq, text, wait_run, find = t.say, t.check, t.eq, t.text, t.wait_run, t.find
  local R = t.runs()
  local state = require('pid.state')
  state.focus()
  local long = "touch: cannot touch '../outside.txt': Permission denied; see ../logs/deploy-staging.log and docs/run-books/deploy.md then retry with --force-rebuild"
  local default_breakat = vim.o.breakat
  pid.new_session({ permissions = { default = 'allow' }, model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'k1', name = 'deploy', arguments = { target = 'staging cluster in the eastern region' } } } },
    { content = text('deployed') },
  } }, scriptedTools = { { name = 'deploy', steps = { { result = { content = text(long) } } } } } })
  pid.ask('deploy it')
  wait_run(R + 1)
  local buf = state.chat.buf
  local lines = t.view.lines()
  local i = find(lines, '[tool] deploy')
  check(i ~= nil, 'the card: %s', vim.inspect(lines))
  -- The card's row in the buffer (t.view.lines may leave blank lines out: find it there).
  local lnum
  for n, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l == lines[i] then
      lnum = n
    end
  end
  local card = lines[i]

  -- words_whole reports the first word (a run of non-blanks) cut across two screen rows of the
  -- card in win (nil: none), and how many rows the card takes there.
  local function words_whole(win)
    vim.api.nvim_win_set_cursor(win, { lnum, 0 })
    vim.cmd('redraw!')
    local rows, cut = {}, nil
    for k = 1, #card do
      local p = vim.fn.screenpos(win, lnum, k)
      check(p.row > 0, 'byte %d of the card is on the screen', k)
      rows[p.row] = true
      if cut == nil and k < #card and card:sub(k, k + 1):match('^%S%S$') and vim.fn.screenpos(win, lnum, k + 1).row ~= p.row then
        local from = k
        while from > 1 and card:sub(from - 1, from - 1):match('%S') do
          from = from - 1
        end
        cut = card:sub(from, k) .. '|' .. card:sub(k + 1):match('^%S+')
      end
    end
    return cut, vim.tbl_count(rows)
  end

  -- The chat's own window.
  local chat_win = t.view.window()
  check(chat_win ~= nil, 'the chat is shown')
  local width = vim.api.nvim_win_get_width(chat_win)
  check(#card > 2 * width, 'the card (%d columns) is longer than two rows of the chat (%d): %s', #card, width, card)
  local cut, rows = words_whole(chat_win)
  check(rows >= 3, 'the card wraps: %d rows', rows)
  eq(cut, nil, 'no word cut in the chat window')

  -- A tab page of the person's, the chat put there with :buffer: the same.
  local tab1 = vim.api.nvim_get_current_tabpage()
  vim.cmd('tabnew')
  local mine = vim.api.nvim_get_current_win()
  eq(vim.wo[mine].linebreak, false, "the person's window breaks lines anywhere")
  vim.cmd('buffer ' .. buf)
  vim.cmd('vertical resize 45')
  cut, rows = words_whole(mine)
  check(rows >= 3, 'the card wraps in a window of the person\'s: %d rows', rows)
  eq(cut, nil, "no word cut in the person's window")
  -- The window's next buffer: its own wrapping again.
  vim.cmd('enew')
  eq(vim.wo[mine].linebreak, false, "a file shown next in the person's window does not get the chat's wrapping")
  vim.cmd('tabclose')
  vim.api.nvim_set_current_tabpage(tab1)

  -- No chat shown: Neovim's 'breakat' again; the chat shown again: between words again.
  eq(vim.o.breakat, ' \t', "'breakat' while the chat is shown")
  vim.api.nvim_win_close(chat_win, true)
  t.wait_for("'breakat' given back", function() return vim.o.breakat == default_breakat end)
  chat_win = t.view.show()
  cut = words_whole(chat_win)
  eq(cut, nil, 'no word cut in the chat shown again')
  say('ok - card lines wrap between words in the chat and in a window of the person\'s; \'breakat\' is Neovim\'s again while no chat is shown')
end
