-- pid's life in the editor: starting the process (lazily, at the first prompt) and
-- initialize; routing what it sends (notifications to the chat, requests to requests.lua,
-- withdrawals to the float); the current session (session/new, or session/load of a saved
-- one); :PidStop; and pid stopping unexpectedly: said in the chat, the session it held
-- resumed by :PidResume or the next prompt. The state is state.lua's.

local state = require('pid.state')
local rpc = require('pid.rpc')
local view = require('pid.view')
local approval = require('pid.approval')
local sessions = require('pid.sessions')
local chat = require('pid.chat')
local requests = require('pid.requests')
local modes = require('pid.modes')
local words = require('pid.words')
local children = require('pid.children')
local slash = require('pid.slash')
local diagnostics = require('pid.diagnostics')

local S = state.S
local notify = words.notify

local M = {}

-- VERSION is the plugin's version, sent in initialize's clientInfo.
M.VERSION = '0.2.0'

-- flush calls, once each, the callbacks waiting in S[list] ('init_waiters' or 'waiters').
local function flush(list, err)
  local w = S[list]
  S[list] = {}
  for _, cb in ipairs(w) do
    cb(err)
  end
end

-- exited handles the end of the pid process of token: a start that waited for it goes on; if
-- it was the current one (not stopped by :PidStop), the chat and a notification say so, and
-- its session is remembered for :PidResume when pid saved it.
local function exited(token, code, signal)
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
  local lost = {}
  for _, c in ipairs(state.convs) do
    lost[c] = c.session_id
  end
  S.stderr = S.client and S.client.stderr_tail() or S.stderr
  state.forget_process()
  S.crashed = true
  approval.withdraw(nil, true)
  local how = (signal ~= nil and signal ~= 0) and ('killed by signal ' .. tostring(signal)) or ('exit code ' .. tostring(code))
  flush('init_waiters', 'pid stopped (' .. how .. ')')
  local said
  -- Each conversation is told, in its chat; its session is kept for :PidResume.
  for _, c in ipairs(state.convs) do
    state.with(c, function()
      modes.refresh() -- the mode stays (a resume loads it), said to be of a stopped pid
      local msg
      if lost[c] ~= nil and S.saves_sessions then
        S.resume_id = lost[c]
        msg = string.format('pid stopped; the session was saved: :PidResume (or the next prompt) continues it (%s)', how)
      else
        msg = string.format('pid stopped (%s); the next prompt starts it again', how)
      end
      flush('waiters', msg)
      if S.run ~= nil then
        chat.finish_run(nil, msg, 'pid stopped before it ended')
      elseif lost[c] ~= nil or c == state.active or not c.chat.empty then
        view.append('[exit] ' .. msg)
      end
      if c == state.active or said == nil then
        said = msg
      end
    end)
  end
  notify(said, vim.log.levels.ERROR)
end

-- make_handlers returns the rpc handlers of one pid process; token tells that process apart
-- from a later one (after :PidStop or an exit): what an older one sends is ignored.
local function make_handlers(token)
  local h = {}

  function h.notification(method, params)
    if S.token ~= token then
      return
    end
    local fn = chat.notifications[method]
    if fn == nil then
      return
    end
    -- Routed by session: shown in the chat of the conversation it is of (a child's: of its
    -- task's); one of no session in the active one; one of a session no chat shows, nowhere.
    local sid = type(params) == 'table' and params.sessionId or nil
    local conv = state.of_session(sid)
    if sid ~= nil and conv == nil and not chat.GLOBAL[method] then
      return
    end
    state.with(conv, function()
      if not chat.GLOBAL[method] and not chat.ours(params) then
        -- A running child's (subagent's) notifications go under its task's card.
        children.route(method, params)
        return
      end
      fn(params or {})
    end)
  end

  -- pid withdraws a request it sent (the prompt was cancelled).
  function h.cancel(id)
    if S.token ~= token then
      return
    end
    S.withdrawals = S.withdrawals + 1
    approval.withdraw(nil, false, id)
  end

  function h.request(method, params, respond, id)
    if S.token ~= token then
      return respond(nil, { code = -32603, message = 'pid.nvim: stale process' })
    end
    -- Asked in the conversation of its session (a subagent's: of its parent's).
    local p = type(params) == 'table' and params or {}
    state.with(state.of_session(p.sessionId) or state.of_session(p.parentSessionId), requests.answer, method, params, respond, id)
  end

  function h.exit(code, signal)
    exited(token, code, signal)
  end

  return h
end

local start_process

