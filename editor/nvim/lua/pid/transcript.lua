-- A saved session's transcript in the chat, written the way the live run showed it: each user
-- text as a '>>>' header (a command typed in this conversation as typed), the assistant's text,
-- a card per tool call with its result, '[done]' where the assistant stopped, compactions with
-- their summary; and a loaded session shown between '[session]' lines, replacing what the chat
-- showed of it. chat.lua re-exports these; the state is state.lua's.

local state = require('pid.state')
local view = require('pid.view')
local sessions = require('pid.sessions')
local escalation = require('pid.escalation')
local chat = require('pid.chat')

local S = state.S

local M = {}

-- transcript_entries renders a loaded session's items (session/load's messages) as a live
-- run shows them: each user text as a '>>>' header after a blank line, the assistant's text, a
-- card for each tool call with its result, '[done] <stopReason>' where the assistant stopped,
-- and each compaction with its summary. Unknown items are skipped. An entry is a line or a
-- card {key, head, status, latest, output}.
function M.transcript_entries(items, session)
  local out = {}
  local open = false -- an exchange that has not ended yet
  local aborted = false -- its last tool result is pid's "Operation aborted"
  local cards = {}
  local function unfinished()
    if open then
      -- Cancelled while tools ran (the live run said "[done] aborted"), or pid stopped.
      table.insert(out, aborted and chat.done_line('aborted') or '[done] unfinished (pid stopped before the model answered?)')
      open = false
    end
  end
  for _, m in ipairs(type(items) == 'table' and items or {}) do
    if type(m) == 'table' then
      if m.role == 'user' then
        unfinished()
        table.insert(out, '')
        -- A command typed in this conversation shows as typed (pid keeps the prompt it made).
        local sent = chat.text_of(m.content)
        for _, l in ipairs(view.lines_of((S.typed or {})[sent] or sent)) do
          table.insert(out, '>>> ' .. l)
        end
        open = true
      elseif m.role == 'assistant' then
        local text = chat.text_of(m.content)
        if text ~= '' then
          vim.list_extend(out, view.lines_of(text))
        end
        if type(m.errorMessage) == 'string' and m.errorMessage ~= '' then
          table.insert(out, '[error] ' .. m.errorMessage)
        end
        local calls = 0
        for _, c in ipairs(type(m.content) == 'table' and m.content or {}) do
          if type(c) == 'table' and c.type == 'toolCall' then
            calls = calls + 1
            local card = { key = chat.card_key(session, c.id), head = chat.card_head(c.name, c.arguments), status = 'queued', latest = '', name = c.name, command = escalation.command_of(c.name, c.arguments) }
            cards[tostring(c.id)] = card
            table.insert(out, card)
          end
        end
        -- The run stops at an answer without tool calls, a failed call and a cancel; a reply
        -- cut off with tool calls goes on (their results ask the model again).
        if calls == 0 or m.stopReason == 'aborted' or m.stopReason == 'error' then
          table.insert(out, chat.done_line(m.stopReason or 'stop'))
          open = false
        end
      elseif m.role == 'toolResult' then
        local card = cards[tostring(m.toolCallId)]
        if card == nil then
          card = { key = chat.card_key(session, m.toolCallId), head = chat.card_head(m.toolName or 'tool', nil), status = 'queued', latest = '' }
          table.insert(out, card)
        end
        card.status, card.latest, card.output = chat.card_result(m.content, m.details, m.isError, m.toolName or card.name)
        -- What the sandbox refused, for a question to leave it after the session is loaded.
        escalation.remember(session, m.toolName or card.name, card.command, chat.text_of(m.content))
        aborted = m.isError == true and chat.text_of(m.content) == 'Operation aborted'
      elseif m.role == 'compaction' then
        vim.list_extend(out, chat.compacted_lines(m.reason, m.tokensBefore, m.summary))
      end
    end
  end
  unfinished()
  return out
end

-- _transcript_lines: the transcript as the chat shows it (cards with their status), for tests.
function M._transcript_lines(items)
  local out = {}
  for _, e in ipairs(M.transcript_entries(items, 'x')) do
    table.insert(out, type(e) == 'table' and chat.card_text(e) or e)
  end
  return out
end

-- show_entries appends transcript entries to the chat: the lines in one change, then the cards.
function M.show_entries(entries)
  local chunk = {}
  for _, e in ipairs(entries) do
    if type(e) == 'table' then
      if #chunk > 0 then
        view.append_lines(chunk)
        chunk = {}
      end
      view.card_start(e.key, e.head, e.status).command = e.command
      view.card_set(e.key, e.status, e.latest, e.output)
    else
      table.insert(chunk, e)
    end
  end
  if #chunk > 0 then
    view.append_lines(chunk)
  end
end

-- show_loaded writes a loaded session (res: session/load's result; summary: its session/list
-- entry, when known, or {rewound = true} after a rewind) into the chat between a '[session]
-- resumed ...' (or 'rewound: ...') line and one saying the
-- next prompt continues it. When the chat shows that session already (pid stopped under it,
-- or it is loaded again), the transcript replaces what was shown of it, from where that began.
function M.show_loaded(res, summary)
  local items = type(res.messages) == 'table' and res.messages or {}
  local n = 0
  for _, m in ipairs(items) do
    if type(m) == 'table' and m.role ~= 'compaction' then
      n = n + 1
    end
  end
  S.prompts = {}
  for _, m in ipairs(items) do
    if type(m) == 'table' and m.role == 'user' then
      table.insert(S.prompts, chat.text_of(m.content))
    end
  end
  if S.region ~= nil and S.region.session == res.sessionId then
    view.truncate(S.region.start)
  else
    S.region = { start = view.count(), session = res.sessionId }
  end
  local title = summary and summary.title and sessions.title(summary) or nil
  local where = summary and type(summary.cwd) == 'string' and (', in ' .. summary.cwd) or ''
  local entries = { string.format('[session] %s %s%s (%d message%s%s)', summary and summary.rewound and 'rewound:' or 'resumed', res.sessionId,
    title and string.format(' "%s"', title) or '', n, n == 1 and '' or 's', where) }
  local said = chat.remember_instructions(res.sessionId, res.instructions, { S.workspace, summary and summary.cwd or nil })
  if said ~= nil then
    table.insert(entries, said)
  end
  vim.list_extend(entries, M.transcript_entries(items, res.sessionId))
  table.insert(entries, '[session] end of the saved transcript: the next prompt continues this session')
  chat.show()
  if #view.lines() > 1 or view.lines()[1] ~= '' then
    table.insert(entries, 1, '')
  end
  M.show_entries(entries)
end

return M
