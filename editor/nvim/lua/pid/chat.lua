-- The chat's content: what pid's notifications show live (streamed text, a card per tool call
-- updated in place, compactions, pid's log), how a run ends ([done] or [error], its unfinished
-- cards cancelled), and a saved session's transcript written the way the live run showed it.
-- view.lua owns the buffer; this module decides what goes in it. The state it reads and writes
-- is state.lua's.

local state = require('pid.state')
local view = require('pid.view')
local approval = require('pid.approval')
local files = require('pid.files')
local sessions = require('pid.sessions')
local words = require('pid.words')
local modes = require('pid.modes')

local escalation = require('pid.escalation')

local S = state.S

local M = {}

-- text_of returns the text blocks of content (a list of content blocks), joined by newlines.
function M.text_of(content)
  local parts = {}
  if type(content) == 'table' then
    for _, c in ipairs(content) do
      if type(c) == 'table' and c.type == 'text' and type(c.text) == 'string' then
        table.insert(parts, c.text)
      end
    end
  end
  return table.concat(parts, '\n')
end

-- Lines shared by a live run (pid's notifications) and a loaded transcript (session/load's
-- items), so that both read the same.

-- card_head is a tool call's card line: what it does, in a person's words.
function M.card_head(name, args)
  name = tostring(name)
  if type(args) == 'table' and type(args.command) == 'string' then
    local first = view.lines_of(args.command)
    local cmd = first[1]
    if #first > 1 or vim.fn.strchars(cmd) > 60 then
      cmd = vim.fn.strcharpart(cmd, 0, 60) .. '...' -- the whole command is in the float and in <CR>'s view
    end
    return string.format('[tool] %s $ %s', name, cmd)
  end
  if (name == 'grep' or name == 'find') and type(args) == 'table' and type(args.pattern) == 'string' then
    -- What it looks for, and where (never the arguments as JSON).
    local where = type(args.path) == 'string' and args.path ~= '' and (' in ' .. args.path) or ''
    local glob = type(args.glob) == 'string' and args.glob ~= '' and (' (' .. args.glob .. ')') or ''
    return string.format('[tool] %s %s%s%s', name, view.lines_of(args.pattern)[1], where, glob)
  end
  if type(args) == 'table' and type(args.path) == 'string' then
    return string.format('[tool] %s %s', name, args.path)
  end
  if name == 'task' and type(args) == 'table' and type(args.description) == 'string' then
    return string.format('[task] %s: %s', type(args.agent) == 'string' and args.agent or 'explore', args.description)
  end
  if name == 'todo_write' and type(args) == 'table' and type(args.todos) == 'table' then
    return string.format('[tool] todo_write (a plan of %d step%s)', #args.todos, #args.todos == 1 and '' or 's')
  end
  if name == 'exit_plan_mode' and type(args) == 'table' and type(args.plan) == 'string' then
    local n = #view.lines_of(args.plan:gsub('[\r\n]+$', ''))
    return string.format('[tool] exit_plan_mode (a plan of %d line%s)', n, n == 1 and '' or 's')
  end
  return string.format('[tool] %s %s', name, approval.short_json(args or vim.empty_dict(), 160))
end

-- result_line returns a finished call's status and the line its card shows: the last line of
-- its output (where test results are), or the first line of an error (what went wrong).
local function result_line(content, details, is_error, name)
  local s = M.text_of(content):gsub('[\r\n]+$', '')
  if (name == 'edit' or name == 'write') and not is_error and type(details) == 'table' and type(details.diagnostics) == 'table' then
    -- The problems pid added after the tool's text show under the card (diagnostics.lua); the
    -- card's line is the tool's own text, its whole output has both.
    return 'ok', view.latest_line((M.text_of({ content[1] }):gsub('[\r\n]+$', ''))), s
  end
  if name == 'read' and not is_error and type(details) == 'table' and type(details.totalLines) == 'number' then
    -- A file's last line says nothing about the read: say how much of it was read.
    local d = details
    if type(d.startLine) == 'number' and type(d.endLine) == 'number' and (d.startLine > 1 or d.endLine < d.totalLines) then
      return 'ok', string.format('lines %d-%d of %d', d.startLine, d.endLine, d.totalLines), s
    end
    return 'ok', string.format('%d line%s', d.totalLines, d.totalLines == 1 and '' or 's'), s
  end
  if name == 'todo_write' and not is_error then
    -- Its result is written for the model; the person reads the checklist ([plan]) instead.
    return 'ok', 'the plan was updated (its checklist follows)', s
  end
  if name == 'exit_plan_mode' and is_error then
    -- Keep planning is the person's answer, not a failure: the card says so, with the reason.
    local why = s:match(':%s*(.-)$') or ''
    return 'kept planning', view.latest_line(why), s
  end
  if s == '' and details ~= nil and details ~= vim.NIL then
    s = approval.short_json(details, 160)
  end
  if is_error then
    return 'error', view.latest_line(view.lines_of(s)[1] or ''), s
  end
  return 'ok', view.latest_line(s), s
end

-- card_result returns result_line's status, line and output, the line after "ran outside the
-- sandbox" for a call that did (escalation.mark).
function M.card_result(content, details, is_error, name)
  local status, latest, full = result_line(content, details, is_error, name)
  return status, escalation.mark(latest, details), full
end

-- REASONS say why pid compacted, in words.
local REASONS = {
  manual = 'on request',
  threshold = 'it neared the context window',
  overflow = 'the model said it was too long',
}

function M.reason_text(reason)
  return REASONS[reason] or tostring(reason)
end

-- compacted_lines say that the conversation was compacted and show the summary the model
-- now sees instead of the older messages, whole and indented.
function M.compacted_lines(reason, tokens_before, summary_text)
  local tokens = ''
  if type(tokens_before) == 'number' and tokens_before > 0 then
    tokens = string.format(', %d tokens before', tokens_before)
  end
  local text = type(summary_text) == 'string' and summary_text:gsub('[\r\n]+$', '') or ''
  local out = { string.format('[compaction] the conversation was compacted (%s%s); the model now sees this summary instead of the older messages:%s',
    M.reason_text(reason), tokens, text == '' and ' (empty)' or '') }
  if text ~= '' then
    for _, l in ipairs(view.lines_of(text)) do
      table.insert(out, '    ' .. l)
    end
  end
  return out
end

-- done_line is the line that ends a run: '[done] <stopReason>'.
function M.done_line(stop_reason, terminated)
  local line = '[done] ' .. tostring(stop_reason)
  if terminated then
    line = line .. ' (terminated by a tool)'
  end
  return line
end

-- ours reports whether params (a notification's or request's) are of the current session,
-- or of none.
function M.ours(params)
  return type(params) ~= 'table' or params.sessionId == nil or params.sessionId == S.session_id
end

-- card_key returns the key of a tool call's card: its session (params' sessionId, or the id
-- given) and the call's id.
function M.card_key(params_or_session, id)
  local session = type(params_or_session) == 'table' and params_or_session.sessionId or params_or_session
  return tostring(session) .. '/' .. tostring(id)