-- ensure_started calls cb(err) once pid runs and is initialized; it starts pid if needed.
-- After :PidStop it starts the next pid once the stopped one has exited (at most 5 s): until
-- then that one holds its sessions' files, and the new one could not load them.
function M.ensure_started(cb)
  if S.client ~= nil and S.initialized then
    return cb(nil)
  end
  table.insert(S.init_waiters, state.bind(cb))
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
  local config = state.config
  local cwd = config.cwd or vim.fn.getcwd()
  local token = {}
  local client, err = rpc.start(config.cmd, make_handlers(token), { cwd = cwd, env = config.env })
  if client == nil then
    S.starting = false
    return flush('init_waiters', err)
  end
  S.client, S.token, S.exit, S.workspace = client, token, nil, cwd
  local uri = vim.uri_from_fname(cwd)
  -- usage: usageUpdate for the context meter; diagnostics: editor/diagnostics answered from
  -- vim.diagnostic (diagnostics.lua), unless setup{diagnostics = false}.
  -- networkApproval: network/allowHost answered in vim.ui.select (network.lua).
  local caps = { beforeToolCall = true, trust = true, usage = true, networkApproval = true }
  if config.buffers then
    caps.fs = { readTextFile = true, writeTextFile = true }
  end
  if config.diagnostics ~= false then
    caps.diagnostics = true
    diagnostics.watch()
  end
  local ok = client.request('initialize', {
    processId = vim.fn.getpid(),
    clientInfo = { name = 'pid.nvim', version = M.VERSION },
    rootUri = uri,
    workspaceFolders = { { uri = uri, name = vim.fn.fnamemodify(cwd, ':t') } },
    capabilities = { experimental = { pid = caps } },
    initializationOptions = config.init_options,
  }, function(e, res)
    if S.client ~= client then
      return
    end
    S.starting = false
    if e ~= nil then
      flush('init_waiters', 'initialize failed: ' .. words.error_text(e))
      return
    end
    S.initialized = true
    S.server_info = type(res) == 'table' and res.serverInfo or nil
    local rc = type(res) == 'table' and res.capabilities or nil
    local ex = type(rc) == 'table' and rc.experimental or nil
    S.saves_sessions = type(ex) == 'table' and type(ex.pid) == 'table' and ex.pid.sessions == true
    client.notify('initialized', vim.empty_dict())
    flush('init_waiters', nil)
  end)
  if not ok then
    S.starting = false
    flush('init_waiters', 'could not send initialize to pid')
  end
end

-- load calls session/load for id, makes it the current session and shows its transcript in
-- the chat (chat.show_loaded); cb(err in words, result). summary is the session's
-- session/list entry, when known. It closes the session it replaces (its file stays).
local function load(id, summary, cb)
  local client = S.client
  local ok = client.request('session/load', { sessionId = id }, function(e, res)
    if S.client ~= client then
      return cb('pid stopped while loading the session')
    end
    if e ~= nil or type(res) ~= 'table' or type(res.sessionId) ~= 'string' then
      local known = summary or {}
      local msg = e ~= nil and sessions.load_error_text(e, id, known.cwd, S.workspace)
        or ('pid could not load the session ' .. id .. ': ' .. vim.inspect(res))
      return cb(msg)
    end
    local previous = S.session_id
    S.session_id = res.sessionId
    S.resume_id = nil
    if summary and type(summary.title) == 'string' then
      state.active.title = summary.title:sub(1, 60)
    end
    if previous ~= nil and previous ~= res.sessionId then
      client.request('session/close', { sessionId = previous }, function(ce)
        if ce ~= nil then
          view.append(string.format('[log] could not close the previous session %s: %s', previous, tostring(ce.message or ce)))
        end
      end)
    end
    modes.from_result(res.modes)
    chat.show_loaded(res, summary)
    slash.refresh()
    cb(nil, res)
  end)
  if not ok then
    cb('could not send session/load to pid')
  end
end

-- session_params returns session/new's params: setup's `session` (and `model`), then
-- new_session's, over the cwd.
local function session_params()
  local config = state.config
  local base = vim.deepcopy(config.session or {})
  if config.model ~= nil and base.model == nil then
    base.model = config.model
  end
  return vim.tbl_extend('force', { cwd = vim.fn.getcwd() }, base, S.session_override or {})
end

