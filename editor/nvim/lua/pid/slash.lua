-- The session's /commands (docs/protocol.md, "Commands"): the list pid gives (commands/list,
-- asked again when a session starts or is loaded, and before the picker), `:Pid /NAME [input]`
-- with completion of the names on the command line, <Tab> completing them in the prompt
-- window, and a command's output (commandOutput) in the chat. A command runs as a prompt whose
-- text starts with /NAME: pid runs it instead of asking the model. The state is S.commands.

local state = require('pid.state')
local view = require('pid.view')
local words = require('pid.words')

local S = state.S

local M = {}

-- BUILTIN are pid's own commands: what completes before a session gave its list.
M.BUILTIN = { 'compact', 'init', 'review', 'plan', 'mode', 'model', 'mcp', 'rewind', 'help' }

-- list returns the current session's commands ({name, description?, input?}), pid's built-in
-- names when it has not said them yet, then the plugin's own (/skills, /agents).
function M.list()
  local out = {}
  if S.commands ~= nil and S.commands.session == S.session_id then
    out = vim.list_slice(S.commands.list, 1, #S.commands.list)
  else
    for _, n in ipairs(M.BUILTIN) do
      table.insert(out, { name = n })
    end
  end
  -- The plugin's own (/skills, /agents: skills.lua), unless pid has commands of those names.
  for _, l in ipairs(require('pid.skills').LOCAL) do
    local taken = false
    for _, c in ipairs(out) do
      taken = taken or c.name == l.name
    end
    if not taken then
      table.insert(out, { name = l.name, description = l.description })
    end
  end
  return out
end

-- refresh asks pid for the current session's commands (commands/list); cb(err) when known.
function M.refresh(cb)
  cb = cb or function() end
  local client, session = S.client, S.session_id
  if client == nil or session == nil then
    return cb('no session yet')
  end
  local ok = client.request('commands/list', { sessionId = session }, function(err, res)
    if err ~= nil or type(res) ~= 'table' or type(res.commands) ~= 'table' then
      return cb(err and words.error_text(err) or 'no commands in the answer')
    end
    local list = {}
    for _, c in ipairs(res.commands) do
      if type(c) == 'table' and type(c.name) == 'string' then
        table.insert(list, { name = c.name, description = type(c.description) == 'string' and c.description or nil,
          hint = type(c.input) == 'table' and (type(c.input.hint) == 'string' and c.input.hint or 'text') or nil })
      end
    end
    S.commands = { session = session, list = list }
    cb(nil)
  end)
  if not ok then
    cb('could not send commands/list to pid')
  end
end

-- matches returns '/NAME' for each command whose name starts with prefix (a leading / or
-- none), in the list's order.
function M.matches(prefix)
  prefix = tostring(prefix or ''):gsub('^/', '')
  local out = {}
  for _, c in ipairs(M.list()) do
    if c.name:sub(1, #prefix) == prefix then
      table.insert(out, '/' .. c.name)
    end
  end
  return out
end

-- complete completes :Pid's arguments: the command's name first (/NAME), then, for /mode, a
-- mode id. A list older than the session is asked again for the next completion.
function M.complete(arglead, cmdline, _)
  if S.session_id ~= nil and (S.commands == nil or S.commands.session ~= S.session_id) then
    M.refresh()
  end
  local args = vim.split(cmdline:gsub('^%s*%S+%s*', ''), '%s+', { trimempty = false })
  if #args <= 1 then
    return M.matches(arglead)
  end
  if args[1] == '/mode' and #args == 2 then
    return require('pid.modes').complete(arglead)
  end
  return {}
end

-- entry_label says a command for the picker: "/review [base]: Review the changes".
function M.entry_label(c)
  local s = '/' .. c.name
  if c.hint ~= nil then
    s = s .. ' [' .. c.hint .. ']'
  end
  if c.description ~= nil and c.description ~= '' then
    s = s .. ': ' .. c.description
  end
  return s
end

-- pick lets the person choose a command (vim.ui.select, kind "pid.command"), then asks its
-- input when it takes one (vim.ui.input; nothing typed runs it without), then runs it.
function M.pick()
  require('pid.lifecycle').ensure(function(err)
    if err ~= nil then
      return words.notify(err, vim.log.levels.ERROR)
    end
    M.refresh(function()
      local list = M.list()
      state.select(list, { prompt = 'pid command', kind = 'pid.command', format_item = M.entry_label }, function(c)
        if c == nil then
          return
        end
        if c.hint == nil then
          return M.run('/' .. c.name)
        end
        state.input({ prompt = '/' .. c.name .. ' [' .. c.hint .. ']: ' }, function(input)
          if input == nil then
            return
          end
          M.run(input == '' and ('/' .. c.name) or ('/' .. c.name .. ' ' .. input))
        end)
      end)
    end)
  end)
end

-- run runs text as a command: "/NAME input" (the / may be left out). Without a text, the
-- picker. It returns what prompt.ask returns (false when it cannot run now).
function M.run(text, opts)
  text = vim.trim(tostring(text or ''))
  if text == '' then
    M.pick()
    return true
  end
  if text:sub(1, 1) ~= '/' then
    text = '/' .. text
  end
  return require('pid.prompt').ask(text, opts)
end

-- on_output shows a command's output (commandOutput): "[command] /NAME" (" failed" when it
-- could not do what it was asked), then its text.
function M.on_output(p)
  local head = string.format('[command] /%s%s', tostring(p.name), p.isError and ' failed:' or ':')
  local lines = { head }
  local text = type(p.text) == 'string' and p.text:gsub('[\r\n]+$', '') or ''
  for _, l in ipairs(view.lines_of(text)) do
    table.insert(lines, '    ' .. l)
  end
  view.append_lines(lines)
end

-- tab completes a /NAME being typed at the start of the prompt window's line (insert mode):
-- the matching commands in Neovim's completion menu. It returns false when the line is not
-- one (the key then does what it does).
function M.tab()
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  local prompt = vim.fn.prompt_getprompt(vim.api.nvim_get_current_buf())
  local typed = line:sub(#prompt + 1, col)
  if not typed:match('^/[%w_-]*$') then
    return false
  end
  local items = {}
  for _, c in ipairs(M.list()) do
    if ('/' .. c.name):sub(1, #typed) == typed then
      table.insert(items, { word = '/' .. c.name, menu = c.description or '', info = c.hint and ('input: ' .. c.hint) or '' })
    end
  end
  vim.fn.complete(#prompt + 1, items)
  return true
end

return M
