-- pid.nvim: the pid coding agent in Neovim.
--
--   require("pid").setup{ model = { provider = "anthropic", id = "claude-sonnet-4-5" } }
--   :PidChat            the chat and its prompt window (Enter sends; during a run: steer)
--   :[range]PidAsk[!] [q] run a prompt; with a range (:'<,'>PidAsk) the selection goes with it,
--                     with ! the buffer's diagnostics, with @path in q a link to that file
--   :PidSteer text      a message for the running prompt, taken after the current tools
--   :PidFollowUp text   a message taken when the running prompt would stop
--   :PidApproval        go to the open approval (a allow, A always, d deny, q dismiss)
--   :PidCancel          cancel the running prompt
--   :PidNew             start a new session (conversation) at the next prompt
--   :PidSessions        pick a saved session and continue it
--   :PidModel           pick the session's model (models/list, session/setModel)
--   :PidPermissions     list the remembered "always" answers and revoke one
--   :PidResume          after pid stopped unexpectedly: start it again, same session
--   :PidShow            show the chat
--   :PidStop            shut pid down (it starts again at the next prompt)
--
-- pid is started lazily, at the first prompt, and spoken to over stdio (JSON-RPC 2.0 with LSP
-- framing, pid/rpc.lua; see docs/protocol.md in pid's repository). Neovim 0.7+.

local rpc = require('pid.rpc')
local view = require('pid.view')
local approval = require('pid.approval')
local sessions = require('pid.sessions')
local files = require('pid.files')

local M = {}

M.version = '0.2.0'

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
  -- The model of new sessions (session/new's model), e.g. { provider = "anthropic", id =
  -- "claude-sonnet-4-5" }; same as session.model. nil: pid's settings files decide.
  model = nil,
  -- session/new params: model, permissions, toolExecution, systemPrompt, scriptedTools...
  -- `cwd` defaults to Neovim's cwd when the session starts.
  session = {},
  -- How the chat is shown when no window of the tab shows it: an Ex command that opens a
  -- window (the buffer is put in it), or a function returning one; false: do not open one.
  -- Default: a window on the right, 40% of the editor's width (between 40 and 90 columns).
  open = nil,
  -- Let pid read and write files through Neovim's buffers (unsaved changes seen, edits land
  -- in the buffer). false: pid uses the disk, and buffers are reloaded after its tools ran.
  buffers = true,
}

local config = vim.deepcopy(defaults)

-- S is the plugin's state: one pid process, one current session, at most one running prompt.
local S = {
  client = nil, -- the rpc client while pid runs
  starting = false, -- pid is starting: initialize is in flight
  creating = false, -- session/new (or the resume's session/load) is in flight
  loading = false, -- session/load is in flight (:PidSessions)
  initialized = false,
  server_info = nil,
  saves_sessions = false, -- initialize's capabilities.experimental.pid.sessions
  workspace = nil, -- the workspace folder pid was started with
  session_id = nil,
  session_override = nil, -- params for the next session/new (new_session(opts))
  resume_id = nil, -- the session pid held when it stopped unexpectedly (:PidResume)
  init_waiters = {}, -- callbacks waiting for pid to be initialized: fun(err)
  stopping = nil, -- the token of a pid :PidStop stopped that has not exited yet
  waiters = {}, -- callbacks waiting for a session: fun(err)
  run = nil, -- the running prompt: {text, id?, session, cancelled, on_done}
  runs = 0, -- finished runs
  last_result = nil, -- the last session/prompt result
  last_error = nil, -- the last run's error message, if it failed
  exit = nil, -- {code, signal} of the last pid process that exited
  crashed = false, -- the last pid exited without :PidStop
  withdrawals = 0, -- requests pid withdrew ($/cancelRequest from pid)
  token = nil, -- identifies the current pid process (see make_handlers)
  fs_reads = 0, -- fs/read_text_file requests answered
  fs_writes = 0, -- fs/write_text_file requests answered
  -- The part of the chat that shows the current session: {start = its first line (0-based),
  -- session = its id}. Loading that session again (:PidResume after pid stopped) replaces
  -- that part instead of showing the conversation twice.
  region = nil,
  region_pending = nil, -- where the next new session's part starts, when a prompt shows first
}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'pid' })
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

