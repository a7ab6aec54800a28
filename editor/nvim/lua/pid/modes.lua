-- The session's mode (default, acceptEdits, plan, auto, bypassPermissions; docs/protocol.md
-- "Modes"): what the plugin knows of it (state.lua's S.modes, from session/new, session/load
-- and modeUpdate), the chat window's status line that shows it, the words for a mode, and the
-- question exit_plan_mode asks: the plan, as markdown, with its choices, in the float.
-- :PidMode itself (session/setMode, the picker) is in pickers.lua.

local state = require('pid.state')
local approval = require('pid.approval')

local S = state.S

local M = {}

-- KNOWN are the mode ids pid knows, in its order: what :PidMode completes before a session
-- said which it offers.
M.KNOWN = { 'default', 'acceptEdits', 'plan', 'auto', 'bypassPermissions' }

-- NAMES are the modes' names when pid did not send them.
local NAMES = {
  default = 'Default',
  acceptEdits = 'Accept edits',
  plan = 'Plan',
  auto = 'Auto',
  bypassPermissions = 'Bypass permissions',
}

-- from_result takes the modes of a session/new or session/load result ({currentModeId,
-- availableModes}) as the current session's; nil (an older pid) forgets them.
function M.from_result(modes)
  if type(modes) ~= 'table' or type(modes.currentModeId) ~= 'string' then
    S.modes = nil
  else
    local list = {}
    for _, m in ipairs(type(modes.availableModes) == 'table' and modes.availableModes or {}) do
      if type(m) == 'table' and type(m.id) == 'string' then
        table.insert(list, { id = m.id, name = type(m.name) == 'string' and m.name or nil, description = type(m.description) == 'string' and m.description or nil })
      end
    end
    S.modes = { current = modes.currentModeId, available = list }
  end
  M.refresh()
end

-- set_current records that the current session is in mode id now (modeUpdate, or
-- session/setMode answered).
function M.set_current(id)
  if S.modes == nil then
    S.modes = { current = id, available = {} }
  else
    S.modes.current = id
  end
  M.refresh()
end

-- forget forgets the mode: the next session (a new one) says its own.
function M.forget()
  S.modes = nil
  M.refresh()
end

-- entry returns the available mode id ({id, name, description}), or one made of its id.
function M.entry(id)
  for _, m in ipairs(S.modes and S.modes.available or {}) do
    if m.id == id then
      return m
    end
  end
  return { id = id }
end

-- name returns a mode's name as a person reads it ("Accept edits").
function M.name(id)
  if id == nil then
    return nil
  end
  return M.entry(id).name or NAMES[id] or tostring(id)
end

-- current returns the current session's mode id, nil when no session said it.
function M.current()
  return S.modes and S.modes.current or nil
end

-- ids returns the ids :PidMode offers: the session's available modes, else the known ones.
function M.ids()
  local out = {}
  for _, m in ipairs(S.modes and S.modes.available or {}) do
    table.insert(out, m.id)
  end
  if #out == 0 then
    out = vim.list_slice(M.KNOWN, 1, 4)
  end
  return out
end

