-- Subagents (docs/protocol.md, "Subagents"): a `task` call's child session is shown under the
-- call's card, "[task] explore: DESCRIPTION  running · its latest step", its own steps in a
-- fold under it (zo opens it): each tool call of the child a card of its own, what it says,
-- how it ended. The child's notifications carry its session id, not the current one: they
-- come here (children.route) rather than as a conversation of their own. A child's approvals
-- say which task asks. The state is S.children.

local state = require('pid.state')
local view = require('pid.view')
local chat = require('pid.chat')

local S = state.S

local M = {}

-- of returns the running child of the current session whose session id is id, or nil.
function M.of(id)
  local c = id ~= nil and S.children[id] or nil
  if c ~= nil and c.session == S.session_id then
    return c
  end
  return nil
end

-- step puts a line under the child's task card, in its fold.
local function step(c, text)
  view.under(c.parent, { view.STEP .. text })
end

-- on_start: subagentStart {sessionId (the parent's), toolCallId, childSessionId, description,
-- agent, worktree?}.
function M.on_start(p)
  if type(p.childSessionId) ~= 'string' then
    return
  end
  local c = { parent = chat.card_key(p, p.toolCallId), session = p.sessionId, description = tostring(p.description or ''), agent = tostring(p.agent or 'explore'), tool_call = p.toolCallId }
  S.children[p.childSessionId] = c
  step(c, string.format('%s subagent started (session %s)', c.agent, p.childSessionId))
  if type(p.worktree) == 'string' and p.worktree ~= '' then
    step(c, 'it works in its own git worktree: ' .. p.worktree)
  end
end

-- worktree_lines says what became of a task's worktree (its result's details.worktree): how
-- many files were merged, each file that was not (a conflict) with why, and where the
-- worktree is kept. {} when the task had none.
function M.worktree_lines(details)
  local w = type(details) == 'table' and details.worktree or nil
  if type(w) ~= 'table' then
    return {}
  end
  local applied = type(w.applied) == 'table' and #w.applied or 0
  local out = { string.format('worktree: %d file%s merged into your files', applied, applied == 1 and '' or 's') }
  local conflicts = type(w.conflicts) == 'table' and w.conflicts or {}
  for _, c in ipairs(conflicts) do
    if type(c) == 'table' and type(c.path) == 'string' then
      table.insert(out, string.format('not merged: %s (%s)', c.path, tostring(c.reason or 'a conflict')))
    end
  end
  if #conflicts > 0 and type(w.path) == 'string' then
    table.insert(out, 'the worktree is kept at ' .. w.path)
  end
  return out
end

-- show_worktree puts worktree_lines under a task call's card (key) when it ended.
function M.show_worktree(key, tool, details)
  if tool ~= 'task' then
    return
  end
  for _, l in ipairs(M.worktree_lines(details)) do
    view.under(key, { view.STEP .. l })
  end
end

-- on_end: subagentEnd {sessionId, toolCallId, childSessionId, stopReason}.
function M.on_end(p)
  local c = S.children[p.childSessionId]
  if c == nil then
    return
  end
  c.ended = tostring(p.stopReason or '?')
  step(c, '[done] ' .. c.ended)
end

-- first_line returns s's first non-empty line, cut to 120 characters.
local function first_line(s)
  local l = tostring(s):match('[^\r\n]*%S[^\r\n]*') or ''
  l = vim.trim(l)
  if vim.fn.strchars(l) > 120 then
    l = vim.fn.strcharpart(l, 0, 117) .. '...'
  end
  return l
end

-- route shows a child's notification (method, params with the child's sessionId) under its
-- task card; it returns false when params are not of a running child of the current session.
function M.route(method, params)
  local c = type(params) == 'table' and M.of(params.sessionId) or nil
  if c == nil then
    return false
  end
  if method == 'toolStart' then
    local key = chat.card_key(params, params.toolCallId)
    view.card_start(key, view.STEP .. chat.card_head(params.toolName, params.args), 'queued', c.parent).command = require('pid.escalation').command_of(params.toolName, params.args)
    if S.run ~= nil and S.run.cards ~= nil then
      S.run.cards[key] = true
    end
  elseif method == 'toolExecutionStart' or method == '$/toolUpdate' or method == 'toolEnd' then
    chat.notifications[method](params)
  elseif method == 'messageEnd' then
    local m = params.message
    if type(m) == 'table' and m.role == 'assistant' then
      local text = chat.text_of(m.content)
      if text:match('%S') then
        step(c, 'says: ' .. first_line(text))
      end
      if type(m.errorMessage) == 'string' and m.errorMessage ~= '' then
        step(c, '[error] ' .. first_line(m.errorMessage))
      end
    end
  elseif method == 'compactionEnd' then
    step(c, '[compaction] ' .. (params.error and ('failed: ' .. first_line(params.error)) or 'the child\'s conversation was compacted'))
  end
  return true
end

-- asker says which task a child's question comes from ("the task \"find Add\" (explore
-- subagent, call t1)"), and returns that task's card key; nil when params (a request's) are
-- not a child's.
function M.asker(params)
  local c = type(params) == 'table' and params.parentSessionId ~= nil and M.of(params.sessionId) or nil
  if c == nil then
    return nil
  end
  return string.format('the task "%s" (%s subagent, call %s)', c.description, c.agent, tostring(c.tool_call)), c.parent
end

-- on_line returns how a child's question says its answer: under its task card.
function M.on_line(params)
  return function(s)
    local c = M.of(params.sessionId)
    if c ~= nil then
      step(c, s)
    end
  end
end

return M
