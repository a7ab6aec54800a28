-- pid.nvim: the pid coding agent in Neovim.
--
--   require("pid").setup{ cmd = { "pid" } }
--   :PidAsk [text]   run a prompt (asks for the text when none is given)
--   :PidCancel       cancel the running prompt
--   :PidNew          start a new session (conversation) at the next :PidAsk
--   :PidSessions     pick a saved session (vim.ui.select), load it into the run buffer; the
--                    next :PidAsk continues it
--   :PidShow         show the run buffer (pid://run)
--   :PidStop         shut pid down (it starts again at the next :PidAsk)
--
-- pid is started lazily, at the first :PidAsk, with vim.lsp.rpc (JSON-RPC 2.0 with LSP
-- framing over stdio; see docs/protocol.md in pid's repository). Works on Neovim 0.7+.

local rpc = require('pid.rpc')
local view = require('pid.view')
local approval = require('pid.approval')
local sessions = require('pid.sessions')

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
  starting = false, -- pid is starting: initialize is in flight
  creating = false, -- session/new is in flight
  loading = false, -- session/load is in flight (:PidSessions)
  initialized = false,
  server_info = nil,
  saves_sessions = false, -- initialize's capabilities.experimental.pid.sessions
  workspace = nil, -- the workspace folder pid was started with
  session_id = nil,
  session_override = nil, -- params for the next session/new (new_session(opts))
  init_waiters = {}, -- callbacks waiting for pid to be initialized: fun(err)
  stopping = nil, -- the token of a pid :PidStop stopped that has not exited yet
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

-- Lines shared by a live run (pid's notifications) and a loaded transcript (session/load's
-- items), so that both read the same.

local function start_line(name, id, args)
  return string.format('[start] %s (%s) %s', tostring(name), tostring(id), approval.short_json(args or vim.empty_dict(), 200))
end

local function end_line(name, id, content, details, is_error)
  local s = summary(content, details)
  return string.format('[end] %s (%s) %s%s', tostring(name), tostring(id), is_error and 'error' or 'ok', s ~= '' and (': ' .. s) or '')
end

local REASONS = {
  manual = 'on request',
  threshold = 'it neared the context window',
  overflow = 'the model said it was too long',
}

local function reason_text(reason)
  return REASONS[reason] or tostring(reason)
end

-- compacted_lines say that the conversation was compacted and show the summary the model
-- now sees instead of the older messages, whole and indented.
local function compacted_lines(reason, tokens_before, summary_text)
  local tokens = ''
  if type(tokens_before) == 'number' and tokens_before > 0 then
    tokens = string.format(', %d tokens before', tokens_before)
  end
  local text = type(summary_text) == 'string' and summary_text:gsub('[\r\n]+$', '') or ''
  local out = { string.format('[compaction] the conversation was compacted (%s%s); the model now sees this summary instead of the older messages:%s',
    reason_text(reason), tokens, text == '' and ' (empty)' or '') }
  if text ~= '' then
    for _, l in ipairs(view.lines_of(text)) do
      table.insert(out, '    ' .. l)
    end
  end
  return out
end

local function done_line(stop_reason, terminated)
  local line = '[done] ' .. tostring(stop_reason)
  if terminated then
    line = line .. ' (terminated by a tool)'
  end
  return line
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
    view.append(done_line(reason, type(result) == 'table' and result.terminated))
  end
  if run.on_done then
    local ok, e = pcall(run.on_done, err, result)
    if not ok then
      notify('on_done failed: ' .. tostring(e), vim.log.levels.ERROR)
    end
  end
end

-- flush calls, once each, the callbacks waiting in S[list] ('init_waiters' or 'waiters').
local function flush(list, err)
  local w = S[list]
  S[list] = {}
  for _, cb in ipairs(w) do
    cb(err)
  end
end

-- fail_waiters ends every wait: for pid to start and for a session.
local function fail_waiters(err)
  flush('init_waiters', err)
  flush('waiters', err)
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
  view.append(start_line(p.toolName, p.toolCallId, p.args))
end

handlers['$/toolUpdate'] = function(p)
  local r = p.partialResult or {}
  view.append(string.format('[progress] %s (%s): %s', tostring(p.toolName), tostring(p.toolCallId),
    summary(r.content, r.details)))
end

handlers['toolEnd'] = function(p)
  local r = p.result or {}
  view.append(end_line(p.toolName, p.toolCallId, r.content, r.details, p.isError))
end

handlers['compactionStart'] = function(p)
  view.append(string.format('[compaction] compacting the conversation (%s)...', reason_text(p.reason)))
end

handlers['compactionEnd'] = function(p)
  if type(p.error) == 'string' and p.error ~= '' then
    view.append(string.format('[compaction] the conversation was not compacted (%s): %s', reason_text(p.reason), p.error))
  else
    view.append_lines(compacted_lines(p.reason, p.tokensBefore, p.summary))
  end
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
      if S.stopping == token then
        S.stopping = nil
      end
      if token.after_exit ~= nil then
        -- A start waited for this process to let go of its sessions (see ensure_started).
        local start = token.after_exit
        token.after_exit = nil
        start()
      end
      if S.token ~= token then
        return -- stopped by :PidStop: nothing else is waiting for it
      end
      S.token, S.client, S.starting, S.initialized, S.session_id = nil, nil, false, false, nil
      S.creating, S.loading = false, false
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
    S.creating = false
    if err ~= nil or type(res) ~= 'table' or type(res.sessionId) ~= 'string' then
      flush('waiters', 'session/new failed: ' .. (err and (err.message or tostring(err)) or vim.inspect(res)))
      return
    end
    S.session_id = res.sessionId
    flush('waiters', nil)
  end)
end

local start_process

-- ensure_started calls cb(err) once pid runs and is initialized; it starts pid if needed.
-- After :PidStop it starts the next pid once the stopped one has exited (at most 5 s): until
-- then that one holds its sessions' files, and the new one could not load them.
local function ensure_started(cb)
  if S.client ~= nil and S.initialized then
    return cb(nil)
  end
  table.insert(S.init_waiters, cb)
  if S.starting then
    return
  end
  S.starting = true
  if S.stopping ~= nil and not S.stopping.exited then
    S.stopping.after_exit = start_process
    return
  end
  start_process()
end

-- start_process spawns pid and sends initialize; S.init_waiters learn how it went.
start_process = function()
  if not S.starting then
    return -- :PidStop came while it waited for the previous pid to exit
  end
  local cwd = config.cwd or vim.fn.getcwd()
  local token = {}
  local client, err = rpc.start(config.cmd, make_dispatchers(token), { cwd = cwd, env = config.env })
  if client == nil then
    S.starting = false
    return flush('init_waiters', err)
  end
  S.client, S.token, S.exit, S.workspace = client, token, nil, cwd
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
    S.starting = false
    if e ~= nil then
      flush('init_waiters', 'initialize failed: ' .. (e.message or tostring(e)))
      return
    end
    S.initialized = true
    S.server_info = type(res) == 'table' and res.serverInfo or nil
    local caps = type(res) == 'table' and res.capabilities or nil
    local ex = type(caps) == 'table' and caps.experimental or nil
    S.saves_sessions = type(ex) == 'table' and type(ex.pid) == 'table' and ex.pid.sessions == true
    client.notify('initialized', vim.empty_dict())
    flush('init_waiters', nil)
  end)
  if not ok then
    S.starting = false
    flush('init_waiters', 'could not send initialize to pid')
  end
