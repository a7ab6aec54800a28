-- The run buffer: a scratch buffer (buftype=nofile, named pid://run) that shows every run
-- live, one line per event, in the order pid sent them:
--
--   >>> the prompt text
--   [start] slow (a) {}
--   [progress] slow (a): half
--   [approval] fast (b): allow
--   [trust] /path/to/ws: kept restricted
--   [end] fast (b) ok: fast ok
--   [end] slow (a) ok: slow ok
--   the assistant's text, streamed in place
--   [compaction] the conversation was compacted (...); the model now sees this summary ...
--   [done] stop
--
-- A session loaded with :PidSessions is written in the same form, between
-- '[session] resumed ...' and '[session] end of the saved transcript ...'.
--
-- Everything here must run on the main loop (it calls nvim_buf_* functions).

local M = {}

M.name = 'pid://run'

local state = {
  buf = nil,
  empty = true, -- the buffer holds only its initial empty line
  text = nil, -- {start = 0-based first line, n = line count} of the assistant text streaming now
}

local function valid(buf)
  return buf ~= nil and vim.api.nvim_buf_is_valid(buf)
end

local function define_syntax(buf)
  vim.api.nvim_buf_call(buf, function()
    vim.cmd([[
      syntax match PidPrompt /^>>> .*$/
      syntax match PidStart /^\[start\]/
      syntax match PidProgress /^\[progress\]/
      syntax match PidApproval /^\[\(approval\|trust\)\]/
      syntax match PidEndOk /^\[end\] \S\+ (\S\+) ok\>/
      syntax match PidEndError /^\[end\] \S\+ (\S\+) error\>/
      syntax match PidDone /^\[done\].*$/
      syntax match PidError /^\[\(error\|exit\)\].*$/
      syntax match PidLog /^\[\(log\|cancel\|pid\|session\|compaction\)\]/
      highlight default link PidPrompt Title
      highlight default link PidStart Function
      highlight default link PidProgress Comment
      highlight default link PidApproval Question
      highlight default link PidEndOk String
      highlight default link PidEndError ErrorMsg
      highlight default link PidDone Special
      highlight default link PidError ErrorMsg
      highlight default link PidLog Comment
    ]])
  end)
end

-- bufnr returns the run buffer, creating it when needed.
function M.bufnr()
  if valid(state.buf) then
    return state.buf
  end
  local buf = vim.api.nvim_create_buf(false, true) -- unlisted scratch: buftype=nofile
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'pid'
  -- A stale buffer may still own the name (after :bwipeout of ours it does not); keep going.
  pcall(vim.api.nvim_buf_set_name, buf, M.name)
  pcall(define_syntax, buf)
  state.buf, state.empty, state.text = buf, true, nil
  return buf
end

-- show opens the run buffer with open_cmd (e.g. "botright 12split") unless a window of the
-- current tab already shows it. open_cmd false shows nothing.
function M.show(open_cmd)
  local buf = M.bufnr()
  if not open_cmd then
    return
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return
    end
  end
  local cur = vim.api.nvim_get_current_win()
  vim.cmd(open_cmd)
  vim.api.nvim_win_set_buf(0, buf)
  vim.wo.wrap = true
  vim.wo.number = false
  vim.wo.relativenumber = false
  if vim.api.nvim_win_is_valid(cur) then
    vim.api.nvim_set_current_win(cur)
  end
end

-- lines_of splits a string into buffer lines (buffer lines cannot hold newlines).
local function lines_of(s)
  s = tostring(s):gsub('\r\n', '\n')
  return vim.split(s, '\n', { plain = true })
end
M.lines_of = lines_of

local function follow(buf)
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf and win ~= vim.api.nvim_get_current_win() then
      pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
end

-- set replaces lines [first, last) (0-based, end-exclusive) of the run buffer.
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
  follow(buf)
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

-- append_lines adds a list of lines (each may hold newlines) at the end, in one change:
-- a long transcript costs one buffer update.
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

function M.text_end()
  state.text = nil
end

-- lines returns the run buffer's lines (for tests and scripts).
function M.lines()
  return vim.api.nvim_buf_get_lines(M.bufnr(), 0, -1, false)
end

function M.clear()
  local buf = M.bufnr()
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  vim.bo[buf].modifiable = false
  state.empty, state.text = true, nil
end

return M
