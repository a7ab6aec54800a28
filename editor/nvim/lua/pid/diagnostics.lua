-- The problems after pid's edits (docs/protocol.md, "Problems after an edit"): pid asks
-- editor/diagnostics {paths, waitMs} once a batch's edits have reached the buffers; the answer
-- is what vim.diagnostic holds for those files (the language servers and linters Neovim runs),
-- given once each changed buffer has had a DiagnosticChanged since its last change (a report
-- on the new text), or after waitMs with what there is. A file no buffer shows, or whose buffer
-- no language server or linter looks at, has no problems: it is left out at once. The chat
-- shows an edit's problems under its card. The state is state.lua's `diag`.

local state = require('pid.state')
local view = require('pid.view')
local files = require('pid.files')

local diag = state.diag

local M = {}

-- SHOWN is how many problems of one call the chat shows under its card.
M.SHOWN = 5

local function valid(buf)
  return buf ~= nil and vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf)
end

-- fresh reports whether buf's diagnostics were reported on its text as it is now.
local function fresh(buf)
  return diag.changed[buf] ~= nil and diag.changed[buf] == vim.api.nvim_buf_get_changedtick(buf)
end

-- watched reports whether something reports diagnostics for buf: a language server attached
-- to it, or a report (DiagnosticChanged) seen for it.
local function watched(buf)
  if diag.changed[buf] ~= nil or #vim.diagnostic.get(buf) > 0 then
    return true
  end
  local ok, clients = pcall(vim.lsp.buf_get_clients, buf)
  return ok and type(clients) == 'table' and next(clients) ~= nil
end

-- changed records a DiagnosticChanged of buf and ends the waits it completes.
function M.changed(buf)
  if not valid(buf) then
    return
  end
  diag.changed[buf] = vim.api.nvim_buf_get_changedtick(buf)
  for _, w in ipairs(vim.list_slice(diag.waiting, 1, #diag.waiting)) do
    if w.bufs[buf] then
      w.bufs[buf] = nil
      if next(w.bufs) == nil then
        w.finish()
      end
    end
  end
end

-- watch listens to DiagnosticChanged (once, whatever the number of calls).
function M.watch()
  local group = vim.api.nvim_create_augroup('pid_diagnostics', { clear = true })
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    callback = function(args)
      M.changed(args.buf)
    end,
  })
end