end

-- ensure calls cb(err) once pid runs, is initialized and has a session; it starts what is
-- missing.
local function ensure(cb)
  if S.client ~= nil and S.session_id ~= nil then
    return cb(nil)
  end
  table.insert(S.waiters, cb)
  if S.creating then
    return
  end
  S.creating = true
  ensure_started(function(err)
    if err ~= nil then
      S.creating = false
      return flush('waiters', err)
    end
    new_session(S.client)
  end)
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
  if S.loading then
    notify('a saved session is loading: wait a moment, then ask again', vim.log.levels.WARN)
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

-- transcript_lines renders a loaded session's items (session/load's messages) as a live run
-- shows them: each user text as a '>>>' header after a blank line, the assistant's text,
-- '[start]' for its tool calls and '[end]' for their results, '[done] <stopReason>' where the
-- assistant stopped, and each compaction with its summary. Unknown items are skipped.
local function transcript_lines(items)
  local out = {}
  local open = false -- an exchange that has not ended yet
  local aborted = false -- its last tool result is pid's "Operation aborted"
  local names = {}
  local function unfinished()
    if open then
      -- Cancelled while tools ran (the live run said "[done] aborted"), or pid stopped.
      table.insert(out, aborted and done_line('aborted') or '[done] unfinished (pid stopped before the model answered?)')
      open = false
    end
  end
  for _, m in ipairs(type(items) == 'table' and items or {}) do
    if type(m) == 'table' then
      if m.role == 'user' then
        unfinished()
        table.insert(out, '')
        for _, l in ipairs(view.lines_of(text_of(m.content))) do
          table.insert(out, '>>> ' .. l)
        end
        open = true
      elseif m.role == 'assistant' then
        local text = text_of(m.content)
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
            names[tostring(c.id)] = c.name
            table.insert(out, start_line(c.name, c.id, c.arguments))
          end
        end
        -- The run stops at an answer without tool calls, a failed call and a cancel; a reply
        -- cut off with tool calls goes on (their results ask the model again).
        if calls == 0 or m.stopReason == 'aborted' or m.stopReason == 'error' then
          table.insert(out, done_line(m.stopReason or 'stop'))
          open = false
        end
      elseif m.role == 'toolResult' then
        local name = m.toolName or names[tostring(m.toolCallId)] or 'tool'
        table.insert(out, end_line(name, m.toolCallId, m.content, m.details, m.isError))
        aborted = m.isError == true and text_of(m.content) == 'Operation aborted'
      elseif m.role == 'compaction' then
        vim.list_extend(out, compacted_lines(m.reason, m.tokensBefore, m.summary))
      end
    end
  end
  unfinished()
  return out
