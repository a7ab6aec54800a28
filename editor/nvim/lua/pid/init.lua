-- pid.nvim: the pid coding agent in Neovim.
--
--   require("pid").setup{ cmd = { "pid" } }
--   :PidAsk [text]   run a prompt (asks for the text when none is given)
--   :PidCancel       cancel the running prompt
--   :PidNew          start a new session (conversation) at the next :PidAsk
--   :PidShow         show the run buffer (pid://run)
--   :PidStop         shut pid down (it starts again at the next :PidAsk)
--
-- pid is started lazily, at the first :PidAsk, with vim.lsp.rpc (JSON-RPC 2.0 with LSP
-- framing over stdio; see docs/protocol.md in pid's repository). Works on Neovim 0.7+.

local rpc = require('pid.rpc')
local view = require('pid.view')
local approval = require('pid.approval')

local M = {}

M.version = '0.1.0'

local defaults = {
  -- The command that starts pid: program and arguments.
  cmd = { 'pid' },
  -- Extra environment variables for pid (merged into Neovim's), e.g. { PID_LOG = 'info' }.
  env = nil,
  -- pid's working folder, and the workspace folder sent in initialize; default: the cwd at
  -- start.
  cwd = nil,
  -- initializationOptions: default session settings (same fields as `session`).
  init_options = nil,
  -- session/new params: model, permissions, toolExecution, systemPrompt, scriptedTools...
  -- `cwd` defaults to Neovim's cwd when the session starts.
  session = {},
  -- How :PidAsk shows the run buffer when no window of the tab shows it: an Ex command that
  -- opens a window (the buffer is put in it); false: do not open one.
  open = 'botright 12split',
}

local config = vim.deepcopy(defaults)

-- S is the plugin's state: one pid process, one current session, at most one running prompt.
local S = {
  client = nil, -- the vim.lsp.rpc client while pid runs
  starting = false, -- initialize or session/new is in flight
  initialized = false,
  server_info = nil,
  session_id = nil,
  session_override = nil, -- params for the next session/new (new_session(opts))
  waiters = {}, -- callbacks waiting for a session: fun(err)
  run = nil, -- the running prompt: {text, id?, session, cancelled, on_done}
  runs = 0, -- finished runs
  last_result = nil, -- the last session/prompt result
  last_error = nil, -- the last run's error message, if it failed
  exit = nil, -- {code, signal} of the last pid process that exited
  withdrawals = 0, -- approval requests pid withdrew ($/cancelRequest from pid)
  token = nil, -- identifies the current pid process (see make_dispatchers)
}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'pid' })
end

-- on_main runs fn on the main loop. vim.lsp.rpc already schedules notification dispatchers
-- (0.7 and later), so this runs fn at once there, keeping pid's order relative to response
-- callbacks (scheduled too); from a fast context (a libuv callback) it schedules fn.
local function on_main(fn)
  if vim.in_fast_event() then
    vim.schedule(fn)
  else
    fn()
  end
end

local function text_of(content)
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

-- summary returns the first line of a tool content, shortened, for a one-line event. Final
-- newlines end the text's last line, they do not start more (pid holds back a progress text's
-- unfinished last word, so progress usually ends in one).
local function summary(content, details)
  local s = text_of(content):gsub('[\r\n]+$', '')
  if s == '' then
    if details ~= nil and details ~= vim.NIL then
      s = approval.short_json(details, 160)
    else
      return ''
    end
  end
  local lines = view.lines_of(s)
  local first = lines[1]
  if vim.fn.strchars(first) > 200 then
    first = vim.fn.strcharpart(first, 0, 200) .. '...'
  end
  if #lines > 1 then
    first = string.format('%s (+%d lines)', first, #lines - 1)
  end
  return first
end

local function ours(params)
  return type(params) ~= 'table' or params.sessionId == nil or params.sessionId == S.session_id
end

-- finish ends the running prompt with its result or an error message.
local function finish(result, err)
  local run = S.run
  if run == nil then
    return
  end
  S.run = nil
  S.runs = S.runs + 1
  approval.withdraw(run.session)
  if err ~= nil then
    S.last_error = err
    S.last_result = nil
    view.append('[error] ' .. err)
  else
    S.last_error = nil
    S.last_result = result
    local reason = type(result) == 'table' and result.stopReason or '?'
    local line = '[done] ' .. tostring(reason)
    if type(result) == 'table' and result.terminated then
      line = line .. ' (terminated by a tool)'
    end
    view.append(line)
  end
  if run.on_done then
    local ok, e = pcall(run.on_done, err, result)
    if not ok then
      notify('on_done failed: ' .. tostring(e), vim.log.levels.ERROR)
    end
  end
end

local function fail_waiters(err)
  local w = S.waiters
  S.waiters = {}
  for _, cb in ipairs(w) do
    cb(err)
  end
end

local handlers = {}

-- streamed counts the text blocks of the assistant message being streamed, which are shown
-- one after another, a newline between two (as text_of joins them).
local streamed = 0

handlers['messageStart'] = function(p)
  if p.message and p.message.role == 'assistant' then
    view.text_begin()
    streamed = 0
  end
end

-- messageUpdate carries a delta, and the partial message only when a block is complete: the
-- text is appended piece by piece, never rebuilt.
handlers['messageUpdate'] = function(p)
  local d = p.delta
  if type(d) ~= 'table' then
    return
  end
  if d.type == 'text_start' then
    if streamed > 0 then
      view.text_append('\n')
    end
    streamed = streamed + 1
  elseif d.type == 'text_delta' and type(d.delta) == 'string' then
    view.text_append(d.delta)
  end
end

handlers['messageEnd'] = function(p)
  local m = p.message
  if m and m.role == 'assistant' then
    view.text_set(text_of(m.content))
    view.text_end()
    if type(m.errorMessage) == 'string' and m.errorMessage ~= '' then
      view.append('[error] ' .. m.errorMessage)
    end
  end
end

handlers['toolStart'] = function(p)
  view.append(string.format('[start] %s (%s) %s', tostring(p.toolName), tostring(p.toolCallId),
    approval.short_json(p.args or vim.empty_dict(), 200)))
end

handlers['$/toolUpdate'] = function(p)
  local r = p.partialResult or {}
  view.append(string.format('[progress] %s (%s): %s', tostring(p.toolName), tostring(p.toolCallId),
    summary(r.content, r.details)))
end

handlers['toolEnd'] = function(p)
  local r = p.result or {}
  local s = summary(r.content, r.details)
  view.append(string.format('[end] %s (%s) %s%s', tostring(p.toolName), tostring(p.toolCallId),
    p.isError and 'error' or 'ok', s ~= '' and (': ' .. s) or ''))
end

handlers['window/logMessage'] = function(p)
  view.append('[log] ' .. tostring(p.message))
end

handlers['window/showMessage'] = function(p)
  local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
  notify(tostring(p.message), levels[p.type] or vim.log.levels.INFO)
end

-- pid withdraws an approval request it sent (the prompt was cancelled). The id is pid's
-- request id, which vim.lsp.rpc does not give the server_request dispatcher; at most one
-- approval is open at a time (one prompt runs, pid asks one at a time), so end them all. A
-- trust question stays open: pid gives it up only when it shuts down (then on_exit ends it).
handlers['$/cancelRequest'] = function(_)
  S.withdrawals = S.withdrawals + 1
  approval.withdraw(nil)
end

-- make_dispatchers returns the vim.lsp.rpc dispatchers for one pid process; token tells
-- that process apart from a later one (after :PidStop or an exit).
local function make_dispatchers(token)
  local dispatchers = {}

  function dispatchers.notification(method, params)
    on_main(function()
      if S.token ~= token then
        return
      end
      local h = handlers[method]
      if h == nil then
        return
      end
      if method ~= '$/cancelRequest' and method ~= 'window/logMessage' and method ~= 'window/showMessage' and not ours(params) then
        return
      end
      h(params or {})
    end)
  end

  local function line_for(params)
    return function(s)
      if ours(params) then
        view.append(s)
      end
    end
  end

  -- server_request answers pid's requests. It must return the answer (see pid/approval.lua for
  -- how it waits for vim.ui.select).
  function dispatchers.server_request(method, params)
    if S.token ~= token then
      return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InternalError, 'pid.nvim: stale process')
    end
    if method == 'beforeToolCall' then
      return approval.before(params, line_for(params))
    elseif method == 'workspace/requestTrust' then
      return approval.trust(params, line_for(params))
    elseif method == 'window/showMessageRequest' then
      return approval.show_message_request(params, line_for(params))
    elseif method == 'afterToolCall' then
      return vim.NIL -- not declared; keep the result
    end
    return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound, 'pid.nvim does not handle ' .. tostring(method))
  end

  function dispatchers.on_exit(code, signal)
    -- Called from a libuv callback (not scheduled by vim.lsp.rpc).
    vim.schedule(function()
      S.exit = { code = code, signal = signal }
      token.exited = true
      if S.token ~= token then
        return -- stopped by :PidStop: nothing is waiting for it
      end
      S.token, S.client, S.starting, S.initialized, S.session_id = nil, nil, false, false, nil
      approval.withdraw(nil, true)
      local msg = string.format('pid exited (code %s%s)', tostring(code),
        (signal ~= nil and signal ~= 0) and (', signal ' .. tostring(signal)) or '')
      fail_waiters(msg)
      if S.run ~= nil then
        finish(nil, msg)
      else
        view.append('[exit] ' .. msg)
      end
    end)
  end

  function dispatchers.on_error(code, err)
    on_main(function()
      if S.token ~= token then
        return
      end
      local kind = vim.lsp.rpc.client_errors[code] or tostring(code)
      view.append(string.format('[error] rpc %s: %s', kind, vim.inspect(err, { newline = ' ', indent = '' })))
    end)
  end

  return dispatchers