-- utf16 returns the UTF-16 offset of byte col of line lnum (0-based) of buf.
local function utf16(buf, lnum, col)
  local line = vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1]
  if line == nil or col == nil then
    return col or 0
  end
  col = math.max(0, math.min(col, #line))
  local ok, _, u16 = pcall(vim.str_utfindex, line, col)
  return ok and u16 or col
end

-- lsp_shape returns vim.diagnostic's d (of buf, whose file is path) as pid takes it: LSP's
-- Diagnostic with the path.
function M.lsp_shape(buf, path, d)
  local out = {
    path = path,
    range = {
      start = { line = d.lnum, character = utf16(buf, d.lnum, d.col) },
      ['end'] = { line = d.end_lnum or d.lnum, character = utf16(buf, d.end_lnum or d.lnum, d.end_col or d.col) },
    },
    severity = (type(d.severity) == 'number' and d.severity >= 1 and d.severity <= 4) and d.severity or 1,
    message = tostring(d.message or ''),
  }
  if type(d.source) == 'string' and d.source ~= '' then
    out.source = d.source
  end
  local code = d.code
  if code == nil and type(d.user_data) == 'table' and type(d.user_data.lsp) == 'table' then
    code = d.user_data.lsp.code
  end
  if type(code) == 'string' or type(code) == 'number' then
    out.code = code
  end
  return out
end

-- collect returns the diagnostics of the buffers of list ({buf, path}).
local function collect(list)
  local out = {}
  for _, e in ipairs(list) do
    if valid(e.buf) then
      for _, d in ipairs(vim.diagnostic.get(e.buf)) do
        table.insert(out, M.lsp_shape(e.buf, e.path, d))
      end
    end
  end
  return out
end

-- answer answers editor/diagnostics (params {sessionId, paths, waitMs}) with respond({
-- diagnostics}): at once for files whose reports are fresh or that nothing looks at, else once
-- their next reports came, at most waitMs later. pid's withdrawal (id) needs nothing: a late
-- answer is ignored.
function M.answer(params, respond, _)
  params = type(params) == 'table' and params or {}
  -- With setup{buffers = false} pid changed the files on disk: the buffers take them first.
  require('pid.chat').reload_buffers()
  local list, wait = {}, {}
  local paths = type(params.paths) == 'table' and params.paths or {}
  if #paths == 0 then
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if valid(b) and vim.api.nvim_buf_get_name(b) ~= '' and #vim.diagnostic.get(b) > 0 then
        table.insert(list, { buf = b, path = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ':p') })
      end
    end
  else
    for _, p in ipairs(paths) do
      local b = type(p) == 'string' and files.buffer(p) or nil
      if b ~= nil and watched(b) then
        table.insert(list, { buf = b, path = p })
        if not fresh(b) then
          wait[b] = true
        end
      end
    end
  end
  local w = { bufs = wait }
  local done = false
  function w.finish()
    if done then
      return
    end
    done = true
    for i, x in ipairs(diag.waiting) do
      if x == w then
        table.remove(diag.waiting, i)
        break
      end
    end
    respond({ diagnostics = collect(list) })
  end
  if next(wait) == nil then
    return w.finish()
  end
  table.insert(diag.waiting, w)
  local ms = type(params.waitMs) == 'number' and params.waitMs or 1500
  vim.defer_fn(w.finish, math.max(0, ms))
end

local SEVERITY = { 'error', 'warning', 'info', 'hint' }

-- problem_lines are the chat's lines for an edit's or write's problems (details.diagnostics):
-- its errors and warnings by position, at most SHOWN, prefix before each.
function M.problem_lines(list, prefix)
  local shown = {}
  for _, d in ipairs(type(list) == 'table' and list or {}) do
    if type(d) == 'table' and (d.severity == 1 or d.severity == 2) and type(d.range) == 'table' then
      table.insert(shown, d)
    end
  end
  table.sort(shown, function(a, b)
    local x, y = a.range.start or {}, b.range.start or {}
    if (x.line or 0) ~= (y.line or 0) then
      return (x.line or 0) < (y.line or 0)
    end
    return (x.character or 0) < (y.character or 0)
  end)
  local out = {}
  for i, d in ipairs(shown) do
    if i > M.SHOWN then
      table.insert(out, string.format('%s... and %d more (<CR> on the card shows the errors)', prefix, #shown - M.SHOWN))
      break
    end
    local s = d.range.start or {}
    table.insert(out, string.format('%sL%d:%d %s: %s%s', prefix, (s.line or 0) + 1, (s.character or 0) + 1, SEVERITY[d.severity],
      tostring(d.message):gsub('%s*\n%s*', ' '), type(d.source) == 'string' and (' (' .. d.source .. ')') or ''))
  end
  return out
end

-- show_problems puts an edit's or write's problems (its result's details.diagnostics) under
-- its card: "  ! L3:9 error: ..." (in a task's fold for a subagent's call).
function M.show_problems(key, tool, details)
  if (tool ~= 'edit' and tool ~= 'write') or type(details) ~= 'table' or type(details.diagnostics) ~= 'table' then
    return
  end
  local c = view.card(key)
  if c == nil then
    return
  end
  local prefix = (c.head:sub(1, #view.STEP) == view.STEP and view.STEP or '') .. '  ! '
  local lines = M.problem_lines(details.diagnostics, prefix)
  if #lines > 0 then
    view.under(key, lines)
  end
end

return M