end
M._transcript_lines = transcript_lines

-- list_sessions calls cb(err, list, more) with the saved sessions (session/list), newest
-- first, following nextCursor up to max; more: sessions beyond max were left out.
local function list_sessions(client, max, cb)
  local all, seen = {}, {}
  local function page(cursor)
    local params = vim.empty_dict()
    if cursor ~= nil then
      params = { cursor = cursor }
    end
    local ok = client.request('session/list', params, function(err, res)
      if S.client ~= client then
        return cb('pid stopped while listing the sessions', nil, false)
      end
      if err ~= nil then
        return cb('session/list failed: ' .. tostring(err.message or err), nil, false)
      end
      local list = type(res) == 'table' and type(res.sessions) == 'table' and res.sessions or {}
      for _, x in ipairs(list) do
        if #all >= max then
          return cb(nil, all, true) -- this page holds more than max leaves room for
        end
        if type(x) == 'table' and type(x.sessionId) == 'string' then
          table.insert(all, x)
        end
      end
      local next_cursor = type(res) == 'table' and res.nextCursor or nil
      -- A cursor pid gave twice would loop forever: stop there.
      if type(next_cursor) ~= 'string' or next_cursor == '' or seen[next_cursor] then
        return cb(nil, all, false)
      end
      if #all >= max then
        return cb(nil, all, true)
      end
      seen[next_cursor] = true
      page(next_cursor)
    end)
    if not ok then
      cb('could not send session/list to pid', nil, false)
    end
  end
  page(nil)
end

-- _list_sessions is list_sessions for tests (paging): cb(err, list, more).
function M._list_sessions(max, cb)
  ensure_started(function(err)
    if err ~= nil then
      return cb(err, nil, false)
    end
    list_sessions(S.client, max, cb)
  end)
end