end

-- file_conflict says in the chat that path changed on disk (state 'changed') or was deleted
-- ('deleted') while its buffer has unsaved changes, and what the person can do.
function M.file_conflict(path, state)
  if state == 'deleted' then
    view.append(string.format('[file] %s was deleted on disk while its buffer has unsaved changes: :w keeps yours', path))
    return
  end
  view.append(string.format('[file] %s changed on disk while its buffer has unsaved changes: :e! takes the disk version, :w! keeps yours', path))
end

-- reload_buffers reloads buffers whose file a tool changed on disk (no W11); a buffer with
-- unsaved changes is left alone and said in the chat.
function M.reload_buffers()
  files.reload(M.file_conflict)
end

-- UNFINISHED are the statuses of a card whose call has not ended.
local UNFINISHED = { queued = true, waiting = true, running = true }

-- end_cards marks the cards of run's calls that pid never ended (it stopped, or was stopped)
-- as cancelled, saying why: no card of a finished run stays "running".
local function end_cards(run, why)
  for key in pairs(run.cards or {}) do
    local c = view.card(key)
    if c ~= nil and UNFINISHED[c.status] then
      view.card_set(key, 'cancelled', why)
    end
  end
end

-- finish_run ends the running prompt with its result or an error message. why, when given, says
-- why calls that did not end never will (else: the run ended before they did).
function M.finish_run(result, err, why)
  local run = S.run
  if run == nil then
    return
  end
  S.run = nil
  S.runs = S.runs + 1
  approval.withdraw(run.session)
  end_cards(run, why or 'the run ended before it did')
  M.reload_buffers()
  if err ~= nil then
    S.last_error = err
    S.last_result = nil
    view.append('[error] ' .. err)
  else
    S.last_error = nil
    S.last_result = result
    local reason = type(result) == 'table' and result.stopReason or '?'
    view.append(M.done_line(reason, type(result) == 'table' and result.terminated))
  end
  require('pid.review').run_ended()
  words.caller(run)(err, result)
