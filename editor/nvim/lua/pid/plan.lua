-- The session's plan and its context meter: planUpdate as a checklist in the chat, usageUpdate
-- as "context 48k/200k (24%) · $0.19" in the chat window's status line, and what a compaction
-- kept word for word (compactionEnd's kept) in words. The state is state.lua's (S.plan,
-- S.usage); the status line itself is modes.lua's.

local state = require('pid.state')
local view = require('pid.view')

local S = state.S

local M = {}

-- BOXES are the checklist's boxes by status.
local BOXES = { completed = '[x]', in_progress = '[~]', pending = '[ ]' }

-- plan_lines are the chat's lines for the plan entries: a header counting them, then one
-- markdown checkbox a step, in order.
function M.plan_lines(entries)
  if type(entries) ~= 'table' or #entries == 0 then
    return { '[plan] the plan is empty' }
  end
  local n = { completed = 0, in_progress = 0, pending = 0 }
  local out = {}
  for _, e in ipairs(entries) do
    local st = type(e) == 'table' and e.status or 'pending'
    n[st] = (n[st] or 0) + 1
    local line = string.format('  - %s %s', BOXES[st] or '[?]', tostring(type(e) == 'table' and e.content or e))
    if st == 'in_progress' then
      line = line .. ' (in progress)'
    end
    if type(e) == 'table' and e.priority == 'high' then
      line = line .. ' (high priority)'
    end
    table.insert(out, line)
  end
  table.insert(out, 1, string.format('[plan] %d step%s: %d done, %d in progress, %d to do', #entries, #entries == 1 and '' or 's',
    n.completed, n.in_progress, n.pending))
  return out
end

-- on_plan shows a planUpdate: the whole plan, as it stands now, at the end of the chat.
function M.on_plan(p)
  S.plan = { session = p.sessionId, entries = type(p.entries) == 'table' and p.entries or {} }
  view.append_lines(M.plan_lines(S.plan.entries))
end

-- tokens says a number of tokens short: 950, 48.2k, 1.2M.
local function tokens(n)
  if n >= 1e6 then
    return (string.format('%.1fM', n / 1e6):gsub('%.0M$', 'M'))
  elseif n >= 1000 then
    return (string.format('%.1fk', n / 1000):gsub('%.0k$', 'k'))
  end
  return tostring(math.floor(n))
end

-- cost_text says a cost: "$0.19" (four decimals under ten cents), or "0.19 EUR".
function M.cost_text(cost)
  if type(cost) ~= 'table' or type(cost.amount) ~= 'number' then
    return nil
  end
  local a = cost.amount
  local s = a >= 0.1 and string.format('%.2f', a) or string.format('%.4f', a)
  if cost.currency == nil or cost.currency == 'USD' then
    return '$' .. s
  end
  return s .. ' ' .. tostring(cost.currency)
end

-- meter_label says the context meter of the current session ("context 48.2k/200k (24%) ·
-- $0.1873"), nil before its first usageUpdate.
function M.meter_label()
  local u = S.usage
  if u == nil or u.session ~= S.session_id or type(u.used) ~= 'number' then
    return nil
  end
  local s
  if type(u.size) == 'number' and u.size > 0 then
    s = string.format('context %s/%s (%d%%)', tokens(u.used), tokens(u.size), math.floor(u.used * 100 / u.size + 0.5))
  else
    s = 'context ' .. tokens(u.used)
  end
  local c = M.cost_text(u.cost)
  if c ~= nil then
    s = s .. ' · ' .. c
  end
  return s
end

-- on_usage keeps a usageUpdate and shows it in the status line.
function M.on_usage(p)
  S.usage = { session = p.sessionId, used = p.used, size = p.size, cost = p.cost }
  require('pid.modes').refresh()
end

-- kept_line says what a compaction kept word for word after the summary (compactionEnd's
-- kept: {userMessage, planEntries, files}); nil when it did not say.
function M.kept_line(kept)
  if type(kept) ~= 'table' then
    return nil
  end
  local parts = {}
  if kept.userMessage == true then
    table.insert(parts, 'your latest request')
  end
  if type(kept.planEntries) == 'number' and kept.planEntries > 0 then
    table.insert(parts, string.format('the plan (%d step%s)', kept.planEntries, kept.planEntries == 1 and '' or 's'))
  end
  local files = type(kept.files) == 'table' and kept.files or {}
  if #files > 0 then
    local shown = vim.list_slice(files, 1, 8)
    local more = #files > 8 and string.format(' and %d more', #files - 8) or ''
    table.insert(parts, string.format('the paths of %d file%s used (%s%s)', #files, #files == 1 and '' or 's', table.concat(shown, ', '), more))
  end
  if #parts == 0 then
    return '[compaction] kept word for word: nothing besides the summary'
  end
  return '[compaction] kept word for word after the summary: ' .. table.concat(parts, ', ')
end

-- model_summary returns the model's summary out of compactionEnd's summary (the whole text
-- the model now sees: an introduction, the summary in <summary> tags, then what was kept),
-- as a loaded transcript's compaction holds it; the text as it is when it has no tags.
function M.model_summary(text)
  if type(text) ~= 'string' then
    return text
  end
  local inner = text:match('<summary>\n(.-)\n</summary>')
  return inner or text
end

return M