end

local function session_params()
  local p = vim.tbl_extend('force', { cwd = vim.fn.getcwd() }, config.session or {}, S.session_override or {})
  return p
end

local function new_session(client)
  client.request('session/new', session_params(), function(err, res)
    if S.client ~= client then
      return
    end
    S.starting = false
    if err ~= nil or type(res) ~= 'table' or type(res.sessionId) ~= 'string' then
      fail_waiters('session/new failed: ' .. (err and (err.message or tostring(err)) or vim.inspect(res)))
      return
    end
    S.session_id = res.sessionId
    fail_waiters(nil)
  end)
end

-- ensure calls cb(err) once pid runs, is initialized and has a session; it starts what is
-- missing.
local function ensure(cb)
  if S.client ~= nil and S.session_id ~= nil then
    return cb(nil)
  end
  table.insert(S.waiters, cb)
  if S.starting then
    return
  end
  S.starting = true
  if S.client ~= nil and S.initialized then
    return new_session(S.client)
  end
  local cwd = config.cwd or vim.fn.getcwd()
  local token = {}
  local client, err = rpc.start(config.cmd, make_dispatchers(token), { cwd = cwd, env = config.env })
  if client == nil then
    S.starting = false
    return fail_waiters(err)
  end
  S.client, S.token, S.exit = client, token, nil
  local uri = vim.uri_from_fname(cwd)
  local ok = client.request('initialize', {
    processId = vim.fn.getpid(),
    clientInfo = { name = 'pid.nvim', version = M.version },
    rootUri = uri,
    workspaceFolders = { { uri = uri, name = vim.fn.fnamemodify(cwd, ':t') } },
    capabilities = { experimental = { pid = { beforeToolCall = true, trust = true } } },
    initializationOptions = config.init_options,
  }, function(e, res)
    if S.client ~= client then
      return
    end
    if e ~= nil then
      S.starting = false
      fail_waiters('initialize failed: ' .. (e.message or tostring(e)))
      return
    end
    S.initialized = true
    S.server_info = type(res) == 'table' and res.serverInfo or nil
    client.notify('initialized', vim.empty_dict())
    new_session(client)
  end)
  if not ok then
    S.starting = false
    fail_waiters('could not send initialize to pid')
  end