-- create sends session/new to client; the session waiters learn how it went.
local function create(client)
  local params = session_params()
  client.request('session/new', params, function(err, res)
    if S.client ~= client then
      return
    end
    S.creating = false
    if err ~= nil or type(res) ~= 'table' or type(res.sessionId) ~= 'string' then
      flush('waiters', 'session/new failed: ' .. (err and words.error_text(err) or vim.inspect(res)))
      return
    end
    S.session_id = res.sessionId
    S.prompts = {}
    modes.from_result(res.modes)
    S.region = { start = S.region_pending or view.count(), session = res.sessionId }
    S.region_pending = nil
    -- Under the prompt's header (it shows before the session is made): the files the model
    -- reads before it.
    local said = chat.remember_instructions(res.sessionId, res.instructions, { S.workspace, params.cwd })
    if said ~= nil then
      view.append(said)
    end
    slash.refresh()
    flush('waiters', nil)
  end)
end

-- ensure calls cb(err) once pid runs, is initialized and has a session; it starts what is
-- missing. After pid stopped unexpectedly, the session it held is loaded again (not a new
-- one): the conversation goes on.
function M.ensure(cb)
  if S.client ~= nil and S.session_id ~= nil then
    return cb(nil)
  end
  table.insert(S.waiters, cb)
  if S.creating then
    return
  end
  S.creating = true
  M.ensure_started(function(err)
    if err ~= nil then
      S.creating = false
      return flush('waiters', err)
    end
    if S.resume_id ~= nil then
      local id = S.resume_id
      load(id, nil, function(lerr)
        if lerr == nil then
          S.creating = false
          return flush('waiters', nil)
        end
        S.resume_id = nil
        view.append('[session] could not resume ' .. id .. ': ' .. lerr .. '; a new session starts')
        create(S.client)
      end)
      return
    end
    create(S.client)
  end)
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
  S.resume_id = nil
  state.active.title = nil
  modes.forget()
  return true
end

-- load_session loads the saved session id (session/load) and makes it the current one: the
-- next prompt continues it. It writes the transcript into the chat, as a live run shows it,
-- and closes the session it replaces (session/close: the file stays). opts.summary is the
-- session's session/list entry, when known; opts.on_done(err, result) gets pid's result or
-- the error in words (also shown in the chat and notified). It returns false, without
-- calling on_done, while a prompt runs or another load is under way.
function M.load_session(id, opts)
  opts = opts or {}
  local done = words.caller(opts)
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
  M.ensure_started(function(err)
    if err ~= nil then
      S.loading = false
      notify(err, vim.log.levels.ERROR)
      return done(err)
    end
    if not S.saves_sessions then
      S.loading = false
      local msg = 'this pid does not keep saved sessions (its initialize result does not declare them): update pid'
      notify(msg, vim.log.levels.ERROR)
      return done(msg)
    end
    local client = S.client
    load(id, opts.summary, function(msg, res)
      if S.client == client then
        S.loading = false
      end
      if msg ~= nil then
        pcall(view.show, state.config.open)
        view.append('[error] ' .. msg)
        notify(msg, vim.log.levels.ERROR)
        return done(msg)
      end
      done(nil, res)
    end)
  end)
  return true
end

-- resume starts pid again after it stopped unexpectedly and loads the session it held
-- (session/load of the same id). opts.on_done(err, result) as load_session's. false when
-- there is nothing to resume.
function M.resume(opts)
  local id = S.resume_id
  if id == nil then
    notify('nothing to resume: pid did not stop unexpectedly (:PidSessions lists saved sessions)', vim.log.levels.WARN)
    return false
  end
  return M.load_session(id, opts)
end

-- stop shuts pid down (shutdown, then exit); it starts again at the next prompt.
function M.stop()
  local client, token = S.client, S.token
  if client == nil then
    return false
  end
  -- Forget this process now: the next prompt starts a new one. A running prompt still gets
  -- its answer (pid cancels it and answers before it answers shutdown).
  state.forget_process()
  S.stopping = token
  S.crashed = false
  flush('init_waiters', 'pid was stopped')
  approval.withdraw(nil, true)
  for _, c in ipairs(state.convs) do
    state.with(c, function()
      modes.forget()
      flush('waiters', 'pid was stopped')
      if S.run ~= nil then
        chat.finish_run(nil, 'pid was stopped', 'pid was stopped before it ended')
      end
    end)
  end
  local ok = client.request('shutdown', nil, function()
    client.notify('exit', nil)
  end)
  if not ok then
    client.kill()
  end
  -- pid answers shutdown once running prompts have ended; do not wait forever.
  vim.defer_fn(function()
    if not token.exited then
      client.kill()
    end
  end, 5000)
  return true
end

return M
