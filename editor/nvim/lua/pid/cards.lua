-- A tool call's card in the chat: one line that an extmark follows however the chat grows,
-- what the call does (its head, never changed), then its status and the latest line of its
-- output, replaced in place (the status highlighted by a second extmark); lines under a card
-- (a task's steps, an edit's problems); <CR>'s view of a call's whole output. view.lua owns the
-- buffer and re-exports these; the state is state.lua's (the active conversation's chat).
-- Everything here must run on the main loop.

local view = require('pid.view')

local M = {}

local state = require('pid.state').chat
local ns, ns_hl = view.ns, view.ns_hl

local function set(first, last, lines)
  return view.set(first, last, lines)
end

local function count()
  return view.count()
end

local function lines_of(s)
  return view.lines_of(s)
end

local function render_card(c)
  local buf = view.bufnr()
  local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.mark, {})
  local row = pos[1]
  if row == nil then
    return
  end
  -- The status is text of the line (so a long line wraps and it stays visible), after the
  -- head, which never changes: only that tail is replaced, and the card's extmark (at column
  -- 0) keeps its place.
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
  local suffix = '  ' .. c.status
  if c.latest ~= nil and c.latest ~= '' then
    suffix = suffix .. ' · ' .. c.latest
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_text(buf, row, #c.head, row, #line, { suffix })
  vim.bo[buf].modifiable = false
  c.hl = vim.api.nvim_buf_set_extmark(buf, ns_hl, row, #c.head + 2, {
    id = c.hl,
    end_row = row,
    end_col = #c.head + 2 + #c.status,
    hl_group = view.status_hl[c.status] or 'Comment',
  })
  -- A call that ran outside the sandbox: that mark, after the status, stands out too.
  local outside = require('pid.escalation').RAN_OUTSIDE
  if c.latest ~= nil and c.latest:find(outside, 1, true) == 1 then
    local col = #c.head + 2 + #c.status + #' · '
    c.hl_mark = vim.api.nvim_buf_set_extmark(buf, ns_hl, row, col, { id = c.hl_mark, end_row = row, end_col = col + #outside, hl_group = 'PidWaiting' })
  elseif c.hl_mark ~= nil then
    vim.api.nvim_buf_del_extmark(buf, ns_hl, c.hl_mark)
    c.hl_mark = nil
  end
end

-- card_start appends the card line head for the tool call key (unique in the chat; a later
-- card with the same key replaces the earlier one in the index) with status (default
-- "running"); with under (a card's key), it goes under that card instead (see under).
function M.card_start(key, head, status, under)
  local line
  local nested = under ~= nil and state.cards[under] ~= nil
  if nested then
    line = M.under(under, { head })
  else
    local n = count()
    set(n, n, { head })
    line = count() - 1
  end
  local mark = vim.api.nvim_buf_set_extmark(view.bufnr(), ns, line, 0, {})
  local c = { mark = mark, status = status or 'running', latest = '', output = nil, head = head, nest = nested and under or nil }
  state.cards[key] = c
  render_card(c)
  return c
end

-- under inserts lines under the card key, after the lines already put under it (a task's
-- steps, an edit's problems), and returns the row (0-based) of the first; nil for an unknown
-- card. A streaming text region below moves down with them.
function M.under(key, lines)
  local c = state.cards[key]
  local buf = view.bufnr()
  local pos = c and vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.tail or c.mark, {})
  if pos == nil or pos[1] == nil then
    return nil
  end
  local row = pos[1] + 1
  set(row, row, lines)
  local t = state.text
  if t ~= nil and t.start >= row then
    t.start = t.start + #lines
  end
  c.tail = vim.api.nvim_buf_set_extmark(buf, ns, row + #lines - 1, 0, { id = c.tail })
  -- Lines under a card that is itself under another are under that one too.
  local p = c.nest and state.cards[c.nest]
  local ppos = p and vim.api.nvim_buf_get_extmark_by_id(buf, ns, p.tail or p.mark, {})
  if ppos ~= nil and ppos[1] ~= nil and ppos[1] < row + #lines - 1 then
    p.tail = vim.api.nvim_buf_set_extmark(buf, ns, row + #lines - 1, 0, { id = p.tail })
  end
  return row
end

-- card_set changes a card's status and/or latest output line (nil keeps it) and, with output,
-- the whole output <CR> shows. Unknown keys are ignored.
function M.card_set(key, status, latest, output)
  local c = state.cards[key]
  if c == nil then
    return
  end
  c.status = status or c.status
  if latest ~= nil then
    c.latest = latest
  end
  if output ~= nil then
    c.output = output
  end
  render_card(c)
end

-- card returns what the card key shows: {status, latest, line (1-based), output, head,
-- command (a bash call's, set by chat.lua)} or nil.
function M.card(key)
  local c = state.cards[key]
  if c == nil then
    return nil
  end
  local pos = vim.api.nvim_buf_get_extmark_by_id(view.bufnr(), ns, c.mark, {})
  return { status = c.status, latest = c.latest, line = pos[1] and pos[1] + 1, output = c.output, head = c.head, command = c.command }
end

-- open_output shows the whole output of the card on line row (0-based) in a split.
function M.open_output(row)
  local buf = view.bufnr()
  local found = nil
  for _, c in pairs(state.cards) do
    local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.mark, {})
    if pos[1] == row then
      found = c
    end
  end
  if found == nil then
    return false
  end
  local out = vim.api.nvim_create_buf(false, true)
  vim.bo[out].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(out, 0, -1, false, vim.list_extend({ found.head, '' }, lines_of(found.output or '(no output yet)')))
  vim.bo[out].modifiable = false
  vim.cmd('belowright split')
  vim.api.nvim_win_set_buf(0, out)
  vim.api.nvim_buf_set_keymap(out, 'n', 'q', '<cmd>close<CR>', { noremap = true, silent = true })
  return true
end


return M
