-- The chat: a scratch buffer (pid://chat, filetype markdown) that shows every run live (the
-- prompt window under it, pid://prompt, is promptwin.lua's).
--
--   >>> the prompt text
--   [context] main.go lines 10-20
--   the assistant's text, streamed in place
--   [tool] slow {}  running · three quarters       <- updated in place
--   [tool] fast x.txt  ok · fast ok
--   [approval] fast (b): allow
--   [done] stop
--
-- A tool call is one card line, found again through its extmark however the chat grows: what
-- the call does, then its status and the latest line of its output, replaced in place as
-- $/toolUpdate and toolEnd arrive (the status highlighted by a second extmark). <CR> on a card
-- opens the call's whole output.
--
-- Everything here must run on the main loop (it calls nvim_buf_* functions).

local M = {}

M.name = 'pid://chat'
M.prompt_name = 'pid://prompt'

local ns = vim.api.nvim_create_namespace('pid_cards')
local ns_hl = vim.api.nvim_create_namespace('pid_card_status')
M.ns, M.ns_hl = ns, ns_hl

-- The active conversation's chat buffer's state (its fields are documented in state.lua).
local conversations = require('pid.state')
local state = conversations.chat

-- chat_name and prompt_buf_name name the active conversation's buffers: pid://chat and
-- pid://prompt for the first, pid://chat/N and pid://prompt/N for the N-th.
function M.chat_name(base)
  local n = conversations.active.n
  return (base or M.name) .. (n == 1 and '' or ('/' .. n))
end

function M.prompt_buf_name()
  return M.chat_name(M.prompt_name)
end

local function valid(buf)
  return buf ~= nil and vim.api.nvim_buf_is_valid(buf)
end

-- Highlights of the card statuses (linked, so a colorscheme may set its own).
M.status_hl = {
  running = 'PidRunning',
  waiting = 'PidWaiting',
  ok = 'PidOk',
  error = 'PidFailed',
  queued = 'PidRunning',
  cancelled = 'PidCancelled',
  ['kept planning'] = 'PidWaiting',
}

local function define_syntax(buf)
  vim.api.nvim_buf_call(buf, function()
    vim.cmd([[
      syntax match PidTag /^\[\(tool\|task\|command\|context\|steer\|follow-up\|model\|mode\|plan\)\]/
      syntax match PidApproval /^\[\(approval\|trust\)\]/
      syntax match PidDone /^\[done\].*$/
      syntax match PidError /^\[\(error\|exit\)\].*$/
      syntax match PidLog /^\[\(log\|cancel\|pid\|session\|compaction\|file\|permissions\)\]/
      highlight default link PidTag Function
      highlight default link PidApproval Question
      highlight default link PidDone Special
      highlight default link PidError ErrorMsg
      highlight default link PidLog Comment
      highlight default link PidRunning Comment
      highlight default link PidWaiting WarningMsg
      highlight default link PidOk String
      highlight default link PidFailed ErrorMsg
      highlight default link PidCancelled WarningMsg
    ]])
  end)
end

-- bufnr returns the chat buffer, creating it when needed.
function M.bufnr()
  if valid(state.buf) then
    return state.buf
  end
  local buf = vim.api.nvim_create_buf(false, true) -- unlisted scratch: buftype=nofile
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  -- A stale buffer may still own the name (after :bwipeout of ours it does not); keep going.
  pcall(vim.api.nvim_buf_set_name, buf, M.chat_name())
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  pcall(define_syntax, buf)
  vim.api.nvim_buf_set_keymap(buf, 'n', '<CR>', '', {
    noremap = true,
    silent = true,
    desc = 'pid: the whole output of the tool call on this line',
    callback = conversations.bind(function()
      M.open_output(vim.api.nvim_win_get_cursor(0)[1] - 1)
    end),
  })
  -- Whatever window shows the chat (its own, or one of the person's through :buffer, a tab
  -- page of theirs, :PidSessions), its lines wrap between words: card lines are long.
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    desc = "pid: the chat's lines wrap between words in any window",
    callback = function()
      M.wrap_words()
    end,
  })
  vim.api.nvim_create_autocmd('BufWinLeave', {
    buffer = buf,
    desc = "pid: 'breakat' back as it was once no chat is shown",
    callback = function()
      -- (The window still shows the chat now: look once it is gone.)
      vim.schedule(M.unwrap_words)
    end,
  })
  state.buf, state.empty, state.text, state.cards = buf, true, nil, {}
  return buf
end

