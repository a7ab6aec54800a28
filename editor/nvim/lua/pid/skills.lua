-- The person's skills and agent files (issue 39; docs/skills.md): `/skills` and `/agents` are
-- the plugin's own commands (in the /NAME completion with pid's): they ask pid's skills/list or
-- agents/list and show the answer in the chat as a command's output. Nothing goes to the model.

local state = require('pid.state')
local words = require('pid.words')

local S = state.S

local M = {}

-- LOCAL are the plugin's own commands, completed with pid's.
M.LOCAL = {
  { name = 'skills', description = 'List the skills (SKILL.md) pid found, and those it left out' },
  { name = 'agents', description = 'List the agent files pid found, and those it left out' },
}

-- kind returns 'skills' or 'agents' when text is that command (nothing after it), else nil.
function M.kind(text)
  local t = vim.trim(tostring(text or ''))
  if t == '/skills' then
    return 'skills'
  elseif t == '/agents' then
    return 'agents'
  end
  return nil
end

local function one_line(s)
  return (tostring(s or ''):gsub('%s*\n%s*', ' '))
end

-- text is the command's output for pid's list (skills/list's skills or agents/list's agents):
-- those in use, with their notes, then those left out with why.
function M.text(kind, list)
  local what = kind == 'skills' and 'skill' or 'agent'
  local used, left = {}, {}
  for _, x in ipairs(list or {}) do
    if type(x) == 'table' and type(x.name) == 'string' then
      table.insert((type(x.ignored) == 'string' and x.ignored ~= '') and left or used, x)
    end
  end
  local lines = {}
  if #used == 0 then
    table.insert(lines, 'No ' .. what .. ' is in use.')
  else
    table.insert(lines, (kind == 'skills' and 'Skills' or 'Agents') .. ' in use:')
    for _, x in ipairs(used) do
      local name = kind == 'skills' and ('/' .. x.name) or x.name
      table.insert(lines, string.format('- %s: %s (%s: %s)', name, one_line(x.description), tostring(x.source), tostring(x.path)))
      for _, w in ipairs(type(x.warnings) == 'table' and x.warnings or {}) do
        table.insert(lines, '  - note: ' .. one_line(w))
      end
    end
  end
  if #left > 0 then
    table.insert(lines, '')
    table.insert(lines, 'Left out:')
    for _, x in ipairs(left) do
      table.insert(lines, string.format('- %s (%s): %s', x.name, tostring(x.path), one_line(x.ignored)))
    end
  end
  if #used == 0 and #left == 0 then
    if kind == 'skills' then
      table.insert(lines, 'pid reads SKILL.md files in .agents/skills, .claude/skills and .opencode/skills of a trusted workspace folder, and in ~/.agents/skills, ~/.claude/skills and ~/.config/pid/skills.')
    else
      table.insert(lines, 'pid reads agent files in .claude/agents, .opencode/agents and .agents/agents of a trusted workspace folder, and in ~/.claude/agents and ~/.config/pid/agents.')
    end
  end
  return table.concat(lines, '\n')
end

-- run shows the session's skills or agents (starting pid and a session when needed): the
-- chat gets ">>> /KIND" and the output. on_done(err, text), if given, is called after.
function M.run(kind, on_done)
  on_done = on_done or function() end
  require('pid.lifecycle').ensure(function(err)
    if err ~= nil then
      words.notify(err, vim.log.levels.ERROR)
      return on_done(err)
    end
    local method = kind .. '/list'
    local ok = S.client.request(method, { sessionId = S.session_id }, function(rerr, res)
      local text, failed
      if rerr ~= nil or type(res) ~= 'table' or type(res[kind]) ~= 'table' then
        text, failed = 'pid could not list the ' .. kind .. ': ' .. (rerr and words.error_text(rerr) or 'no list in the answer'), true
      else
        text = M.text(kind, res[kind])
      end
      require('pid.chat').show()
      require('pid.view').header('/' .. kind)
      require('pid.slash').on_output({ name = kind, text = text, isError = failed })
      on_done(nil, text)
    end)
    if not ok then
      words.notify('could not send ' .. method .. ' to pid', vim.log.levels.ERROR)
      on_done('could not send ' .. method)
    end
  end)
  return true
end

return M