-- error_text says a pid error in words. Setup problems (error.data.reason) name what to
-- change here: setup{model=...} and the settings file, never protocol fields.
local function error_text(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local said = tostring(err.message or vim.inspect(err))
  local d = type(err.data) == 'table' and err.data or {}
  local file = d.file or '~/.config/pid/settings.json'
  local example = 'require("pid").setup{model = {provider = "anthropic", id = "claude-sonnet-4-5"}}'
  if d.reason == 'noModel' then
    return string.format('pid has no model: pick one with :PidModel, or set it with %s, or "model" in %s. (pid says: %s)', example, file, said)
  elseif d.reason == 'apiKeyMissing' then
    local v = d.variable or 'the API key variable'
    return string.format('the model needs its API key in %s: export %s=... in the shell you start Neovim from (or setup{env = {%s = ...}}), then :PidStop so that pid starts again with it; or name the variable in apiKeyEnv of setup{model=...} or "model" in %s. (pid says: %s)',
      v, v, v, file, said)
  elseif d.reason == 'invalidModel' then
    local where = d.file and string.format('"model" in %s', d.file) or 'setup{model=...} (or the model you picked with :PidModel)'
    return string.format('the model setting is not usable%s: fix %s. (pid says: %s)', d.field and (' (its "' .. d.field .. '")') or '', where, said)
  elseif d.reason == 'untrustedSetting' then
    return string.format('the workspace folder %s sets "%s" in %s, but it is not trusted, so pid ignores it: trust the folder when pid asks, or set setup{model=...} or "model" in ~/.config/pid/settings.json. (pid says: %s)',
      tostring(d.folder or '?'), tostring(d.setting or 'model'), tostring(d.file or '.pid/settings.json'), said)
  end
  return said
end
M._error_text = error_text

-- Lines shared by a live run (pid's notifications) and a loaded transcript (session/load's
-- items), so that both read the same.

-- card_head is a tool call's card line: what it does, in a person's words.
local function card_head(name, args)
  name = tostring(name)
  if type(args) == 'table' and type(args.command) == 'string' then
    local first = view.lines_of(args.command)
    local cmd = first[1]
    if #first > 1 or vim.fn.strchars(cmd) > 60 then
      cmd = vim.fn.strcharpart(cmd, 0, 60) .. '...' -- the whole command is in the float and in <CR>'s view
    end
    return string.format('[tool] %s $ %s', name, cmd)
  end
  if type(args) == 'table' and type(args.path) == 'string' then
    return string.format('[tool] %s %s', name, args.path)
  end
  return string.format('[tool] %s %s', name, approval.short_json(args or vim.empty_dict(), 160))
end

-- card_result returns a finished call's status and the line its card shows: the last line of
-- its output (where test results are), or the first line of an error (what went wrong).
local function card_result(content, details, is_error, name)
  local s = text_of(content):gsub('[\r\n]+$', '')
  if name == 'read' and not is_error and type(details) == 'table' and type(details.totalLines) == 'number' then
    -- A file's last line says nothing about the read: say how much of it was read.
    local d = details
    if type(d.startLine) == 'number' and type(d.endLine) == 'number' and (d.startLine > 1 or d.endLine < d.totalLines) then
      return 'ok', string.format('lines %d-%d of %d', d.startLine, d.endLine, d.totalLines), s
    end
    return 'ok', string.format('%d line%s', d.totalLines, d.totalLines == 1 and '' or 's'), s
  end
  if s == '' and details ~= nil and details ~= vim.NIL then
    s = approval.short_json(details, 160)
  end
  if is_error then
    return 'error', view.latest_line(view.lines_of(s)[1] or ''), s
  end
  return 'ok', view.latest_line(s), s
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

local function card_key(params_or_session, id)
  local session = type(params_or_session) == 'table' and params_or_session.sessionId or params_or_session
  return tostring(session) .. '/' .. tostring(id)
end

-- file_conflict says in the chat that path changed on disk (state 'changed') or was deleted
-- ('deleted') while its buffer has unsaved changes, and what the person can do.
local function file_conflict(path, state)
  if state == 'deleted' then
    view.append(string.format('[file] %s was deleted on disk while its buffer has unsaved changes: :w keeps yours', path))
    return
  end
  view.append(string.format('[file] %s changed on disk while its buffer has unsaved changes: :e! takes the disk version, :w! keeps yours', path))
end

-- reload_buffers reloads buffers whose file a tool changed on disk (no W11); a buffer with
-- unsaved changes is left alone and said in the chat.
local function reload_buffers()
  files.reload(file_conflict)
end

-- UNFINISHED are the statuses of a card whose call has not ended.
local UNFINISHED = { queued = true, waiting = true, running = true }

-- end_cards marks the cards of run's calls that pid never ended (it stopped, or was stopped)
-- as cancelled, saying why: no card of a finished run stays "running".
local function end_cards(run, why)
  for key in pairs(run.cards or {}) do
    local c = view.card(key)
    if c ~= nil and UNFINISHED[c.status] then
      view.card_set(key, 'cancelled', why)
    end
  end
end

-- finish ends the running prompt with its result or an error message. why, when given, says
-- why calls that did not end never will (else: the run ended before they did).
local function finish(result, err, why)
  local run = S.run
  if run == nil then
    return
  end
  S.run = nil
  S.runs = S.runs + 1
  approval.withdraw(run.session)
  end_cards(run, why or 'the run ended before it did')
  reload_buffers()
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
  local key = card_key(p, p.toolCallId)
  view.card_start(key, card_head(p.toolName, p.args), 'queued')
  if S.run ~= nil and S.run.cards ~= nil then
    S.run.cards[key] = true
  end
end

handlers['toolExecutionStart'] = function(p)
  view.card_set(card_key(p, p.toolCallId), 'running', '')
end

handlers['$/toolUpdate'] = function(p)
  local r = p.partialResult or {}
  local s = text_of(r.content):gsub('…$', '')
  if s == '' and r.details ~= nil and r.details ~= vim.NIL then
    s = approval.short_json(r.details, 160)
  end
  view.card_set(card_key(p, p.toolCallId), 'running', view.latest_line(s), s)
end

handlers['toolEnd'] = function(p)
  local r = p.result or {}
  local status, latest, full = card_result(r.content, r.details, p.isError, p.toolName)
  view.card_set(card_key(p, p.toolCallId), status, latest, full)
  if p.toolName ~= 'read' and p.toolName ~= 'grep' and p.toolName ~= 'find' and p.toolName ~= 'ls' then
    reload_buffers()
  end
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

local GLOBAL = { ['window/logMessage'] = true, ['window/showMessage'] = true, ['mcp/serverStatus'] = true }

-- session_dir is the folder relative paths of a session's tools start from.
local function session_dir()
  return (S.session_override or {}).cwd or (config.session or {}).cwd or S.workspace or vim.fn.getcwd()
end

local function resolve(path)
  if path:sub(1, 1) == '/' then
    return path
  end
  return session_dir() .. '/' .. path
end

-- make_handlers returns the rpc handlers of one pid process; token tells that process apart
-- from a later one (after :PidStop or an exit).
local function make_handlers(token)
  local h = {}

  function h.notification(method, params)
    if S.token ~= token then
      return
    end
    local fn = handlers[method]
    if fn == nil then
      return
    end
    if not GLOBAL[method] and not ours(params) then
      return
    end
    fn(params or {})
  end

  -- pid withdraws a request it sent (the prompt was cancelled).
  function h.cancel(id)
    if S.token ~= token then
      return
    end
    S.withdrawals = S.withdrawals + 1
    approval.withdraw(nil, false, id)
  end

  local function line_for(params)
    return function(s)
      if ours(params) then
        view.append(s)
      end
    end
  end

  function h.request(method, params, respond, id)
    if S.token ~= token then
      return respond(nil, { code = -32603, message = 'pid.nvim: stale process' })
    end
    params = params or {}
    if method == 'beforeToolCall' then
      local key = card_key(params, params.toolCallId)
      view.card_set(key, 'waiting', 'waiting for your answer: :PidApproval')
      approval.before(params, {
        request_id = id,
        read = files.text,
        resolve = resolve,
        on_line = line_for(params),
        respond = function(answer)
          view.card_set(key, answer.decision == 'deny' and 'queued' or 'running', '')
          respond(answer)
        end,
      })
      notify('pid asks before running ' .. tostring(params.toolName) .. ': :PidApproval to answer')
    elseif method == 'workspace/requestTrust' then
      approval.trust(params, { request_id = id, on_line = line_for(params), respond = respond })
      notify('pid asks whether to trust this folder: :PidApproval to answer')
    elseif method == 'fs/read_text_file' then
      S.fs_reads = S.fs_reads + 1
      respond(files.read(params, file_conflict))
    elseif method == 'fs/write_text_file' then
      S.fs_writes = S.fs_writes + 1
      local ok, err = files.write(params, file_conflict)
      if ok then
        respond(nil)
      else
        respond(nil, err)
      end
    elseif method == 'window/showMessageRequest' then
      local titles = {}
      for _, a in ipairs(params.actions or {}) do
        table.insert(titles, tostring(a.title))
      end
      vim.ui.select(titles, { prompt = tostring(params.message or 'pid') .. ': ', kind = 'pid.message' }, function(choice, idx)
        respond(idx and params.actions[idx] or vim.NIL)
      end)
    elseif method == 'elicitation/create' then
      respond({ action = 'decline' })
    else
      respond(nil, { code = -32601, message = 'pid.nvim does not handle ' .. tostring(method) })
    end
  end

  function h.exit(code, signal)
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
    local lost = S.session_id
    S.stderr = S.client and S.client.stderr_tail() or S.stderr
    S.token, S.client, S.starting, S.initialized, S.session_id = nil, nil, false, false, nil
    S.creating, S.loading = false, false
    S.crashed = true
    approval.withdraw(nil, true)
    local how = (signal ~= nil and signal ~= 0) and ('killed by signal ' .. tostring(signal)) or ('exit code ' .. tostring(code))
    local msg
    if lost ~= nil and S.saves_sessions then
      S.resume_id = lost
      msg = string.format('pid stopped; the session was saved: :PidResume (or the next prompt) continues it (%s)', how)
    else
      msg = string.format('pid stopped (%s); the next prompt starts it again', how)
    end
    fail_waiters(msg)
    if S.run ~= nil then
      finish(nil, msg, 'pid stopped before it ended')
    else
      view.append('[exit] ' .. msg)
    end
    notify(msg, vim.log.levels.ERROR)
  end

  return h
end

local function session_params()
  local base = vim.deepcopy(config.session or {})
  if config.model ~= nil and base.model == nil then
    base.model = config.model
  end
  return vim.tbl_extend('force', { cwd = vim.fn.getcwd() }, base, S.session_override or {})
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
  local client, err = rpc.start(config.cmd, make_handlers(token), { cwd = cwd, env = config.env })
  if client == nil then
    S.starting = false
    return flush('init_waiters', err)
  end
  S.client, S.token, S.exit, S.workspace = client, token, nil, cwd
  local uri = vim.uri_from_fname(cwd)
  local caps = { beforeToolCall = true, trust = true }
  if config.buffers then
    caps.fs = { readTextFile = true, writeTextFile = true }
  end
  local ok = client.request('initialize', {
    processId = vim.fn.getpid(),
    clientInfo = { name = 'pid.nvim', version = M.version },
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
      flush('init_waiters', 'initialize failed: ' .. error_text(e))
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

-- transcript_entries renders a loaded session's items (session/load's messages) as a live
-- run shows them: each user text as a '>>>' header after a blank line, the assistant's text, a
-- card for each tool call with its result, '[done] <stopReason>' where the assistant stopped,
-- and each compaction with its summary. Unknown items are skipped. An entry is a line or a
-- card {key, head, status, latest, output}.
local function transcript_entries(items, session)
  local out = {}
  local open = false -- an exchange that has not ended yet
  local aborted = false -- its last tool result is pid's "Operation aborted"
  local cards = {}
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
            local card = { key = card_key(session, c.id), head = card_head(c.name, c.arguments), status = 'queued', latest = '', name = c.name }
            cards[tostring(c.id)] = card
            table.insert(out, card)
          end
        end
        -- The run stops at an answer without tool calls, a failed call and a cancel; a reply
        -- cut off with tool calls goes on (their results ask the model again).
        if calls == 0 or m.stopReason == 'aborted' or m.stopReason == 'error' then
          table.insert(out, done_line(m.stopReason or 'stop'))
          open = false
        end
      elseif m.role == 'toolResult' then
        local card = cards[tostring(m.toolCallId)]
        if card == nil then
          card = { key = card_key(session, m.toolCallId), head = card_head(m.toolName or 'tool', nil), status = 'queued', latest = '' }
          table.insert(out, card)
        end
        card.status, card.latest, card.output = card_result(m.content, m.details, m.isError, m.toolName or card.name)
        aborted = m.isError == true and text_of(m.content) == 'Operation aborted'
      elseif m.role == 'compaction' then
        vim.list_extend(out, compacted_lines(m.reason, m.tokensBefore, m.summary))
      end
    end
  end
  unfinished()
  return out
end

-- card_text is a card as a line of text, as the chat shows it.
local function card_text(c)
  return c.head .. '  ' .. c.status .. ((c.latest ~= nil and c.latest ~= '') and (' · ' .. c.latest) or '')
end
M._card_text = card_text

-- _transcript_lines: the transcript as the chat shows it (cards with their status), for tests.
function M._transcript_lines(items)
  local out = {}
  for _, e in ipairs(transcript_entries(items, 'x')) do
    table.insert(out, type(e) == 'table' and card_text(e) or e)
  end
  return out
end

-- show_entries appends transcript entries to the chat: the lines in one change, then the cards.
local function show_entries(entries)
  local chunk = {}
  for _, e in ipairs(entries) do
    if type(e) == 'table' then
      if #chunk > 0 then
        view.append_lines(chunk)
        chunk = {}
      end
      view.card_start(e.key, e.head, e.status)
      view.card_set(e.key, e.status, e.latest, e.output)
    else
      table.insert(chunk, e)
    end
  end
  if #chunk > 0 then
    view.append_lines(chunk)
  end
end

-- load calls session/load for id and shows its transcript in the chat between a '[session]
-- resumed ...' line and one saying the next prompt continues it; cb(err in words, result).
-- summary is the session's session/list entry, when known. It closes the session it replaces.
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
    -- The chat shows this session already (pid stopped under it, or it is loaded again):
    -- its transcript replaces what was shown of it, from where that began.
    if S.region ~= nil and S.region.session == res.sessionId then
      view.truncate(S.region.start)
    else
      S.region = { start = view.count(), session = res.sessionId }
    end
    local title = summary and sessions.title(summary) or nil
    local where = summary and type(summary.cwd) == 'string' and (', in ' .. summary.cwd) or ''
    local entries = { string.format('[session] resumed %s%s (%d message%s%s)', res.sessionId,
      title and string.format(' "%s"', title) or '', n, n == 1 and '' or 's', where) }
    vim.list_extend(entries, transcript_entries(items, res.sessionId))
    table.insert(entries, '[session] end of the saved transcript: the next prompt continues this session')
    local shown, serr = pcall(view.show, config.open)
    if not shown then
      notify('could not open the chat: ' .. tostring(serr), vim.log.levels.WARN)
    end
    if #view.lines() > 1 or view.lines()[1] ~= '' then
      table.insert(entries, 1, '')
    end
    show_entries(entries)
    cb(nil, res)
  end)
  if not ok then
    cb('could not send session/load to pid')
  end
end

local function new_session(client)
  client.request('session/new', session_params(), function(err, res)
    if S.client ~= client then
      return
    end
    S.creating = false
    if err ~= nil or type(res) ~= 'table' or type(res.sessionId) ~= 'string' then
      flush('waiters', 'session/new failed: ' .. (err and error_text(err) or vim.inspect(res)))
      return
    end
    S.session_id = res.sessionId
    S.region = { start = S.region_pending or view.count(), session = res.sessionId }
    S.region_pending = nil
    flush('waiters', nil)
  end)
end

-- ensure calls cb(err) once pid runs, is initialized and has a session; it starts what is
-- missing. After pid stopped unexpectedly, the session it held is loaded again (not a new
-- one): the conversation goes on.
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
    if S.resume_id ~= nil then
      local id = S.resume_id
      load(id, nil, function(lerr)
        if lerr == nil then
          S.creating = false
          return flush('waiters', nil)
        end
        S.resume_id = nil
        view.append('[session] could not resume ' .. id .. ': ' .. lerr .. '; a new session starts')
        new_session(S.client)
      end)
      return
    end
    new_session(S.client)
  end)