end

-- ask runs a prompt. opts.on_done(err, result) is called when it ends (result is
-- session/prompt's: {stopReason, messages, terminated?}).
function M.ask(text, opts)
  opts = opts or {}
  if type(text) ~= 'string' or text:match('^%s*$') then
    notify('nothing to ask', vim.log.levels.WARN)
    return false
  end
  if S.run ~= nil then
    notify('a prompt is running: wait for it or :PidCancel it', vim.log.levels.WARN)
    return false
  end
  local run = { text = text, on_done = opts.on_done }
  S.run = run
  local shown, serr = pcall(view.show, config.open)
  if not shown then
    notify('could not open the run buffer: ' .. tostring(serr), vim.log.levels.WARN)
  end
  view.header(text)
  ensure(function(err)
    if S.run ~= run then
      return
    end
    if err ~= nil then
      return finish(nil, err)
    end
    if run.cancelled then
      return finish({ stopReason = 'aborted', messages = {} }, nil)
    end
    run.session = S.session_id
    local client = S.client
    local ok, id = client.request('session/prompt', { sessionId = S.session_id, text = text }, function(e, res)
      if S.run ~= run then
        return
      end
      if e ~= nil then
        return finish(nil, 'session/prompt failed: ' .. (e.message or tostring(e)))
      end
      finish(res, nil)
    end)
    if not ok then
      return finish(nil, 'could not send session/prompt to pid')
    end
    run.id = id
  end)
  return true
end

-- cancel cancels the running prompt ($/cancelRequest with its request id). The prompt still
-- answers, with stopReason "aborted".
function M.cancel()
  local run = S.run
  if run == nil then
    notify('no prompt is running')
    return false
  end
  if run.cancelled then
    return true
  end
  run.cancelled = true
  view.append('[cancel] cancelling...')
  if run.id ~= nil and S.client ~= nil then
    S.client.notify('$/cancelRequest', { id = run.id })
  end
  -- pid withdraws its open question too; do not keep the user waiting for that.
  approval.withdraw(run.session)
  return true
end

-- new_session makes the next prompt start a new session (a new conversation); opts, if
-- given, override setup's `session` params for it and the sessions after it.
function M.new_session(opts)
  if S.run ~= nil then
    notify('a prompt is running: :PidCancel it first', vim.log.levels.WARN)
    return false
  end
  if opts ~= nil then
    S.session_override = opts
  end
  S.session_id = nil
  return true
end

-- stop shuts pid down (shutdown, then exit); it starts again at the next prompt.
function M.stop()
  local client, token = S.client, S.token
  if client == nil then
    return false
  end
  -- Forget this process now: the next prompt starts a new one. A running prompt still gets
  -- its answer (pid cancels it and answers before it answers shutdown).
  S.token, S.client, S.starting, S.initialized, S.session_id = nil, nil, false, false, nil
  fail_waiters('pid was stopped')
  approval.withdraw(nil, true)
  local ok = client.request('shutdown', nil, function()
    client.notify('exit', nil)
  end)
  if not ok then
    rpc.kill(client)
  end
  -- pid answers shutdown once running prompts have ended; do not wait forever.
  vim.defer_fn(function()
    if not token.exited then
      rpc.kill(client)
    end
  end, 5000)
  return true
end

-- trust_request sends a trust/* request to the running pid; cb(err, result) gets the answer
-- (err: a message). It returns false, without calling cb, when pid does not run.
local function trust_request(method, params, cb)
  local client = S.client
  if client == nil or not S.initialized then
    return false
  end
  return client.request(method, params, function(err, res)
    if err ~= nil then
      return cb(method .. ' failed: ' .. (err.message or tostring(err)), nil)
    end
    cb(nil, res)
  end)
end

-- trusted_folders calls cb(err, folders) with the folders pid trusts (trust/list):
-- { {folder = '/real/path', trustedAt = '...'}, ... }. false when pid does not run.
function M.trusted_folders(cb)
  return trust_request('trust/list', vim.empty_dict(), function(err, res)
    cb(err, err == nil and type(res) == 'table' and type(res.folders) == 'table' and res.folders or {})
  end)
end

-- revoke_trust stops trusting folder (trust/revoke): its settings only narrow again, in
-- running sessions too. cb(err) is called with pid's answer; false when pid does not run.
function M.revoke_trust(folder, cb)
  return trust_request('trust/revoke', { folder = folder }, function(err)
    cb(err)
  end)
end

function M.show()
  view.show(config.open or 'botright 12split')
end

-- bufnr returns the run buffer (pid://run).
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
    running = S.run ~= nil,
    runs = S.runs,
    last_result = S.last_result,
    last_error = S.last_error,
    exit = S.exit,
    pending_approvals = approval.pending(),
    withdrawals = S.withdrawals,
  }
end

local function cmd_ask(args)
  if args ~= nil and args ~= '' then
    return M.ask(args)
  end
  vim.ui.input({ prompt = 'pid> ' }, function(text)
    if text ~= nil and text ~= '' then
      M.ask(text)
    end
  end)
end

function M.create_commands()
  local c = vim.api.nvim_create_user_command
  c('PidAsk', function(o) cmd_ask(o.args) end, { nargs = '*', desc = 'pid: run a prompt' })
  c('PidCancel', function() M.cancel() end, { nargs = 0, desc = 'pid: cancel the running prompt' })
  c('PidNew', function() M.new_session() end, { nargs = 0, desc = 'pid: start a new session' })
  c('PidShow', function() M.show() end, { nargs = 0, desc = 'pid: show the run buffer' })
  c('PidStop', function() M.stop() end, { nargs = 0, desc = 'pid: shut pid down' })
end

-- setup configures the plugin (it does not start pid). Calling it again changes the options:
-- `cmd`, `env`, `cwd` and `init_options` apply from the next start, `session` from the next
-- session.
function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= 'table' then
    error('pid: setup() takes a table of options', 2)
  end
  config = vim.tbl_extend('force', vim.deepcopy(defaults), opts)
  if type(config.cmd) == 'string' then
    config.cmd = { config.cmd }
  end
  M.create_commands()
  return M
end

function M.config()
  return config
end

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
