-- The :Pid* user commands, and what only they lead to: the prompt window (:PidChat), showing
-- the chat (:PidShow) and going to the open question (:PidApproval).

local state = require('pid.state')
local view = require('pid.view')
local approval = require('pid.approval')
local context = require('pid.context')
local prompt = require('pid.prompt')
local promptwin = require('pid.promptwin')
local lifecycle = require('pid.lifecycle')
local pickers = require('pid.pickers')
local words = require('pid.words')
local modes = require('pid.modes')
local rewind = require('pid.rewind')
local slash = require('pid.slash')
local chats = require('pid.chats')

local S = state.S

local M = {}

-- show shows the chat (setup's `open`), leaving the cursor where it is.
function M.show()
  view.show(state.config.open)
end

-- on_submit is what Enter in the prompt window does: the line as a prompt, or as a steer while
-- a prompt runs (promptwin.lua binds it to its conversation).
local function on_submit(text)
  if S.run ~= nil then
    prompt.steer(text)
  else
    prompt.ask(text)
  end
end

-- chat shows the chat of the current tab page's conversation (chats.for_tab: each tab page
-- its own) and the prompt window under it, the cursor in the prompt: Enter sends the line as a
-- prompt, or as a steer while a prompt runs; Shift-Tab switches to the next mode.
function M.chat()
  chats.for_tab()
  promptwin.open_prompt(state.config.open, on_submit)
  M.prompt_keys()
end

-- new_chat is :PidNew!: a second conversation, its chat in place of the tab page's (and its
-- prompt in the prompt window's place, when one shows).
function M.new_chat()
  local _, prompt_win = chats.new()
  if prompt_win ~= nil and vim.api.nvim_win_is_valid(prompt_win) then
    -- The prompt window keeps a prompt: the new conversation's (promptwin.keep lets a
    -- conversation's prompt in).
    vim.api.nvim_win_set_buf(prompt_win, promptwin.prompt_bufnr(on_submit))
    M.prompt_keys()
  end
end

-- prompt_keys maps the active conversation's prompt buffer's keys: Shift-Tab (the next mode),
-- Tab after a / (the commands).
function M.prompt_keys()
  for _, m in ipairs({ 'i', 'n' }) do
    vim.api.nvim_buf_set_keymap(promptwin.prompt_bufnr(), m, '<S-Tab>', '', {
      noremap = true,
      silent = true,
      desc = "pid: the session's next mode",
      callback = function()
        state.focus()
        pickers.next_mode()
      end,
    })
  end
  -- <Tab> after a / at the start of the line: the session's commands.
  vim.api.nvim_buf_set_keymap(promptwin.prompt_bufnr(), 'i', '<Tab>', '', {
    noremap = true,
    silent = true,
    desc = "pid: complete the session's /commands",
    callback = function()
      state.focus()
      if not slash.tab() then
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Tab>', true, false, true), 'n', false)
      end
    end,
  })
end

-- approval_focus puts the cursor in the open approval's float; false (and said) when no
-- question is open.
function M.approval_focus()
  if not approval.focus() then
    words.notify('no question from pid is open')
    return false
  end
  return true
end

-- ask_with_input calls fn(text) with the command's argument, or, without one, with what the
-- person types in vim.ui.input (nothing typed: not called).
local function ask_with_input(o, fn)
  if o.args ~= nil and o.args ~= '' then
    return fn(o.args)
  end
  vim.ui.input({ prompt = 'pid> ' }, state.bind(function(text)
    if text ~= nil and text ~= '' then
      fn(text)
    end
  end))
end