end

-- file_uri returns the file:// URI of buffer buf's file, or an untitled: name.
local function buffer_uri(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' then
    return 'untitled:' .. buf, '[No Name]'
  end
  local abs = vim.fn.fnamemodify(name, ':p')
  return vim.uri_from_fname(abs), vim.fn.fnamemodify(abs, ':~:.')
end

-- selection returns a resource block with lines first..last (1-based) of buffer buf, the
-- range in the URI's fragment, and how the chat names it.
function M.selection(buf, first, last)
  local lines = vim.api.nvim_buf_get_lines(buf, first - 1, last, false)
  local uri, shown = buffer_uri(buf)
  local frag = first == last and string.format('#L%d', first) or string.format('#L%d-L%d', first, last)
  local block = { type = 'resource', resource = { uri = uri .. frag, text = table.concat(lines, '\n') .. '\n' } }
  local ft = vim.bo[buf].filetype
  if ft ~= nil and ft ~= '' then
    block.resource.mimeType = 'text/x-' .. ft
  end
  local label = first == last and string.format('%s line %d', shown, first) or string.format('%s lines %d-%d', shown, first, last)
  return block, label
end

-- mentions returns a resource_link block for each @path in text that names a readable file
-- (relative to the session's folder, or absolute), once each, and how the chat names them.
function M.mentions(text)
  local blocks, labels, seen = {}, {}, {}
  for word in tostring(text):gmatch('@([^%s]+)') do
    local p = word:gsub('[,;:!?%)%]\'"]+$', ''):gsub('%.$', '')
    if p ~= '' and not seen[p] then
      seen[p] = true
      local abs = resolve(p)
      if vim.fn.filereadable(abs) == 1 then
        table.insert(blocks, { type = 'resource_link', uri = vim.uri_from_fname(vim.fn.fnamemodify(abs, ':p')), name = p })
        table.insert(labels, '@' .. p)
      end
    end
  end
  return blocks, labels
end

-- diagnostics returns a text block with buffer buf's diagnostics (vim.diagnostic), one a
-- line as path:line:col: severity: message, and how the chat names it.
function M.diagnostics(buf)
  local _, shown = buffer_uri(buf)
  local list = vim.diagnostic.get(buf)
  table.sort(list, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  local lines = { string.format('Diagnostics Neovim shows for %s (%d):', shown, #list) }
  for _, d in ipairs(list) do
    local sev = vim.diagnostic.severity[d.severity] or tostring(d.severity)
    table.insert(lines, string.format('%s:%d:%d: %s: %s%s', shown, d.lnum + 1, d.col + 1, tostring(sev):lower(),
      tostring(d.message):gsub('\n', ' '), d.source and (' [' .. tostring(d.source) .. ']') or ''))
  end
  return { type = 'text', text = table.concat(lines, '\n') }, string.format('diagnostics of %s (%d)', shown, #list)
end

-- ask runs a prompt. opts.content: more content blocks (ACP shapes) sent after the text;
-- opts.context: lines saying what they are, for the chat; opts.on_done(err, result) is called
-- when it ends (result is session/prompt's: {stopReason, messages, terminated?}).
function M.ask(text, opts)
  opts = opts or {}
  if type(text) ~= 'string' or text:match('^%s*$') then
    notify('nothing to ask', vim.log.levels.WARN)
    return false
  end
  if S.run ~= nil then
    notify('a prompt is running: :PidSteer or :PidFollowUp add to it, :PidCancel stops it', vim.log.levels.WARN)
    return false
  end
  if S.loading then
    notify('a saved session is loading: wait a moment, then ask again', vim.log.levels.WARN)
    return false
  end
  local links, linked = M.mentions(text)
  if #links > 0 then
    opts = vim.tbl_extend('force', {}, opts)
    opts.content = vim.list_extend(vim.list_slice(opts.content or {}, 1, #(opts.content or {})), links)
    opts.context = vim.list_extend(vim.list_slice(opts.context or {}, 1, #(opts.context or {})), linked)
  end
  local run = { text = text, on_done = opts.on_done, cards = {} }
  S.run = run
  local shown, serr = pcall(view.show, config.open)
  if not shown then
    notify('could not open the chat: ' .. tostring(serr), vim.log.levels.WARN)
  end
  local function header()
    view.header(text)
    for _, c in ipairs(opts.context or {}) do
      view.append('[context] ' .. c)
    end
  end
  -- After a crash the session is loaded first: its transcript goes before this prompt.
  local resuming = S.resume_id ~= nil and S.session_id == nil
  if S.session_id == nil and not resuming then
    S.region_pending = view.count() -- a new session: its part of the chat starts here
  end
  if not resuming then
    header()
  end
  ensure(function(err)
    if S.run ~= run then
      return
    end
    if resuming then
      header()
    end
    if err ~= nil then
      return finish(nil, err)
    end
    if run.cancelled then
      return finish({ stopReason = 'aborted', messages = {} }, nil)
    end
    run.session = S.session_id
    local client = S.client
    local params = { sessionId = S.session_id, text = text }
    if opts.content ~= nil and #opts.content > 0 then
      params.content = opts.content
    end
    local ok, id = client.request('session/prompt', params, function(e, res)
      if S.run ~= run then
        return
      end
      if e ~= nil then
        -- -32099: the rpc client's answer to requests still open when pid exited.
        return finish(nil, error_text(e), e.code == -32099 and 'pid stopped before it ended' or nil)
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

-- queue sends text to the running prompt: method 'session/steer' (taken after the current
-- tools) or 'session/followUp' (taken when it would stop). Without a running prompt it asks
-- (a prompt of its own). It returns false when there is nothing to send.
local function queue(method, tag, text, opts)
  if type(text) ~= 'string' or text:match('^%s*$') then
    notify('nothing to send', vim.log.levels.WARN)
    return false
  end
  local run = S.run
  if run == nil or run.session == nil or S.client == nil then
    return M.ask(text, opts)
  end
  view.append(string.format('[%s] %s', tag, text))
  local params = { sessionId = run.session, text = text }
  if opts and opts.content then
    params.content = opts.content
  end
  S.client.request(method, params, function(e)
    if e ~= nil then
      view.append(string.format('[error] %s was not sent: %s', tag, error_text(e)))
    end
  end)
  return true
end

-- steer gives the running prompt a message taken after its current tools; follow_up one
-- taken when it would stop. Without a running prompt both run text as a prompt.
function M.steer(text, opts)
  return queue('session/steer', 'steer', text, opts)
end

-- follow_up: see steer.
function M.follow_up(text, opts)
  return queue('session/followUp', 'follow-up', text, opts)
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
  S.resume_id = nil
  return true
end

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

-- on_done_caller returns a function(err, res) that calls opts.on_done, when given, with them
-- (a callback that fails is reported, not raised).
local function on_done_caller(opts)
  return function(err, res)
    if opts.on_done then
      local ok, e = pcall(opts.on_done, err, res)
      if not ok then
        notify('on_done failed: ' .. tostring(e), vim.log.levels.ERROR)
      end
    end
  end
end

-- load_session loads the saved session id (session/load) and makes it the current one: the
-- next prompt continues it. It writes the transcript into the chat, as a live run shows it,
-- and closes the session it replaces (session/close: the file stays). opts.summary is the
-- session's session/list entry, when known; opts.on_done(err, result) gets pid's result or
-- the error in words (also shown in the chat and notified). It returns false, without
-- calling on_done, while a prompt runs or another load is under way.
function M.load_session(id, opts)
  opts = opts or {}
  local done = on_done_caller(opts)
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
        pcall(view.show, config.open)
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

-- sessions lists pid's saved sessions (session/list, newest first, up to
-- sessions.MAX_LISTED) in vim.ui.select (kind 'pid.session'; each item a session/list entry,
-- shown as "title | folder | when, N messages"), and loads the chosen one (load_session).
-- opts.on_done(err, result) is called at the end: result is session/load's, nil when nothing
-- was chosen. It starts pid when needed; false while a prompt runs.
function M.sessions(opts)
  opts = opts or {}
  local done = on_done_caller(opts)
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

-- model_label is a models/list entry as a person reads it.
local function model_label(m)
  if type(m) ~= 'table' then
    return '?'
  end
  local id = tostring(m.provider)
  if type(m.id) == 'string' and m.id ~= '' then
    id = id .. '/' .. m.id
  end
  if type(m.name) == 'string' and m.name ~= '' then
    return m.name .. ' (' .. id .. ')'
  end
  return id
end
M._model_label = model_label

-- models calls cb(err in words, {models, current}) with models/list for the current session
-- (starting pid and a session when needed).
function M.models(cb)
  ensure(function(err)
    if err ~= nil then
      return cb(err)
    end
    S.client.request('models/list', { sessionId = S.session_id }, function(e, res)
      if e ~= nil then
        return cb('models/list failed: ' .. error_text(e))
      end
      cb(nil, type(res) == 'table' and res or { models = {} })
    end)
  end)
end

-- set_model makes model ({provider, id}) the current session's model from its next model
-- call on (session/setModel); cb(err in words) when pid answered.
function M.set_model(model, cb)
  cb = cb or function() end
  ensure(function(err)
    if err ~= nil then
      return cb(err)
    end
    S.client.request('session/setModel', { sessionId = S.session_id, model = { provider = model.provider, id = model.id } }, function(e)
      if e ~= nil then
        local msg = error_text(e)
        view.append('[error] the model was not changed: ' .. msg)
        notify(msg, vim.log.levels.ERROR)
        return cb(msg)
      end
      view.append('[model] ' .. model_label(model) .. ' from the next model call on')
      cb(nil)
    end)
  end)
end

-- pick_model lists the models (models/list) in vim.ui.select (kind 'pid.model') and sets the
-- chosen one. opts.on_done(err, model) at the end (model nil when nothing was chosen).
function M.pick_model(opts)
  opts = opts or {}
  local done = opts.on_done or function() end
  M.models(function(err, res)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return done(err)
    end
    local list = type(res.models) == 'table' and res.models or {}
    if #list == 0 then
      local msg = 'no models to pick from: add a "models" list to ~/.config/pid/settings.json, e.g. "models": [{"provider": "anthropic", "id": "claude-sonnet-4-5", "name": "Sonnet 4.5"}]'
      notify(msg, vim.log.levels.WARN)
      return done(msg)
    end
    local now = res.current and model_label(res.current) or 'none'
    vim.ui.select(list, {
      prompt = 'Model (now: ' .. now .. ')',
      kind = 'pid.model',
      format_item = function(m)
        local cur = res.current and res.current.provider == m.provider and res.current.id == m.id
        return model_label(m) .. (cur and ' (current)' or '')
      end,
    }, function(choice)
      if choice == nil then
        return done(nil, nil)
      end
      M.set_model(choice, function(e)
        done(e, e == nil and choice or nil)
      end)
    end)
  end)
  return true
end

-- permission_label is a permissions/list entry as a person reads it: what it answers, for
-- which calls, where.
local function permission_label(x)
  local what
  if type(x.pattern) == 'string' and x.pattern ~= '' then
    what = string.format('%s calls matching `%s`', tostring(x.tool), x.pattern)
  elseif type(x.path) == 'string' and x.path ~= '' then
    what = string.format('%s calls on %s', tostring(x.tool), x.path)
  else
    what = string.format('every %s call', tostring(x.tool))
  end
  local decision = tostring(x.decision)
  if decision == 'allow' or decision == 'allowAlways' then
    decision = 'always allow'
  elseif decision == 'deny' or decision == 'denyAlways' then
    decision = 'always deny'
  end
  local where = tostring(x.scope or ''):gsub('^workspace:', 'in ')
  return string.format('%s %s %s', decision, what, where)
end
M._permission_label = permission_label

-- permissions lists the "always" answers pid remembers (permissions/list) in vim.ui.select
-- (kind 'pid.permission') and revokes the one chosen (permissions/revoke). opts.on_done(err,
-- revoked entry or nil). It starts pid when needed.
function M.permissions(opts)
  opts = opts or {}
  local done = opts.on_done or function() end
  ensure_started(function(err)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return done(err)
    end
    local client = S.client
    client.request('permissions/list', vim.empty_dict(), function(e, res)
      if e ~= nil then
        local msg = 'permissions/list failed: ' .. error_text(e)
        notify(msg, vim.log.levels.ERROR)
        return done(msg)
      end
      local list = type(res) == 'table' and type(res.permissions) == 'table' and res.permissions or {}
      if #list == 0 then
        notify('pid remembers no "always" answers')
        return done(nil, nil)
      end
      vim.ui.select(list, { prompt = 'Revoke which remembered answer?', kind = 'pid.permission', format_item = permission_label }, function(choice)
        if choice == nil then
          return done(nil, nil)
        end
        client.request('permissions/revoke', { id = choice.id }, function(re)
          if re ~= nil then
            local msg = 'permissions/revoke failed: ' .. error_text(re)
            notify(msg, vim.log.levels.ERROR)
            return done(msg)
          end
          view.append('[permissions] revoked: ' .. permission_label(choice) .. '; pid asks again for such calls')
          done(nil, choice)
        end)
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
  S.crashed = false
  fail_waiters('pid was stopped')
  approval.withdraw(nil, true)
  if S.run ~= nil then
    finish(nil, 'pid was stopped', 'pid was stopped before it ended')
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

-- show shows the chat (setup's `open`), leaving the cursor where it is.
function M.show()
  view.show(config.open)
end

-- chat shows the chat and the prompt window under it, the cursor in the prompt: Enter sends
-- the line as a prompt, or as a steer while a prompt runs.
function M.chat()
  view.open_prompt(config.open, function(text)
    if S.run ~= nil then
      M.steer(text)
    else
      M.ask(text)
    end
  end)
end

-- approval_focus puts the cursor in the open approval's float.
function M.approval_focus()
  if not approval.focus() then
    notify('no question from pid is open')
    return false
  end
  return true
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
    pid = S.client and S.client.pid or nil,
    -- The last lines pid wrote on stderr (its log): of the running pid, else of the last one
    -- that stopped unexpectedly.
    stderr = S.client and S.client.stderr_tail() or S.stderr,
  }
end

-- cmd_ask runs :[range]PidAsk [text]: with a range, the lines go with the prompt as a
-- resource (a selection), unless the range is in the chat itself.
local function cmd_ask(o)
  local opts = {}
  local buf = vim.api.nvim_get_current_buf()
  opts.content, opts.context = {}, {}
  if o.range ~= nil and o.range > 0 and buf ~= view.bufnr() then
    local block, label = M.selection(buf, o.line1, o.line2)
    table.insert(opts.content, block)
    table.insert(opts.context, label)
  end
  if o.bang and buf ~= view.bufnr() then
    local block, label = M.diagnostics(buf)
    table.insert(opts.content, block)
    table.insert(opts.context, label)
  end
  if o.args ~= nil and o.args ~= '' then
    return M.ask(o.args, opts)
  end
  vim.ui.input({ prompt = 'pid> ' }, function(text)
    if text ~= nil and text ~= '' then
      M.ask(text, opts)
    end
  end)
end

local function cmd_queue(fn)
  return function(o)
    if o.args ~= nil and o.args ~= '' then
      return fn(o.args)
    end
    vim.ui.input({ prompt = 'pid> ' }, function(text)
      if text ~= nil and text ~= '' then
        fn(text)
      end
    end)
  end
end

-- create_commands (re)defines the :Pid* commands (plugin/pid.lua and setup call it).
function M.create_commands()
  local c = vim.api.nvim_create_user_command
  c('PidAsk', cmd_ask, { nargs = '*', range = true, bang = true, desc = 'pid: run a prompt (with a range: the selection goes with it; with !: the diagnostics)' })
  c('PidChat', function() M.chat() end, { nargs = 0, desc = 'pid: the chat and its prompt window' })
  c('PidSteer', cmd_queue(M.steer), { nargs = '*', desc = 'pid: a message for the running prompt, after its current tools' })
  c('PidFollowUp', cmd_queue(M.follow_up), { nargs = '*', desc = 'pid: a message taken when the running prompt would stop' })
  c('PidApproval', function() M.approval_focus() end, { nargs = 0, desc = "pid: go to the open approval's window" })
  c('PidCancel', function() M.cancel() end, { nargs = 0, desc = 'pid: cancel the running prompt' })
  c('PidNew', function() M.new_session() end, { nargs = 0, desc = 'pid: start a new session' })
  c('PidSessions', function() M.sessions() end, { nargs = 0, desc = 'pid: resume a saved session' })
  c('PidModel', function() M.pick_model() end, { nargs = 0, desc = "pid: pick the session's model" })
  c('PidPermissions', function() M.permissions() end, { nargs = 0, desc = 'pid: list and revoke remembered "always" answers' })
  c('PidResume', function() M.resume() end, { nargs = 0, desc = 'pid: start pid again and continue the session it held' })
  c('PidShow', function() M.show() end, { nargs = 0, desc = 'pid: show the chat' })
  c('PidStop', function() M.stop() end, { nargs = 0, desc = 'pid: shut pid down' })
end

-- setup configures the plugin (it does not start pid). Calling it again changes the options:
-- `cmd`, `env`, `cwd`, `init_options` and `buffers` apply from the next start of pid,
-- `model` and `session` from the next session.
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

-- config returns the options in force (setup's, over the defaults).
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
