-- pid.nvim: the pid coding agent in Neovim. This file is the entry: setup{} and the public
-- Lua API, each function done by the module of its job (see README.md, "Layout").
--
--   require("pid").setup{ model = { provider = "anthropic", id = "claude-sonnet-4-5" } }
--   :PidChat            the chat and its prompt window (Enter sends; during a run: steer; <Tab>
--                       after / completes the commands)
--   :Pid [/cmd] [input] run one of the session's commands (/plan, /compact focus, /review,
--                       the user's own...), completed; without one: a picker
--   :[range]PidAsk[!] [q] run a prompt; with a range (:'<,'>PidAsk) the selection goes with it,
--                     with ! the buffer's diagnostics, with @path in q a link to that file
--   :PidSteer text      a message for the running prompt, taken after the current tools
--   :PidFollowUp text   a message taken when the running prompt would stop
--   :PidApproval        go to the open approval (a allow, A always, d deny, q dismiss)
--   :PidCancel          cancel the running prompt
--   :PidNew             start a new session (conversation) at the next prompt
--   :PidSessions        pick a saved session and continue it
--   :PidModel           pick the session's model (models/list, session/setModel)
--   :PidMode [id]       the session's mode (default, acceptEdits, plan, auto); no id: a picker
--   :PidRewind[!]       back to before one of the session's prompts: files, conversation or both
--   :PidReview          the latest prompt's changes, hunk by hunk: quickfix, diff, gk keep, gu undo
--   :PidPermissions     list the remembered "always" answers and revoke one
--   :PidResume          after pid stopped unexpectedly: start it again, same session
--   :PidShow            show the chat
--   :PidStop            shut pid down (it starts again at the next prompt)
--
-- pid is started lazily, at the first prompt, and spoken to over stdio (JSON-RPC 2.0 with LSP
-- framing, pid/rpc.lua; see docs/protocol.md in pid's repository). Neovim 0.7+.

local state = require('pid.state')
local view = require('pid.view')
local approval = require('pid.approval')
local chat = require('pid.chat')
local context = require('pid.context')
local lifecycle = require('pid.lifecycle')
local prompt = require('pid.prompt')
local pickers = require('pid.pickers')
local commands = require('pid.commands')
local words = require('pid.words')
local modes = require('pid.modes')
local rewind = require('pid.rewind')

local S = state.S

local M = {}

M.version = lifecycle.VERSION

-- Prompts (prompt.lua) and what goes with them (context.lua).
M.ask = prompt.ask
M.steer = prompt.steer
M.follow_up = prompt.follow_up
M.cancel = prompt.cancel
M.selection = context.selection
M.mentions = context.mentions
M.diagnostics = context.diagnostics

-- pid and its session (lifecycle.lua).
M.new_session = lifecycle.new_session
M.load_session = lifecycle.load_session
M.resume = lifecycle.resume
M.stop = lifecycle.stop

-- Pickers and what pid remembers (pickers.lua).
M.sessions = pickers.sessions
M.models = pickers.models
M.set_model = pickers.set_model
M.pick_model = pickers.pick_model
M.set_mode = pickers.set_mode
M.pick_mode = pickers.pick_mode
M.permissions = pickers.permissions
M.rewind = rewind.rewind
M.trusted_folders = pickers.trusted_folders
M.revoke_trust = pickers.revoke_trust

-- The chat, the prompt window and the float (commands.lua, view.lua).
M.show = commands.show
M.chat = commands.chat
M.approval_focus = commands.approval_focus
M.create_commands = commands.create

-- mode returns the current session's mode id (nil when no session said it);
-- mode_label() says it for a status line ("mode: Plan").
M.mode = modes.current
M.mode_label = modes.label

-- The functions above act for the conversation of where they are called (state.focus: the
-- chat or prompt window's, the tab page's, else the one active last), as the commands do.
for _, name in ipairs({ 'ask', 'steer', 'follow_up', 'cancel', 'new_session', 'load_session', 'resume', 'sessions', 'models', 'set_model',
  'pick_model', 'set_mode', 'pick_mode', 'rewind', 'show', 'chat' }) do
  local fn = M[name]
  M[name] = function(...)
    state.focus()
    return fn(...)
  end
end

-- bufnr returns the chat buffer (pid://chat).
function M.bufnr()
  return view.bufnr()
end

-- status describes the plugin's state (for statuslines, scripts and tests).
function M.status()
  return {
    started = S.client ~= nil,
    initialized = S.initialized,
    server_info = S.server_info,
    session_id = S.session_id,
    mode = S.modes and S.modes.current or nil,
    -- The current session's instruction files ({path, bytes, truncated}, as pid said them).
    instructions = S.instructions and S.instructions.session == S.session_id and S.instructions.files or nil,
    resume_id = S.resume_id,
    running = S.run ~= nil,
    loading = S.loading,
    saves_sessions = S.saves_sessions,
    workspace = S.workspace,
    runs = S.runs,
    last_result = S.last_result,
    last_error = S.last_error,
    exit = S.exit,
    crashed = S.crashed,
    pending_approvals = approval.pending(),
    withdrawals = S.withdrawals,
    fs_reads = S.fs_reads,
    fs_writes = S.fs_writes,
    -- The current session's plan (planUpdate's entries) and context meter ({used, size, cost?}).
    plan = S.plan and S.plan.session == S.session_id and S.plan.entries or nil,
    usage = S.usage and S.usage.session == S.session_id and S.usage or nil,
    pid = S.client and S.client.pid or nil,
    -- The last lines pid wrote on stderr (its log): of the running pid, else of the last one
    -- that stopped unexpectedly.
    stderr = S.client and S.client.stderr_tail() or S.stderr,
  }
end

-- setup configures the plugin (it does not start pid). Calling it again changes the options:
-- `cmd`, `env`, `cwd`, `init_options` and `buffers` apply from the next start of pid,
-- `model` and `session` from the next session.
function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= 'table' then
    error('pid: setup() takes a table of options', 2)
  end
  local config = vim.tbl_extend('force', vim.deepcopy(state.defaults), opts)
  if type(config.cmd) == 'string' then
    config.cmd = { config.cmd }
  end
  state.config = config
  M.create_commands()
  return M
end

-- config returns the options in force (setup's, over the defaults).
function M.config()
  return state.config
end

-- For tests: the pieces the chat and the pickers are made of, and session/list's paging.
M._error_text = words.error_text
M._card_text = chat.card_text
M._transcript_lines = chat._transcript_lines
M._model_label = pickers._model_label
M._permission_label = pickers._permission_label
M._list_sessions = pickers._list_sessions
M._rewind = { item_label = rewind.item_label, float_lines = rewind.float_lines, report_lines = rewind.report_lines }

-- For tests: the rpc client of the running pid, and the running prompt.
M._debug = {
  client = function()
    return S.client
  end,
  run = function()
    return S.run
  end,
}

return M
