-- Approvals: pid's beforeToolCall requests (and LSP's window/showMessageRequest, the fallback)
-- and its workspace/requestTrust questions, answered with vim.ui.select.
--
-- "Always allow" is offered only when pid says what it would cover (params.always), and its
-- item is labelled with that: "Always allow: bash commands starting with `npm test` in this
-- workspace". Without it pid would count the answer as once, so only Allow and Deny are shown.
--
-- vim.lsp.rpc wants a server request's answer as the return value of the server_request
-- dispatcher, while vim.ui.select answers through a callback, perhaps later (dressing.nvim,
-- telescope, fzf-lua show a picker and return at once). Two ways to wait, picked per call:
--
-- * Neovim 0.9+ calls server_request inside a coroutine (vim.schedule(coroutine.wrap(...)) in
--   vim/lsp/rpc.lua, neovim PR #21026), as its own window/showMessageRequest handler relies
--   on. There we yield and the select callback resumes us: the editor stays fully usable
--   while the question is open, whatever vim.ui.select implementation is installed.
-- * Neovim 0.7 and 0.8 call it on the main thread, outside any coroutine. There we vim.wait()
--   for the callback, without a timeout (a person may take their time), in slices so that
--   Ctrl-C ends the wait (= deny). vim.wait keeps the event loop going (pid's notifications
--   keep arriving and are shown, timers run), but it does not run normal-mode keys: with the
--   built-in vim.ui.select (inputlist, synchronous) that does not matter; an asynchronous
--   picker that needs keys typed into a floating window cannot be answered there (Ctrl-C
--   denies). On 0.7 and 0.8, keep the built-in vim.ui.select, or a synchronous one; see the
--   README.
-- The choice is made per call, from coroutine.running(), not from the version.
--
-- When pid withdraws a question (the prompt was cancelled: pid sends $/cancelRequest), or
-- the run ends, or pid exits, the wait ends at once and the answer (ignored by pid) is deny.
-- A selection made after that is ignored. A trust question belongs to no run: only pid's exit
-- (or :PidStop) ends it, and its answer then is "not trusted".

local M = {}

M.ALLOW, M.ALWAYS_ALLOW, M.DENY = 'Allow', 'Always allow', 'Deny'
M.TRUST, M.KEEP_RESTRICTED = 'Trust this folder', 'Keep restricted'
M.trust_items = { M.TRUST, M.KEEP_RESTRICTED }

-- How many ignored settings a trust question names before "and N more".
M.MAX_IGNORED_SHOWN = 6

-- Questions waiting for an answer: {done, choice, why, co, session, trust, on_resolved}.
local pending = {}

local WAIT_SLICE_MS = 200

local function remove(p)
  for i, q in ipairs(pending) do
    if q == p then
      table.remove(pending, i)
      return
    end
  end
end

-- resolve records the outcome of p (why: nil when answered, else "withdrawn",
-- "interrupted" or "failed"), reports it at once, and wakes the waiting handler.
local function resolve(p, choice, why)
  if p.done then
    return false -- withdrawn meanwhile, or answered twice
  end
  p.done, p.choice, p.why = true, choice, why
  if p.on_resolved then
    local ok, err = pcall(p.on_resolved, choice, why)
    if not ok then
      vim.notify('pid: ' .. tostring(err), vim.log.levels.ERROR)
    end
  end
  if p.co ~= nil then
    local co = p.co
    p.co = nil
    vim.schedule(function()
      if coroutine.status(co) == 'suspended' then
        local ok, err = coroutine.resume(co)
        if not ok then
          vim.notify('pid: approval handler failed: ' .. tostring(err), vim.log.levels.ERROR)
        end
      end
    end)
  end
  return true
end

-- can_yield says whether this call runs in a coroutine it may yield from: one that is not
-- the main thread, under LuaJIT (PUC Lua 5.1 cannot yield across the rpc layer's pcall).
local function can_yield()
  local co, is_main = coroutine.running()
  return co ~= nil and not is_main and jit ~= nil, co
end

-- choose asks vim.ui.select and waits (see above). It returns the chosen item (nil when
-- dismissed) and, when the question ended otherwise, why: "withdrawn", "interrupted" or
-- "failed". on_resolved(choice, why), if given, is called the moment the outcome is known,
-- which on 0.7 - 0.9 may be well before choose returns (events go on during vim.wait).
-- session ties an approval to its run; trust = true marks a trust question (see withdraw).
function M.choose(items, opts, session, on_resolved, trust)
  local p = { done = false, session = session, trust = trust == true, on_resolved = on_resolved }
  table.insert(pending, p)
  local ok, err = pcall(vim.ui.select, items, opts, function(choice)
    if vim.in_fast_event() then
      vim.schedule(function()
        resolve(p, choice, nil)
      end)
    else
      resolve(p, choice, nil)
    end
  end)
  if not ok then
    vim.notify('pid: vim.ui.select failed: ' .. tostring(err), vim.log.levels.ERROR)
    resolve(p, nil, 'failed')
  end
  if not p.done then
    local yieldable, co = can_yield()
    if yieldable then
      p.co = co
      coroutine.yield()
    else
      while not p.done do
        local _, code = vim.wait(WAIT_SLICE_MS, function()
          return p.done
        end, 10)
        if code == -2 then -- Ctrl-C
          resolve(p, nil, 'interrupted')
        end
      end
    end
  end
  remove(p)
  return p.choice, p.why
end

-- withdraw ends the open approval questions (of session, or all when nil): pid withdrew one,
-- or the run ended. with_trust ends the trust questions too (pid exited or was stopped).
function M.withdraw(session, with_trust)
  for _, p in ipairs(vim.list_slice(pending, 1, #pending)) do
    if not p.done and (with_trust or not p.trust) and (session == nil or p.session == nil or p.session == session) then
      resolve(p, nil, 'withdrawn')
    end
  end
end

function M.pending()
  return #pending
end

local function short_json(v, limit)
  local ok, s = pcall(vim.json.encode, v)
  if not ok then
    s = vim.inspect(v, { newline = ' ', indent = '' })
  end
  if #s > limit and vim.fn.strchars(s) > limit then
    s = vim.fn.strcharpart(s, 0, limit) .. '...'
  end
  return s
end
M.short_json = short_json

-- oneline makes text from pid (or from the workspace, through pid) fit one line of a picker.
local function oneline(v)
  return (tostring(v):gsub('%c', ' '))
end

-- scope returns the description of what an always answer covers, or nil when params.always
-- is absent or malformed.
local function scope(always)
  if type(always) ~= 'table' or type(always.description) ~= 'string' or always.description:match('^%s*$') then
    return nil
  end
  return oneline(always.description)
end

-- items returns the approval's choices and what each answers: "Always allow" only when pid
-- scoped it, labelled with the scope.
function M.items(always)
  local desc = scope(always)
  local items, decisions = { M.ALLOW }, { [M.ALLOW] = 'allow', [M.DENY] = 'deny' }
  if desc ~= nil then
    local label = M.ALWAYS_ALLOW .. ': ' .. desc
    table.insert(items, label)
    decisions[label] = 'allowAlways'
  end
  table.insert(items, M.DENY)
  return items, decisions
end

-- before answers a beforeToolCall request: {decision, reason?}. on_line(text) reports the
-- outcome for the run buffer.
function M.before(params, on_line)
  params = params or {}
  local name = tostring(params.toolName or '?')
  local id = tostring(params.toolCallId or '?')
  local items, decisions = M.items(params.always)
  local prompt = string.format('pid wants to run %s %s', name, short_json(params.args or vim.empty_dict(), 300))
  if type(params.diff) == 'string' and params.diff ~= '' then
    -- Not sent by pid's protocol 1; shown if a later pid sends one.
    on_line(string.format('[approval] %s (%s) diff:\n%s', name, id, params.diff))
  end
  pcall(vim.cmd, 'redraw') -- show the run so far under a synchronous (inputlist) prompt
  local choice = M.choose(items, { prompt = prompt .. ': ', kind = 'pid.approval' }, params.sessionId,
    function(c, why)
      local shown = decisions[c] or 'deny'
      if why ~= nil then
        shown = 'deny (' .. why .. ')'
      elseif c == nil then
        shown = 'deny (dismissed)'
      elseif shown == 'allowAlways' then
        shown = shown .. ' (' .. scope(params.always) .. ')'
      end
      on_line(string.format('[approval] %s (%s): %s', name, id, shown))
    end)
  return { decision = decisions[choice] or 'deny' }
end

-- trust_prompt says which folder pid asks about and what trusting it would enable.
function M.trust_prompt(params)
  local folder = oneline(params.folder or '?')
  local ignored = {}
  if type(params.ignored) == 'table' then
    for _, v in ipairs(params.ignored) do
      table.insert(ignored, oneline(v))
    end
  end
  local list = table.concat(vim.list_slice(ignored, 1, M.MAX_IGNORED_SHOWN), '; ')
  if #ignored > M.MAX_IGNORED_SHOWN then
    list = string.format('%s; and %d more', list, #ignored - M.MAX_IGNORED_SHOWN)
  elseif #ignored == 0 then
    list = 'settings it did not name'
  end
  return string.format('pid: the workspace folder %s is not trusted, so pid ignores what its .pid/settings.json would enable: %s. Trust it? ',
    folder, list), folder, list
end

-- trust answers a workspace/requestTrust request: {trusted}. Only "Trust this folder" trusts;
-- dismissed, withdrawn or failed keep the folder restricted. on_line(text) reports the question
-- and its outcome for the run buffer.
function M.trust(params, on_line)
  params = type(params) == 'table' and params or {}
  local prompt, folder, list = M.trust_prompt(params)
  on_line(string.format('[trust] %s is not trusted; its .pid/settings.json would enable: %s', folder, list))
  pcall(vim.cmd, 'redraw')
  local choice = M.choose(M.trust_items, { prompt = prompt, kind = 'pid.trust' }, nil,
    function(c, why)
      local shown = 'kept restricted'
      if c == M.TRUST then
        shown = 'trusted'
      elseif why ~= nil then
        shown = shown .. ' (' .. why .. ')'
      elseif c == nil then
        shown = shown .. ' (dismissed)'
      end
      on_line(string.format('[trust] %s: %s', folder, shown))
    end, true)
  return { trusted = choice == M.TRUST }
end

-- show_message_request answers LSP's window/showMessageRequest: the chosen action, or null.
function M.show_message_request(params, on_line)
  params = params or {}
  local actions = params.actions or {}
  local titles = {}
  for _, a in ipairs(actions) do
    table.insert(titles, tostring(a.title))
  end
  local choice = M.choose(titles, { prompt = tostring(params.message or 'pid') .. ': ', kind = 'pid.approval' }, nil,
    function(c, why)
      on_line(string.format('[approval] %s: %s', tostring(params.message or ''), c or ('dismissed' .. (why and (', ' .. why) or ''))))
    end)
  for _, a in ipairs(actions) do
    if a.title == choice then
      return a
    end
  end
  return vim.NIL
end

return M