-- BREAKAT_DEFAULT is Neovim's own 'breakat': with it, 'linebreak' also breaks after . / - : @
-- and so cuts paths, file and command names (a card's "../outside.|txt"). WORDS_ONLY breaks
-- between words only.
local BREAKAT_DEFAULT, WORDS_ONLY = ' \t!@*-+;:,./?', ' \t'

-- wrap_words makes the current window wrap the chat's lines between words, a wrapped line's
-- rest indented as its start ('linebreak', 'breakindent'). It sets them for the chat there
-- only (:setlocal): a file shown in that window later keeps the window's own. 'breakat' is
-- global (no window or buffer value in any Neovim): while a chat is shown it breaks at blanks
-- only, unless the person set one of their own, which is left alone; unwrap_words gives
-- Neovim's back once no chat is shown.
function M.wrap_words()
  vim.opt_local.wrap = true
  vim.opt_local.linebreak = true
  vim.opt_local.breakindent = true
  if conversations.S.breakat_was == nil and vim.o.breakat == BREAKAT_DEFAULT then
    conversations.S.breakat_was = vim.o.breakat
    vim.o.breakat = WORDS_ONLY
  end
end

-- unwrap_words gives 'breakat' back as wrap_words found it once no window shows a chat
-- (unless the person changed it meanwhile).
function M.unwrap_words()
  if conversations.S.breakat_was == nil then
    return
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    local c = conversations.of_buf(buf)
    if c ~= nil and c.chat.buf == buf then
      return
    end
  end
  if vim.o.breakat == WORDS_ONLY then
    vim.o.breakat = conversations.S.breakat_was
  end
  conversations.S.breakat_was = nil
end

-- window returns a window of the current tab that shows the chat, or nil.
function M.window()
  if not valid(state.buf) then
    return nil
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == state.buf then
      return win
    end
  end
  return nil
end

-- default_open returns how the chat opens by default: a window on the right, 40% of the
-- editor's width, between 40 and 90 columns.
function M.default_open()
  local w = math.max(40, math.min(90, math.floor(vim.o.columns * 0.4)))
  return string.format('botright %dvsplit', w)
end

-- show opens the chat with open_cmd (e.g. "botright 80vsplit", or a function returning such
-- a command; nil: default_open) unless a window of the
-- current tab already shows it, without moving the cursor. open_cmd false shows nothing. It
-- returns the chat's window (nil when none).
function M.show(open_cmd)
  if open_cmd == nil then
    open_cmd = M.default_open
  end
  if type(open_cmd) == 'function' then
    open_cmd = open_cmd()
  end
  local buf = M.bufnr()
  local win = M.window()
  if win or not open_cmd then
    return win
  end
  local cur = vim.api.nvim_get_current_win()
  local mode = vim.api.nvim_get_mode().mode
  -- The tab page where a conversation first shows is its own (:PidChat there finds it).
  conversations.active.tab = conversations.active.tab or vim.api.nvim_get_current_tabpage()
  vim.cmd(open_cmd)
  win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].breakindent = true
  vim.api.nvim_win_call(win, M.wrap_words)
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].conceallevel = 0
  -- A task's steps (lines under its card starting with STEP) fold: zo opens them.
  vim.wo[win].foldmethod = 'expr'
  vim.wo[win].foldexpr = "getline(v:lnum)=~#'^" .. M.STEP .. "'"
  vim.wo[win].foldlevel = 0
  vim.wo[win].foldenable = true
  if vim.api.nvim_win_is_valid(cur) then
    vim.api.nvim_set_current_win(cur)
  end
  if mode:sub(1, 1) == 'i' then
    vim.cmd('startinsert')
  end
  M.follow()
  require('pid.modes').refresh() -- the status line shows the session's mode
  return win
end

-- STEP starts each line of a task's steps under its card.
M.STEP = '  │ '

-- lines_of splits a string into buffer lines (buffer lines cannot hold newlines).
local function lines_of(s)
  s = tostring(s):gsub('\r\n', '\n')
  return vim.split(s, '\n', { plain = true })
end
M.lines_of = lines_of

-- follow scrolls the chat's windows (except the current one) to the end.
function M.follow()
  local buf = M.bufnr()
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf and win ~= vim.api.nvim_get_current_win() then
      pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
end

-- set replaces lines [first, last) (0-based, end-exclusive) of the chat.
local function set(first, last, lines)
  local buf = M.bufnr()
  vim.bo[buf].modifiable = true
  if state.empty then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    state.empty = #lines == 0
  else
    vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  end
  vim.bo[buf].modifiable = false
  M.follow()
end

M.set = function(...)
  return set(...)
end

local function count()
  if state.empty then
    return 0
  end
  return vim.api.nvim_buf_line_count(M.bufnr())
end

-- append adds lines (strings that may hold newlines) at the end.
function M.append(...)
  local out = {}
  for _, s in ipairs({ ... }) do
    vim.list_extend(out, lines_of(s))
  end
  local n = count()
  set(n, n, out)
