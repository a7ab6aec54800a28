-- Several conversations at once, as a person sees them: :PidChat in a tab page that has no
-- chat of its own opens a new conversation there (each tab page its own), :PidNew! opens a
-- second chat buffer in the current one, and :PidSessions lists the live ones first and jumps
-- to the one chosen. Each conversation is a chat buffer and its own pid session; pid's
-- notifications reach the conversation of their session (lifecycle.lua routes them). The
-- state is state.lua's (convs, active).

local state = require('pid.state')
local view = require('pid.view')

local M = {}

-- window_of returns a window (of any tab page) that shows buf, nil when none does.
local function window_of(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  return nil
end

-- for_tab makes active, and returns, the conversation :PidChat opens in the current tab page:
-- the one a window of it shows, or it belongs to; else one no tab page has taken yet (the
-- first, before any chat showed); else a new one, its own.
function M.for_tab()
  local tab = vim.api.nvim_get_current_tabpage()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    local c = state.of_buf(vim.api.nvim_win_get_buf(win))
    if c ~= nil then
      state.active = c
      return c
    end
  end
  local free
  for _, c in ipairs(state.convs) do
    if c.tab == tab and vim.api.nvim_tabpage_is_valid(tab) then
      state.active = c
      return c
    end
    if free == nil and (c.tab == nil or not vim.api.nvim_tabpage_is_valid(c.tab)) then
      free = c
    end
  end
  local c = free or state.add()
  c.tab = tab
  state.active = c
  return c
end

-- new opens a new conversation (:PidNew!) in the current tab page: its chat replaces the one a
-- window of the tab page shows (and its prompt the prompt window's), else opens as the chat
-- does; it is active and returned.
function M.new()
  local tab = vim.api.nvim_get_current_tabpage()
  local chat_win, prompt_win
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    local buf = vim.api.nvim_win_get_buf(win)
    local c = state.of_buf(buf)
    if c ~= nil then
      if buf == c.chat.buf then
        chat_win = chat_win or win
      else
        prompt_win = prompt_win or win
      end
    end
  end
  local c = state.add()
  c.tab = tab
  if chat_win ~= nil then
    vim.api.nvim_win_set_buf(chat_win, view.bufnr())
    require('pid.modes').refresh()
  else
    view.show(state.config.open)
  end
  view.append(string.format('[session] a new conversation (%s): its first prompt starts its own session; :PidSessions lists the live ones', view.chat_name()))
  return c, prompt_win
end

-- label says a live conversation in one line: its chat, its title, whether it works.
function M.label(c)
  local what = c.run ~= nil and 'running' or (c.session_id ~= nil and 'idle') or (c.resume_id ~= nil and 'pid stopped') or 'no session yet'
  local name = state.with(c, view.chat_name)
  return string.format('%s: "%s" (%s)', name, c.title or '(no prompt yet)', what)
end

-- live returns the conversations a person may go to: those with a session, a chat shown or
-- text in it.
function M.live()
  local out = {}
  for _, c in ipairs(state.convs) do
    if c.session_id ~= nil or c.resume_id ~= nil or c.run ~= nil or (c.chat.buf ~= nil and not c.chat.empty) then
      table.insert(out, c)
    end
  end
  return out
end

-- jump goes to conversation c: the window that shows its chat (in whatever tab page), else
-- its chat shown in the current tab page; c is active.
function M.jump(c)
  state.active = c
  local win = c.chat.buf ~= nil and window_of(c.chat.buf) or nil
  if win ~= nil then
    vim.api.nvim_set_current_win(win)
  else
    view.show(state.config.open)
    win = view.window()
    if win ~= nil then
      vim.api.nvim_set_current_win(win)
    end
  end
  return win
end

-- of_session returns the live conversation of a saved session (:PidSessions jumps to it rather
-- than loading it twice), nil when none holds it.
function M.of_session(id)
  for _, c in ipairs(state.convs) do
    if id ~= nil and (c.session_id == id or c.resume_id == id) then
      return c
    end
  end
  return nil
end

-- several reports whether there is more than one conversation (the chats then say which).
function M.several()
  return #state.convs > 1
end

return M