-- cmd_ask runs :[range]PidAsk[!] [text]: with a range, the lines go with the prompt as a
-- resource (a selection), with ! the buffer's diagnostics, unless the buffer is the chat.
local function cmd_ask(o)
  local opts = {}
  local buf = vim.api.nvim_get_current_buf()
  opts.content, opts.context = {}, {}
  if o.range ~= nil and o.range > 0 and buf ~= view.bufnr() then
    local block, label = context.selection(buf, o.line1, o.line2)
    table.insert(opts.content, block)
    table.insert(opts.context, label)
  end
  if o.bang and buf ~= view.bufnr() then
    local block, label = context.diagnostics(buf)
    table.insert(opts.content, block)
    table.insert(opts.context, label)
  end
  ask_with_input(o, function(text)
    prompt.ask(text, opts)
  end)
end

-- cmd_queue returns the command that sends its text with fn (prompt.steer, prompt.follow_up).
local function cmd_queue(fn)
  return function(o)
    ask_with_input(o, fn)
  end
end

-- create (re)defines the :Pid* commands (plugin/pid.lua and setup call it). Each is for the
-- conversation of where it is typed (state.focus): the chat or prompt window's, the tab page's.
function M.create()
  local c = function(name, fn, opts)
    vim.api.nvim_create_user_command(name, function(o)
      state.focus()
      return fn(o)
    end, opts)
  end
  c('PidAsk', cmd_ask, { nargs = '*', range = true, bang = true, desc = 'pid: run a prompt (with a range: the selection goes with it; with !: the diagnostics)' })
  c('Pid', function(o) slash.run(o.args) end, { nargs = '*', complete = slash.complete, desc = 'pid: run one of the session\'s /commands (:Pid /plan, :Pid /compact focus); without one, a picker' })
  c('PidChat', function() M.chat() end, { nargs = 0, desc = 'pid: the chat and its prompt window' })
  c('PidSteer', cmd_queue(prompt.steer), { nargs = '*', desc = 'pid: a message for the running prompt, after its current tools' })
  c('PidFollowUp', cmd_queue(prompt.follow_up), { nargs = '*', desc = 'pid: a message taken when the running prompt would stop' })
  c('PidApproval', function() M.approval_focus() end, { nargs = 0, desc = "pid: go to the open approval's window" })
  c('PidCancel', function() prompt.cancel() end, { nargs = 0, desc = 'pid: cancel the running prompt' })
  c('PidNew', function(o)
    if o.bang then
      M.new_chat()
    else
      lifecycle.new_session()
    end
  end, { nargs = 0, bang = true, desc = 'pid: start a new session (with !: in a second chat, this one going on)' })
  c('PidSessions', function() pickers.sessions() end, { nargs = 0, desc = 'pid: resume a saved session' })
  c('PidModel', function() pickers.pick_model() end, { nargs = 0, desc = "pid: pick the session's model" })
  c('PidMode', function(o)
    if o.args ~= nil and o.args ~= '' then
      pickers.set_mode(o.args)
    else
      pickers.pick_mode()
    end
  end, { nargs = '?', complete = function(arglead) return modes.complete(arglead) end, desc = "pid: the session's mode (without an argument: a picker)" })
  c('PidRewind', function(o) rewind.rewind({ force = o.bang }) end, { nargs = 0, bang = true, desc = "pid: go back to before one of the session's prompts (files, conversation or both)" })
  c('PidReview', function() require('pid.review').review() end, { nargs = 0, desc = "pid: review the latest prompt's changes hunk by hunk (quickfix; gk keep, gu undo, ]h/[h)" })
  c('PidPermissions', function() pickers.permissions() end, { nargs = 0, desc = 'pid: list and revoke remembered "always" answers' })
  c('PidResume', function() lifecycle.resume() end, { nargs = 0, desc = 'pid: start pid again and continue the session it held' })
  c('PidJobs', function() require('pid.jobs').open() end, { nargs = 0, desc = "pid: the session's background jobs (K kills one, <CR> shows its output)" })
  c('PidShow', function() M.show() end, { nargs = 0, desc = 'pid: show the chat' })
  c('PidStop', function() lifecycle.stop() end, { nargs = 0, desc = 'pid: shut pid down' })
end

return M