end

-- append_lines adds a list of lines (each may hold newlines) at the end, in one change.
function M.append_lines(list)
  local out = {}
  for _, s in ipairs(list) do
    vim.list_extend(out, lines_of(s))
  end
  local n = count()
  set(n, n, out)
end

-- header starts a run: a blank line after the previous run, then the prompt.
function M.header(text)
  local out = {}
  if count() > 0 then
    table.insert(out, '')
  end
  for _, l in ipairs(lines_of(text)) do
    table.insert(out, '>>> ' .. l)
  end
  local n = count()
  set(n, n, out)
  state.text = nil
end

-- text_begin starts the region where an assistant message streams.
function M.text_begin()
  state.text = { start = count(), n = 0 }
end

-- text_set shows s (the assistant text so far) in the current region, replacing what it
-- showed before.
function M.text_set(s)
  if state.text == nil then
    M.text_begin()
  end
  local lines = {}
  if s ~= nil and s ~= '' then
    lines = lines_of(s)
  end
  local t = state.text
  if t.n == 0 and #lines == 0 then
    return
  end
  set(t.start, t.start + t.n, lines)
  t.n, t.last = #lines, lines[#lines]
end

-- text_append adds s (a streamed piece of assistant text, which may hold newlines) to the end
-- of the current region. It rewrites only the region's last line and adds the new ones, so a
-- long answer streamed in small pieces costs what it holds, not its length times the pieces.
function M.text_append(s)
  if s == nil or s == '' then
    return
  end
  if state.text == nil then
    M.text_begin()
  end
  local t = state.text
  local pieces = lines_of(s)
  if t.n == 0 then
    set(t.start, t.start, pieces)
    t.n, t.last = #pieces, pieces[#pieces]
    return
  end
  local last = t.last
  if last == nil then
    last = vim.api.nvim_buf_get_lines(M.bufnr(), t.start + t.n - 1, t.start + t.n, false)[1] or ''
  end
  pieces[1] = last .. pieces[1]
  set(t.start + t.n - 1, t.start + t.n, pieces)
  t.n = t.n + #pieces - 1
  t.last = pieces[#pieces]
end

-- text_end ends the region of the assistant message: what comes next goes after it.
function M.text_end()
  state.text = nil
end

-- Cards.

-- latest_line returns the last non-empty line of s (what a running tool printed last), cut to
-- width characters; '' when s has none.
function M.latest_line(s, width)
  local last = ''
  for _, l in ipairs(lines_of(tostring(s or ''))) do
    if not l:match('^%s*$') then
      last = l
    end
  end
  last = last:gsub('^%s+', ''):gsub('%s+$', ''):gsub('\t', '  ')
  width = width or 120
  if vim.fn.strchars(last) > width then
    last = vim.fn.strcharpart(last, 0, width - 3) .. '...'
  end
  return last
end

-- The cards (cards.lua): card_start, under, card_set, card and open_output are its.
for _, name in ipairs({ 'card_start', 'under', 'card_set', 'card', 'open_output' }) do
  M[name] = function(...)
    return require('pid.cards')[name](...)
  end
end

-- lines returns the chat's lines (for tests and scripts), cards with their status as shown
-- ("[tool] fast x.txt  ok · fast ok"). The argument is ignored (it once added the cards'
-- virtual text).
function M.lines(_)
  return vim.api.nvim_buf_get_lines(M.bufnr(), 0, -1, false)
end

-- count returns how many lines the chat holds (0 when it is empty): where the next line goes.
function M.count()
  return count()
end

-- truncate removes the chat's lines from line from (0-based) to the end, and the cards on
-- them; what is left before from stays as it was.
function M.truncate(from)
  if from <= 0 then
    return M.clear()
  end
  local buf = M.bufnr()
  if from >= count() then
    return
  end
  for key, c in pairs(state.cards) do
    local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.mark, {})
    if pos[1] == nil or pos[1] >= from then
      vim.api.nvim_buf_del_extmark(buf, ns, c.mark)
      if c.hl then
        vim.api.nvim_buf_del_extmark(buf, ns_hl, c.hl)
      end
      if c.hl_mark then
        vim.api.nvim_buf_del_extmark(buf, ns_hl, c.hl_mark)
      end
      state.cards[key] = nil
    end
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, from, -1, false, {})
  vim.bo[buf].modifiable = false
  state.text = nil
  M.follow()
end

-- clear empties the chat and forgets its cards.
function M.clear()
  local buf = M.bufnr()
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(buf, ns_hl, 0, -1)
  state.empty, state.text, state.cards = true, nil, {}
end

return M