end

-- notifications show pid's notifications in the chat, by method; each gets the params (a
-- table). Only those of the current session reach them, except the GLOBAL ones.
M.notifications = {}

-- GLOBAL are the notifications shown whatever session they name (they name none).
M.GLOBAL = { ['window/logMessage'] = true, ['window/showMessage'] = true, ['mcp/serverStatus'] = true }

-- An assistant message streams in text blocks (S.streamed counts them), shown one after
-- another, a newline between two (as text_of joins them).
M.notifications['messageStart'] = function(p)
  if p.message and p.message.role == 'assistant' then
    view.text_begin()
    S.streamed = 0
  end
end

-- messageUpdate carries a delta, and the partial message only when a block is complete: the
-- text is appended piece by piece, never rebuilt.
M.notifications['messageUpdate'] = function(p)
  local d = p.delta
  if type(d) ~= 'table' then
    return
  end
  if d.type == 'text_start' then
    if S.streamed > 0 then
      view.text_append('\n')
    end
    S.streamed = S.streamed + 1
  elseif d.type == 'text_delta' and type(d.delta) == 'string' then
    view.text_append(d.delta)
  end
end

M.notifications['messageEnd'] = function(p)
  local m = p.message
  if m and m.role == 'user' then
    -- A prompt of the conversation; a command's is the prompt pid made of it (its template
    -- filled in): the chat and the rewind picker show what the person typed.
    local sent = M.text_of(m.content)
    table.insert(S.prompts, sent)
    local run = S.run
    if run ~= nil and not run.echoed then
      run.echoed = true
      if run.text:sub(1, 1) == '/' and sent ~= run.text then
        S.typed[sent] = run.text
      end
    end
  end
  if m and m.role == 'assistant' then
    view.text_set(M.text_of(m.content))
    view.text_end()
    if type(m.errorMessage) == 'string' and m.errorMessage ~= '' then
      view.append('[error] ' .. m.errorMessage)
    end
  end
end

M.notifications['toolStart'] = function(p)
  local key = M.card_key(p, p.toolCallId)
  view.card_start(key, M.card_head(p.toolName, p.args), 'queued').command = escalation.command_of(p.toolName, p.args)
  if S.run ~= nil and S.run.cards ~= nil then
    S.run.cards[key] = true
  end
end

M.notifications['toolExecutionStart'] = function(p)
  view.card_set(M.card_key(p, p.toolCallId), 'running', '')
end

M.notifications['$/toolUpdate'] = function(p)
  local r = p.partialResult or {}
  local s = M.text_of(r.content):gsub('…$', '')
  if s == '' and r.details ~= nil and r.details ~= vim.NIL then
    s = approval.short_json(r.details, 160)
  end
  view.card_set(M.card_key(p, p.toolCallId), 'running', view.latest_line(s), s)
end

