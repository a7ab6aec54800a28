-- Leaving the sandbox, said out loud. A bash call with `unsandboxed: true` asks with
-- beforeToolCall params `sandbox: {escalation: true, justification}` (docs/permissions.md,
-- "Results, and asking to leave the sandbox"): its float is a question of its own, not "pid
-- wants to run bash": a warning title, what running outside means, the model's justification
-- quoted, what the sandbox refused before (the session's last bash result that holds pid's
-- sandbox note, remembered here as results arrive, live or from a loaded transcript), the
-- command, and "always" only when pid scopes it to exactly this command. A call that ran
-- outside (toolEnd details.sandbox.escalated) is marked so on its card.
--
-- The state is S.refusals (state.lua). Everything here runs on the main loop.

local state = require('pid.state')

local S = state.S

local M = {}

M.TITLE = 'Run outside the sandbox?'
M.RAN_OUTSIDE = 'ran outside the sandbox'

-- NOTE_START is how pid's sandbox note begins in a bash result (workspace/launch/results.go's Sandboxed.Note):
-- "[pid's sandbox (MODE) may have refused this. Writable: ... If the command needs more, call
-- bash again with unsandboxed: true and a justification; the user will be asked.]"
local NOTE_START = "[pid's sandbox"

-- How many lines of the failed command's output (those just before the note) the question shows.
M.OUTPUT_LINES = 3

-- asks reports whether beforeToolCall's params ask to run a call outside the sandbox.
function M.asks(params)
  return type(params) == 'table' and type(params.sandbox) == 'table' and params.sandbox.escalation == true
end

-- escalated reports whether a result's details say the call ran outside the sandbox.
function M.escalated(details)
  return type(details) == 'table' and type(details.sandbox) == 'table' and details.sandbox.escalated == true
end

-- mark returns a finished call's card line (latest) after "ran outside the sandbox" when its
-- result's details say it did; latest unchanged otherwise.
function M.mark(latest, details)
  if not M.escalated(details) then
    return latest
  end
  return M.RAN_OUTSIDE .. ((latest ~= nil and latest ~= '') and (' · ' .. latest) or '')
end

-- command_of returns a call's bash command (its args.command), nil for other calls.
function M.command_of(name, args)
  if name == 'bash' and type(args) == 'table' and type(args.command) == 'string' then
    return args.command
  end
  return nil
end

-- oneline makes text from pid or the model fit one line.
local function oneline(s)
  return (tostring(s):gsub('%c', ' '))
end

-- refusal reads a bash result's text: when it holds pid's sandbox note, it returns {lines =
-- the last OUTPUT_LINES non-empty lines of the output before the note, note = the note for a
-- person: without its brackets and its last sentence, which tells the model how to ask};
-- nil otherwise.
function M.refusal(text)
  if type(text) ~= 'string' then
    return nil
  end
  local at, from = nil, 1
  while true do
    local s = text:find(NOTE_START, from, true)
    if s == nil then
      break
    end
    at, from = s, s + 1
  end
  if at == nil then
    return nil
  end
  local note = text:sub(at + 1):gsub('%s+$', ''):gsub('%]$', '')
  note = note:gsub('%s*If the command needs more,.*$', '')
  local out = {}
  for _, l in ipairs(vim.split(text:sub(1, at - 1), '\n', { plain = true })) do
    if l:match('%S') then
      table.insert(out, oneline(l))
    end
  end
  return { lines = vim.list_slice(out, math.max(1, #out - M.OUTPUT_LINES + 1), #out), note = oneline(vim.trim(note)) }
end

-- remember keeps a finished bash call's refusal for its session (the newest one wins); a
-- result without the note changes nothing. command is the call's command.
function M.remember(session, name, command, text)
  if name ~= 'bash' or session == nil then
    return
  end
  local r = M.refusal(text)
  if r == nil then
    return
  end
  r.command = type(command) == 'string' and command or nil
  S.refusals[tostring(session)] = r
end

-- last returns the session's last remembered refusal, or nil.
function M.last(session)
  return session ~= nil and S.refusals[tostring(session)] or nil
end

-- exact_scope returns the description of params.always when pid scoped it to exactly this
-- command ("exactly the bash command `...`"), nil otherwise: an "always" to leave the sandbox
-- is offered only for the very command the person reads.
function M.exact_scope(desc)
  if desc ~= nil and desc:find('^exactly ') then
    return desc
  end
  return nil
end

-- lines returns the float's lines (before the keys) for an escalation question, the 0-based
-- rows to highlight as a warning, and the "always" scope it offers (nil: none). desc: pid's
-- always.description (nil: none); command_lines: the command as the float shows it ("$ ..."
-- first); session: the session that asks (a subagent's own), whose refusal is shown.
function M.lines(params, desc, command_lines, session)
  local just = type(params.sandbox.justification) == 'string' and params.sandbox.justification or ''
  local out = {
    M.TITLE,
    'pid asks to run this command WITHOUT its sandbox: with all your rights (it can',
    'change or delete any file you can) and with the network.',
    '',
    "Why, in the model's words:",
  }
  local warn = { 0 }
  if just:match('%S') then
    for _, l in ipairs(vim.split(vim.trim(just), '\n', { plain = true })) do
      table.insert(out, '  > ' .. oneline(l))
    end
  else
    table.insert(out, '  (the model gave no reason)')
  end
  local r = M.last(session or params.sessionId)
  if r ~= nil then
    table.insert(out, '')
    local cmd = r.command and vim.split(r.command, '\n', { plain = true })[1] or nil
    table.insert(out, cmd and string.format('What the sandbox refused before ($ %s):', oneline(cmd)) or 'What the sandbox refused before:')
    for _, l in ipairs(r.lines) do
      table.insert(out, '  ' .. l)
    end
    table.insert(out, '  ' .. r.note)
  end
  table.insert(out, '')
  vim.list_extend(out, command_lines)
  table.insert(out, '')
  local exact = M.exact_scope(desc)
  if exact ~= nil then
    table.insert(out, 'A always allows ' .. exact)
  elseif desc ~= nil then
    table.insert(out, 'No "always": it would cover more than this command (' .. desc .. ')')
  else
    table.insert(out, 'No "always": pid cannot limit it to this command')
  end
  return out, warn, exact
end

return M
