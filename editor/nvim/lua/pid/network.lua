-- pid's network questions (network/allowHost): a sandboxed command or a fetch call wants a
-- host the allow-list does not know, and its connection waits (at most 60 s, then pid
-- refuses it). Asked in vim.ui.select (kind 'pid.host'): Allow (this command), Always allow
-- (every command of the workspace, remembered by pid), Deny; a dismissal denies.

local state = require('pid.state')

local M = {}

M.CHOICES = { 'Allow', 'Always allow', 'Deny' }
local DECISIONS = { 'allow', 'allowAlways', 'deny' }

-- prompt says what asks for which host: the command (cut at 200 characters, on one line),
-- the host and its port.
function M.prompt(params)
  local cmd = tostring(params.command or ''):gsub('%s+', ' '):gsub('^ ', ''):gsub(' $', '')
  if #cmd > 200 then
    cmd = cmd:sub(1, 199) .. '…'
  end
  local port = type(params.port) == 'number' and (':' .. tostring(params.port)) or ''
  return ('pid: `%s` wants to reach %s%s, which the allowed hosts do not list (Always allow: every command of this workspace, now and later): ')
    :format(cmd, tostring(params.host or ''), port)
end

-- decision is pid's answer for the index chosen in M.CHOICES; nil (dismissed) denies.
function M.decision(idx)
  return { decision = DECISIONS[idx] or 'deny' }
end

-- ask puts the question and calls respond(answer) once, with the person's decision.
function M.ask(params, respond)
  local done = false
  state.select(M.CHOICES, { prompt = M.prompt(params), kind = 'pid.host' }, function(_, idx)
    if done then
      return
    end
    done = true
    respond(M.decision(idx))
  end)
end

return M