-- next returns the mode after the current one among ids() (Shift-Tab in the prompt window).
function M.next()
  local ids = M.ids()
  for i, id in ipairs(ids) do
    if id == M.current() then
      return ids[i % #ids + 1]
    end
  end
  return ids[1]
end

-- complete completes :PidMode's argument.
function M.complete(arglead)
  local out = {}
  for _, id in ipairs(M.ids()) do
    if id:sub(1, #arglead) == arglead then
      table.insert(out, id)
    end
  end
  return out
end

-- label says the mode for a status line: "mode: Plan", or that no session has said one yet.
function M.label()
  local id = M.current()
  if id == nil then
    return 'mode: (no session yet)'
  end
  local s = 'mode: ' .. M.name(id)
  if S.session_id == nil then
    s = s .. ' (pid stopped)'
  end
  return s
end

-- statusline is the chat window's status line, made to fit width columns (nil: any): the mode,
-- the context meter and the cost once pid said them, the chat's name, and how to change the
-- mode. Narrower, the hint goes, then the name, then the word "context", then the meter, then
-- the word "mode:": what shows is never cut in the middle.
function M.statusline(width)
  local esc = function(x)
    return (x:gsub('%%', '%%%%'))
  end
  local label = M.label()
  local meter = require('pid.plan').meter_label()
  local name = require('pid.view').chat_name()
  local hint = ':PidMode changes it'
  local short_label = label:gsub('^mode: ', '')
  local short_meter = meter and meter:gsub('^context ', ''):gsub(' %((%d+%%)%)', ' %1') or nil
  local tries = {
    { name, label, meter, hint },
    { name, label, meter },
    { label, meter },
    { label, short_meter },
    { label },
    { short_label },
  }
  for _, try in ipairs(tries) do
    local left, right = {}, nil
    for i = 1, 4 do
      local p = try[i]
      if p ~= nil then
        if p == hint then
          right = p
        else
          table.insert(left, p)
        end
      end
    end
    local text = ' ' .. table.concat(left, '  ')
    local w = vim.fn.strdisplaywidth(text) + (right and (vim.fn.strdisplaywidth(right) + 3) or 1)
    if width == nil or w <= width or try == tries[#tries] then
      local out = {}
      for _, l in ipairs(left) do
        table.insert(out, esc(l))
      end
      return ' ' .. table.concat(out, '  ') .. '%=' .. (right and (esc(right) .. ' ') or '')
    end
  end
end

-- refresh shows the mode in every window that shows the chat: its status line (its winbar
-- on 0.8+ with a global status line, where windows have none of their own).
function M.refresh()
  local buf = state.chat.buf
  if buf == nil or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local opt = (vim.fn.has('nvim-0.8') == 1 and vim.o.laststatus == 3) and 'winbar' or 'statusline'
  -- Made for the window's width: again when windows change size (WinResized on 0.9+).
  local group = vim.api.nvim_create_augroup('pid_statusline', { clear = true })
  vim.api.nvim_create_autocmd(vim.fn.exists('##WinResized') == 1 and { 'VimResized', 'WinResized' } or { 'VimResized' }, {
    group = group,
    callback = function()
      local conversations = require('pid.state')
      for _, c in ipairs(conversations.convs) do
        if c.chat.buf ~= nil and vim.api.nvim_buf_is_valid(c.chat.buf) then
          conversations.with(c, M.refresh)
        end
      end
    end,
  })
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      pcall(vim.api.nvim_win_set_option, win, opt, M.statusline(vim.api.nvim_win_get_width(win)))
    end
  end
  pcall(vim.cmd, 'redrawstatus!')
end

-- PLAN_CHOICES are exit_plan_mode's answers: the key, what it does, the mode it switches to
-- (nil: default) or keep planning (deny).
M.PLAN_CHOICES = {
  { key = 'a', label = 'approve; edits ask first (default mode)', mode = 'default' },
  { key = 'e', label = 'approve; accept edits', mode = 'acceptEdits' },
  { key = 'A', label = 'approve; auto (edits and sandboxed commands run unasked)', mode = 'auto' },
  { key = 'p', label = 'keep planning (you may say why)', deny = true, reason = true },
  { key = 'q', label = 'dismiss (keep planning)', deny = true, why = 'dismissed' },
}

-- plan_lines are the float's lines for plan (markdown): the choices first, so that they show
-- whatever the plan's length, then the whole plan, uncut.
function M.plan_lines(plan, choices)
  local lines = { '# pid has a plan and asks to leave plan mode', '' }
  for _, c in ipairs(choices) do
    table.insert(lines, string.format('- `%s` %s', c.key, c.label))
  end
  vim.list_extend(lines, { '', ':PidApproval goes here to answer; keys typed elsewhere never answer', '', '---', '' })
  local body = type(plan) == 'string' and plan:gsub('[\r\n]+$', '') or ''
  if body == '' then
    body = '(the plan is empty)'
  end
  vim.list_extend(lines, vim.split(body:gsub('\r\n', '\n'), '\n', { plain = true }))
  return lines
end

-- plan asks exit_plan_mode's question (params: beforeToolCall's) in the float, as markdown;
-- opts.respond(answer) gets {decision = "allow", mode?} or {decision = "deny", reason?},
-- opts.on_line(s) says the answer in the chat. Only the modes the session offers are choices.
function M.plan(params, opts)
  local args = type(params.args) == 'table' and params.args or {}
  local offered = {}
  for _, id in ipairs(M.ids()) do
    offered[id] = true
  end
  local choices, keys = {}, {}
  for _, c in ipairs(M.PLAN_CHOICES) do
    if c.deny or offered[c.mode] then
      table.insert(choices, c)
      table.insert(keys, { key = c.key, label = c.label, value = c, why = c.why,
        input = c.reason and 'Keep planning; tell the model why (Enter: no reason): ' or nil })
    end
  end
  local id = tostring(params.toolCallId or '?')
  return approval.ask({
    kind = 'approval',
    session = params.sessionId,
    request_id = opts.request_id,
    tool_call_id = params.toolCallId,
    lines = M.plan_lines(args.plan, choices),
    filetype = 'markdown',
    height = 0.8,
    keys = keys,
    on_answer = function(c, why, reason)
      local answer, shown
      if c == nil or c.deny then
        answer = { decision = approval.DENY }
        shown = 'keep planning'
        if why ~= nil then
          shown = shown .. ' (' .. why .. ')'
        end
        if type(reason) == 'string' and reason ~= '' then
          answer.reason = reason
          shown = shown .. ': ' .. reason
        end
      else
        answer = { decision = approval.ALLOW }
        if c.mode ~= 'default' then
          answer.mode = c.mode
        end
        shown = 'approved, then ' .. M.name(c.mode)
      end
      if opts.on_line then
        opts.on_line(string.format('[plan] exit_plan_mode (%s): %s', id, shown))
      end
      opts.respond(answer)
    end,
  })
end

return M
