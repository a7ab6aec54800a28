-- Running prompts: ask (session/prompt, starting pid and a session when needed), the messages
-- a running prompt takes (session/steer, session/followUp), and :PidCancel. How a run ends is
-- chat.finish_run's; the state is state.lua's.

local state = require('pid.state')
local view = require('pid.view')
local approval = require('pid.approval')
local chat = require('pid.chat')
local context = require('pid.context')
local lifecycle = require('pid.lifecycle')
local words = require('pid.words')

local S = state.S
local notify = words.notify

local M = {}

-- ask runs a prompt. opts.content: more content blocks (ACP shapes) sent after the text;
-- opts.context: lines saying what they are, for the chat; opts.on_done(err, result) is called
-- when it ends (result is session/prompt's: {stopReason, messages, terminated?}). It returns
-- false when it cannot run now (nothing to ask, a prompt runs, a session loads).
function M.ask(text, opts)
  opts = opts or {}
  if type(text) ~= 'string' or text:match('^%s*$') then
    notify('nothing to ask', vim.log.levels.WARN)
    return false
  end
  local own = require('pid.skills').kind(text)
  if own ~= nil and S.run == nil and opts.content == nil then
    -- /skills, /agents: the plugin's own, answered from pid's lists (skills.lua).
    return require('pid.skills').run(own, opts.on_done)
  end
  if S.run ~= nil then
    -- A prompt runs: what was typed is not lost, it goes to the run if the person says how.
    M.offer_queue(text, opts)
    return false
  end
  if S.loading then
    notify('a saved session is loading: wait a moment, then ask again', vim.log.levels.WARN)
    return false
  end
  local links, linked = context.mentions(text)
  if #links > 0 then
    opts = vim.tbl_extend('force', {}, opts)
    opts.content = vim.list_extend(vim.list_slice(opts.content or {}, 1, #(opts.content or {})), links)
    opts.context = vim.list_extend(vim.list_slice(opts.context or {}, 1, #(opts.context or {})), linked)
  end
  local run = { text = text, on_done = opts.on_done, cards = {} }
  S.run = run
  local conv = state.active
  conv.title = conv.title or view.lines_of(text)[1]:sub(1, 60)
  chat.show()
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
  lifecycle.ensure(function(err)
    if S.run ~= run then
      return
    end
    if resuming then
      header()
    end
    if err ~= nil then
      return chat.finish_run(nil, err)
    end
    if run.cancelled then
      return chat.finish_run({ stopReason = 'aborted', messages = {} }, nil)
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
        return chat.finish_run(nil, words.error_text(e), e.code == -32099 and 'pid stopped before it ended' or nil)
      end
      chat.finish_run(res, nil)
    end)
    if not ok then
      return chat.finish_run(nil, 'could not send session/prompt to pid')
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
      view.append(string.format('[error] %s was not sent: %s', tag, words.error_text(e)))
    end
  end)
  return true
end

-- QUEUE_CHOICES are what offer_queue offers for a text typed while a prompt runs.
M.QUEUE_CHOICES = {
  { label = 'steer: pid reads it after the tools it runs now', fn = 'steer' },
  { label = 'follow-up: pid reads it when it would stop', fn = 'follow_up' },
  { label = 'keep it for later: nothing is sent (:PidAsk again once the run ended)', fn = nil },
}

-- offer_queue asks (vim.ui.select, kind 'pid.queue') what to do with text typed as a prompt
-- while one runs: send it as a steer or a follow-up (with what goes with it), or not.
function M.offer_queue(text, opts)
  local short = view.lines_of(text)[1]
  state.select(M.QUEUE_CHOICES, {
    prompt = string.format('A prompt is running: "%s"', vim.fn.strchars(short) > 50 and (vim.fn.strcharpart(short, 0, 47) .. '...') or short),
    kind = 'pid.queue',
    format_item = function(c)
      return c.label
    end,
  }, function(c)
    if c == nil or c.fn == nil then
      notify('not sent: ' .. text)
      return
    end
    M[c.fn](text, opts)
  end)
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
-- answers, with stopReason "aborted". It returns false when no prompt runs.
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

return M
