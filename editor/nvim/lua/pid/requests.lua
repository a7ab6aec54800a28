-- pid's requests to the editor, answered: approvals (beforeToolCall) and workspace trust in
-- the float (approval.lua), hosts the allow-list does not know (network/allowHost:
-- network.lua), files through the buffers (files.lua), the problems after an edit
-- (editor/diagnostics: diagnostics.lua), pid's message questions in
-- vim.ui.select; MCP servers' questions are declined, anything else is "method not found".
-- lifecycle.lua hands them over only from the pid process that runs now.

local state = require('pid.state')
local view = require('pid.view')
local approval = require('pid.approval')
local files = require('pid.files')
local chat = require('pid.chat')
local context = require('pid.context')
local modes = require('pid.modes')
local words = require('pid.words')
local children = require('pid.children')
local diagnostics = require('pid.diagnostics')
local escalation = require('pid.escalation')
local network = require('pid.network')

local S = state.S

local M = {}

-- line_for returns how a question says its answer in the chat: only when it is of the
-- current session (or of none).
local function line_for(params)
  return function(s)
    if chat.ours(params) then
      view.append(s)
    end
  end
end

-- answer handles pid's request method with params: respond(result) or respond(nil, {code,
-- message}) answers it, now or when the person has answered; id is pid's id of the request
-- (pid may withdraw it by that id).
function M.answer(method, params, respond, id)
  params = params or {}
  if method == 'beforeToolCall' then
    local key = chat.card_key(params, params.toolCallId)
    local outside = escalation.asks(params)
    view.card_set(key, 'waiting', outside and 'asks to run OUTSIDE the sandbox: :PidApproval' or 'waiting for your answer: :PidApproval')
    -- exit_plan_mode puts a plan to the person: shown as markdown, with the modes to go on in.
    local ask = params.toolName == 'exit_plan_mode' and modes.plan or approval.before
    -- A subagent's question: said with its task, answered under that task's card, and of the
    -- parent's session (the run's end withdraws it).
    local asker, task = children.asker(params)
    if task ~= nil then
      -- The child's card is in the task's fold: the task's card says it waits too.
      view.card_set(task, nil, 'its subagent waits for your answer: :PidApproval')
    end
    local qparams = asker and vim.tbl_extend('force', params, { sessionId = params.parentSessionId }) or params
    ask(qparams, {
      request_id = id,
      read = files.text,
      resolve = context.resolve,
      asker = asker,
      session = params.sessionId,
      on_line = asker and children.on_line(params) or line_for(params),
      respond = function(answer)
        view.card_set(key, answer.decision == 'deny' and 'queued' or 'running', '')
        respond(answer)
      end,
    })
    words.notify(params.toolName == 'exit_plan_mode' and 'pid has a plan and asks to leave plan mode: :PidApproval to answer'
      or outside and ('pid asks to run a command OUTSIDE the sandbox' .. (asker and (' for ' .. asker) or '') .. ': :PidApproval to answer')
      or ('pid asks before running ' .. tostring(params.toolName) .. (asker and (' for ' .. asker) or '') .. ': :PidApproval to answer'),
      outside and vim.log.levels.WARN or nil)
  elseif method == 'network/allowHost' then
    network.ask(params, respond)
    words.notify(('pid asks whether a command may reach %s (it waits at most 60 s)'):format(tostring(params.host)), vim.log.levels.WARN)
  elseif method == 'editor/diagnostics' then
    diagnostics.answer(params, respond, id)
  elseif method == 'workspace/requestTrust' then
    approval.trust(params, { request_id = id, on_line = line_for(params), respond = respond })
    words.notify('pid asks whether to trust this folder: :PidApproval to answer')
  elseif method == 'fs/read_text_file' then
    S.fs_reads = S.fs_reads + 1
    respond(files.read(params, chat.file_conflict))
  elseif method == 'fs/write_text_file' then
    S.fs_writes = S.fs_writes + 1
    local ok, err = files.write(params, chat.file_conflict)
    if ok then
      respond(nil)
    else
      respond(nil, err)
    end
  elseif method == 'window/showMessageRequest' then
    local titles = {}
    for _, a in ipairs(params.actions or {}) do
      table.insert(titles, tostring(a.title))
    end
    state.select(titles, { prompt = tostring(params.message or 'pid') .. ': ', kind = 'pid.message' }, function(choice, idx)
      respond(idx and params.actions[idx] or vim.NIL)
    end)
  elseif method == 'elicitation/create' then
    respond({ action = 'decline' })
  else
    respond(nil, { code = -32601, message = 'pid.nvim does not handle ' .. tostring(method) })
  end
end

return M