-- load_session loads the saved session id (session/load) and makes it the current one: the
-- next :PidAsk continues it. It writes the transcript into the run buffer, as a live run
-- shows it, between a '[session] resumed ...' line and one saying :PidAsk continues it, and
-- closes the session it replaces (session/close: the file stays, another pid may load it).
-- opts.summary is the session's session/list entry, when known; opts.on_done(err, result)
-- gets pid's result or the error in words (also shown in the run buffer and notified). It
-- returns false, without calling on_done, while a prompt runs or another load is under way.
function M.load_session(id, opts)
  opts = opts or {}
  local function done(err, res)
    if opts.on_done then
      local ok, e = pcall(opts.on_done, err, res)
      if not ok then
        notify('on_done failed: ' .. tostring(e), vim.log.levels.ERROR)
      end
    end
  end
  if S.run ~= nil then
    notify('a prompt is running: wait for it or :PidCancel it, then load the session', vim.log.levels.WARN)
    return false
  end
  if S.loading then
    notify('a saved session is loading already', vim.log.levels.WARN)
    return false
  end
  if type(id) ~= 'string' or id == '' then
    notify('which session? (an id from :PidSessions)', vim.log.levels.WARN)
    return false
  end
  S.loading = true
  ensure_started(function(err)
    if err ~= nil then
      S.loading = false
      notify(err, vim.log.levels.ERROR)
      return done(err)
    end
    local client = S.client
    if not S.saves_sessions then
      S.loading = false
      local msg = 'this pid does not keep saved sessions (its initialize result does not declare them): update pid'
      notify(msg, vim.log.levels.ERROR)
      return done(msg)
    end
    local ok = client.request('session/load', { sessionId = id }, function(e, res)
      if S.client ~= client then
        return done('pid stopped while loading the session')
      end
      S.loading = false
      if e ~= nil or type(res) ~= 'table' or type(res.sessionId) ~= 'string' then
        local known = opts.summary or {}
        local msg = e ~= nil and sessions.load_error_text(e, id, known.cwd, S.workspace)
          or ('pid could not load the session ' .. id .. ': ' .. vim.inspect(res))
        pcall(view.show, config.open)
        view.append('[error] ' .. msg)
        notify(msg, vim.log.levels.ERROR)
        return done(msg)
      end
      local previous = S.session_id
      S.session_id = res.sessionId
      if previous ~= nil and previous ~= res.sessionId then
        client.request('session/close', { sessionId = previous }, function(ce)
          if ce ~= nil then
            view.append(string.format('[log] could not close the previous session %s: %s', previous, tostring(ce.message or ce)))
          end
        end)
      end
      local items = type(res.messages) == 'table' and res.messages or {}
      local n = 0
      for _, m in ipairs(items) do
        if type(m) == 'table' and m.role ~= 'compaction' then
          n = n + 1
        end
      end
      local title = opts.summary and sessions.title(opts.summary) or nil
      local where = opts.summary and type(opts.summary.cwd) == 'string' and (', in ' .. opts.summary.cwd) or ''
      local lines = { string.format('[session] resumed %s%s (%d message%s%s)', res.sessionId,
        title and string.format(' "%s"', title) or '', n, n == 1 and '' or 's', where) }
      vim.list_extend(lines, transcript_lines(items))
      table.insert(lines, '[session] end of the saved transcript: :PidAsk continues this session')
      local shown, serr = pcall(view.show, config.open)
      if not shown then
        notify('could not open the run buffer: ' .. tostring(serr), vim.log.levels.WARN)
      end
      if #view.lines() > 1 or view.lines()[1] ~= '' then
        table.insert(lines, 1, '')
      end
      view.append_lines(lines)
      done(nil, res)
    end)
    if not ok then
      S.loading = false
      done('could not send session/load to pid')
    end
  end)
  return true
end

-- sessions lists pid's saved sessions (session/list, newest first, up to
-- sessions.MAX_LISTED) in vim.ui.select (kind 'pid.session'; each item a session/list entry,
-- shown as "title | folder | when, N messages"), and loads the chosen one (load_session).
-- opts.on_done(err, result) is called at the end: result is session/load's, nil when nothing
-- was chosen. It starts pid when needed; false while a prompt runs.
function M.sessions(opts)
  opts = opts or {}
  local function done(err, res)
    if opts.on_done then
      local ok, e = pcall(opts.on_done, err, res)
      if not ok then
        notify('on_done failed: ' .. tostring(e), vim.log.levels.ERROR)
      end
    end
  end
  if S.run ~= nil then
    notify('a prompt is running: wait for it or :PidCancel it, then pick a session', vim.log.levels.WARN)
    return false
  end
  ensure_started(function(err)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return done(err)
    end
    if not S.saves_sessions then
      local msg = 'this pid does not keep saved sessions (its initialize result does not declare them): update pid'
      notify(msg, vim.log.levels.ERROR)
      return done(msg)
    end
    list_sessions(S.client, sessions.MAX_LISTED, function(lerr, list, more)
      if lerr ~= nil then
        notify(lerr, vim.log.levels.ERROR)
        return done(lerr)
      end
      if #list == 0 then
        notify('pid has no saved sessions yet')
        return done(nil, nil)
      end
      local fmt = {
        now = os.time(),
        home = (vim.uv or vim.loop).os_homedir(),
        current = S.session_id,
        workspace = S.workspace,
      }
      local prompt = more and string.format('Resume which session? (the newest %d)', #list) or 'Resume which session?'
      vim.ui.select(list, {
        prompt = prompt,
        kind = 'pid.session',
        format_item = function(x)
          return sessions.format_item(x, fmt)
        end,
      }, function(choice)
        if choice == nil then
          return done(nil, nil)
        end
        if not M.load_session(choice.sessionId, { summary = choice, on_done = done }) then
          done('the session was not loaded: a prompt runs or another session is loading')
        end
      end)
    end)
  end)
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
  S.creating, S.loading = false, false
  S.stopping = token
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
    loading = S.loading,
    saves_sessions = S.saves_sessions,
    workspace = S.workspace,
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
  c('PidSessions', function() M.sessions() end, { nargs = 0, desc = 'pid: resume a saved session' })
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
