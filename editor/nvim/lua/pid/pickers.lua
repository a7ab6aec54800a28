-- The lists a person picks from (vim.ui.select) and what pid remembers: saved sessions
-- (:PidSessions, session/list followed page by page, then session/load), the models of the
-- settings (:PidModel, models/list and session/setModel), the session's modes (:PidMode,
-- session/setMode), the remembered "always" answers
-- (:PidPermissions, permissions/list and /revoke), and the trusted folders (trust/list and
-- /revoke). The state is state.lua's.

local state = require('pid.state')
local chats = require('pid.chats')
local view = require('pid.view')
local sessions = require('pid.sessions')
local lifecycle = require('pid.lifecycle')
local words = require('pid.words')
local modes = require('pid.modes')

local S = state.S
local notify = words.notify

local M = {}

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
  lifecycle.ensure_started(function(err)
    if err ~= nil then
      return cb(err, nil, false)
    end
    list_sessions(S.client, max, cb)
  end)
end

-- sessions lists pid's saved sessions (session/list, newest first, up to
-- sessions.MAX_LISTED) in vim.ui.select (kind 'pid.session'; each item a session/list entry,
-- shown as "title | folder | when, N messages"), and loads the chosen one (load_session).
-- opts.on_done(err, result) is called at the end: result is session/load's, nil when nothing
-- was chosen. It starts pid when needed; false while a prompt runs.
function M.sessions(opts)
  opts = opts or {}
  local done = words.caller(opts)
  if S.run ~= nil then
    notify('a prompt is running: wait for it or :PidCancel it, then pick a session', vim.log.levels.WARN)
    return false
  end
  lifecycle.ensure_started(function(err)
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
      -- The live conversations first (when there are several): choosing one goes to its chat.
      local live = chats.several() and chats.live() or {}
      if #list == 0 and #live == 0 then
        notify('pid has no saved sessions yet')
        return done(nil, nil)
      end
      local fmt = {
        now = os.time(),
        home = (vim.uv or vim.loop).os_homedir(),
        current = S.session_id,
        workspace = S.workspace,
      }
      local items = {}
      for _, c in ipairs(live) do
        table.insert(items, { live = c })
      end
      vim.list_extend(items, list)
      local prompt = more and string.format('Resume which session? (the newest %d)', #list) or 'Resume which session?'
      state.select(items, {
        prompt = prompt,
        kind = 'pid.session',
        format_item = function(x)
          return x.live and ('live: ' .. chats.label(x.live)) or sessions.format_item(x, fmt)
        end,
      }, function(choice)
        if choice == nil then
          return done(nil, nil)
        end
        -- A live conversation, or a saved session one of them holds: its chat, not a second load.
        local conv = choice.live or (chats.several() and chats.of_session(choice.sessionId)) or nil
        if conv ~= nil then
          chats.jump(conv)
          return done(nil, { sessionId = conv.session_id, live = true })
        end
        if not lifecycle.load_session(choice.sessionId, { summary = choice, on_done = done }) then
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
  lifecycle.ensure(function(err)
    if err ~= nil then
      return cb(err)
    end
    S.client.request('models/list', { sessionId = S.session_id }, function(e, res)
      if e ~= nil then
        return cb('models/list failed: ' .. words.error_text(e))
      end
      cb(nil, type(res) == 'table' and res or { models = {} })
    end)
  end)
end

-- set_model makes model ({provider, id}) the current session's model from its next model
-- call on (session/setModel); cb(err in words) when pid answered.
function M.set_model(model, cb)
  cb = cb or function() end
  lifecycle.ensure(function(err)
    if err ~= nil then
      return cb(err)
    end
    S.client.request('session/setModel', { sessionId = S.session_id, model = { provider = model.provider, id = model.id } }, function(e)
      if e ~= nil then
        local msg = words.error_text(e)
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
    state.select(list, {
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

-- set_mode switches the current session to mode id (session/setMode; pid's modeUpdate, before
-- its answer, updates the status line and the chat); cb(err in words) when pid answered. It
-- starts pid and a session when needed.
function M.set_mode(id, cb)
  cb = cb or function() end
  lifecycle.ensure(function(err)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return cb(err)
    end
    if modes.current() == id then
      notify('the session is in ' .. modes.name(id) .. ' mode already')
      return cb(nil)
    end
    local client = S.client
    client.request('session/setMode', { sessionId = S.session_id, modeId = id }, function(e)
      if e ~= nil then
        local msg = string.format('the mode was not changed to %s: %s (the modes: %s)', id, words.error_text(e), table.concat(modes.ids(), ', '))
        view.append('[error] ' .. msg)
        notify(msg, vim.log.levels.ERROR)
        return cb(msg)
      end
      if S.client == client then
        modes.set_current(id)
      end
      cb(nil)
    end)
  end)
  return true
end

-- next_mode switches the session to the mode after its current one (Shift-Tab in the prompt
-- window), starting pid and a session first when needed; cb(err in words).
function M.next_mode(cb)
  lifecycle.ensure(function(err)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return (cb or function() end)(err)
    end
    M.set_mode(modes.next(), cb)
  end)
end

-- pick_mode lists the session's modes (its availableModes, with their descriptions) in
-- vim.ui.select (kind 'pid.mode') and switches to the chosen one. opts.on_done(err, id) at
-- the end (id nil when nothing was chosen).
function M.pick_mode(opts)
  opts = opts or {}
  local done = words.caller(opts)
  lifecycle.ensure(function(err)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return done(err)
    end
    local list = {}
    for _, id in ipairs(modes.ids()) do
      table.insert(list, modes.entry(id))
    end
    local now = modes.current()
    state.select(list, {
      prompt = 'Mode (now: ' .. (now and modes.name(now) or '?') .. ')',
      kind = 'pid.mode',
      format_item = function(m)
        local s = modes.name(m.id) .. ' (' .. m.id .. ')' .. (m.id == now and ', the current mode' or '')
        return m.description and (s .. ': ' .. m.description) or s
      end,
    }, function(choice)
      if choice == nil then
        return done(nil, nil)
      end
      M.set_mode(choice.id, function(e)
        done(e, e == nil and choice.id or nil)
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
  lifecycle.ensure_started(function(err)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return done(err)
    end
    local client = S.client
    client.request('permissions/list', vim.empty_dict(), function(e, res)
      if e ~= nil then
        local msg = 'permissions/list failed: ' .. words.error_text(e)
        notify(msg, vim.log.levels.ERROR)
        return done(msg)
      end
      local list = type(res) == 'table' and type(res.permissions) == 'table' and res.permissions or {}
      if #list == 0 then
        notify('pid remembers no "always" answers')
        return done(nil, nil)
      end
      state.select(list, { prompt = 'Revoke which remembered answer?', kind = 'pid.permission', format_item = permission_label }, function(choice)
        if choice == nil then
          return done(nil, nil)
        end
        client.request('permissions/revoke', { id = choice.id }, function(re)
          if re ~= nil then
            local msg = 'permissions/revoke failed: ' .. words.error_text(re)
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

return M