M.notifications['toolEnd'] = function(p)
  local r = p.result or {}
  local status, latest, full = M.card_result(r.content, r.details, p.isError, p.toolName)
  local card = view.card(M.card_key(p, p.toolCallId))
  escalation.remember(p.sessionId, p.toolName, card and card.command, M.text_of(r.content))
  view.card_set(M.card_key(p, p.toolCallId), status, latest, full)
  require('pid.diagnostics').show_problems(M.card_key(p, p.toolCallId), p.toolName, r.details)
  require('pid.children').show_worktree(M.card_key(p, p.toolCallId), p.toolName, r.details)
  if p.toolName ~= 'read' and p.toolName ~= 'grep' and p.toolName ~= 'find' and p.toolName ~= 'ls' then
    M.reload_buffers()
  end
end

-- modeUpdate: the session's mode changed (:PidMode, exit_plan_mode's answer).
M.notifications['modeUpdate'] = function(p)
  if type(p.currentModeId) ~= 'string' then
    return
  end
  modes.set_current(p.currentModeId)
  local desc = modes.entry(p.currentModeId).description
  view.append(string.format('[mode] %s (%s)%s', modes.name(p.currentModeId), p.currentModeId, desc and (': ' .. desc) or ''))
end

M.notifications['compactionStart'] = function(p)
  view.append(string.format('[compaction] compacting the conversation (%s)...', M.reason_text(p.reason)))
end

M.notifications['compactionEnd'] = function(p)
  if type(p.error) == 'string' and p.error ~= '' then
    view.append(string.format('[compaction] the conversation was not compacted (%s): %s', M.reason_text(p.reason), p.error))
  else
    local plan = require('pid.plan')
    local lines = M.compacted_lines(p.reason, p.tokensBefore, plan.model_summary(p.summary))
    table.insert(lines, plan.kept_line(p.kept))
    view.append_lines(lines)
  end
end

-- The plan (planUpdate), the context meter (usageUpdate): plan.lua; a command's output:
-- slash.lua; the task calls' children: children.lua.
M.notifications['planUpdate'] = function(p)
  require('pid.plan').on_plan(p)
end

M.notifications['usageUpdate'] = function(p)
  require('pid.plan').on_usage(p)
end

-- The files a prompt changed so far (changesUpdate): review.lua.
M.notifications['changesUpdate'] = function(p)
  require('pid.review').on_update(p)
end

M.notifications['jobUpdate'] = function(p)
  require('pid.jobs').on_update(p)
end

M.notifications['commandOutput'] = function(p)
  require('pid.slash').on_output(p)
end

M.notifications['subagentStart'] = function(p)
  require('pid.children').on_start(p)
end

M.notifications['subagentEnd'] = function(p)
  require('pid.children').on_end(p)
end

M.notifications['window/logMessage'] = function(p)
  view.append('[log] ' .. tostring(p.message))
end

M.notifications['window/showMessage'] = function(p)
  local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
  words.notify(tostring(p.message), levels[p.type] or vim.log.levels.INFO)
end

-- card_text is a card as a line of text, as the chat shows it.
function M.card_text(c)
  return c.head .. '  ' .. c.status .. ((c.latest ~= nil and c.latest ~= '') and (' · ' .. c.latest) or '')
end

-- A saved session's transcript (transcript.lua): transcript_entries, _transcript_lines,
-- show_entries and show_loaded are its.
for _, name in ipairs({ 'transcript_entries', '_transcript_lines', 'show_entries', 'show_loaded' }) do
  M[name] = function(...)
    return require('pid.transcript')[name](...)
  end
end

-- show shows the chat (setup's `open`), leaving the cursor where it is; a chat that cannot
-- open is notified, not raised.
function M.show()
  local shown, serr = pcall(view.show, state.config.open)
  if not shown then
    words.notify('could not open the chat: ' .. tostring(serr), vim.log.levels.WARN)
  end
end

-- remember_instructions keeps a session's instruction files (a session/new or session/load
-- result's instructions) for status(), and returns the chat's line for them (nil: none).
function M.remember_instructions(session, list, bases)
  S.instructions = { session = session, files = type(list) == 'table' and list or nil }
  return sessions.instructions_line(list, bases)
end

return M
