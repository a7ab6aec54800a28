-- Tests the real pid binary with Neovim's own JSON-RPC client, vim.lsp.rpc (the transport
-- of Neovim's LSP client): a client nobody on this project wrote.
--
--   timeout 60 nvim --headless -u NONE -i NONE -c 'luafile test/clients/nvim_test.lua' </dev/null
--
-- The binary is $PID_BIN, else ../../bin/pid from this file. Neovim exits 0 when every check
-- passed (:qa!) and non-zero otherwise (:cquit 1), after printing why and what pid sent.
-- Works with Debian's 0.7 (vim.lsp.rpc.start(cmd, args, dispatchers, extra)) and with 0.10+
-- (vim.lsp.rpc.start(cmd_list, dispatchers, extra)).

local STEP_TIMEOUT_MS = 10000 -- every wait is bounded by this
local uv = vim.uv or vim.loop

local out = io.stdout
local function say(fmt, ...)
  out:write(string.format(fmt, ...) .. '\n')
  out:flush()
end

local script_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local pid_bin = os.getenv('PID_BIN')
if pid_bin == nil or pid_bin == '' then
  pid_bin = script_dir .. '/../../bin/pid'
end
pid_bin = vim.fn.fnamemodify(pid_bin, ':p')

-- Everything pid sent, in arrival order: {kind='notification'|'request'|'response', method, params}.
local log = {}
local exited = nil -- {code, signal} once pid has exited

local function fail(msg)
  error(msg, 2)
end

local function check(cond, msg, ...)
  if not cond then
    error(string.format(msg, ...), 2)
  end
end

local function eq(got, want, what)
  if not vim.deep_equal(got, want) then
    error(string.format('%s: got %s, want %s', what, vim.inspect(got), vim.inspect(want)), 2)
  end
end

-- wait_for waits until cond() holds, for at most STEP_TIMEOUT_MS; it gives up early when pid
-- exits first.
local function wait_for(what, cond)
  vim.wait(STEP_TIMEOUT_MS, function() return cond() or exited ~= nil end, 5)
  if cond() then
    return
  end
  if exited then
    error(string.format('pid exited (code %s, signal %s) while the test waited for %s',
      tostring(exited.code), tostring(exited.signal), what), 2)
  end
  error(string.format('timed out after %d ms waiting for %s', STEP_TIMEOUT_MS, what), 2)
end

local function text(s)
  return { { type = 'text', text = s } }
end

local dispatchers = {
  notification = function(method, params)
    table.insert(log, { kind = 'notification', method = method, params = params })
  end,
  server_request = function(method, params)
    table.insert(log, { kind = 'request', method = method, params = params })
    if method == 'beforeToolCall' then
      return { decision = 'allow' }, nil
    end
    return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound, 'test client does not handle ' .. method)
  end,
  on_exit = function(code, signal)
    exited = { code = code, signal = signal }
  end,
  on_error = function(code, err)
    table.insert(log, { kind = 'client error', method = tostring(code), params = err })
  end,
}

local function start_pid()
  if vim.fn.executable(pid_bin) ~= 1 then
    fail('no pid binary at ' .. pid_bin .. ': build it (go build -o bin/pid ./cmd/pid) or set PID_BIN')
  end
  local client
  if vim.fn.has('nvim-0.10') == 1 then
    client = vim.lsp.rpc.start({ pid_bin }, dispatchers, { cwd = vim.fn.getcwd() })
  else
    client = vim.lsp.rpc.start(pid_bin, {}, dispatchers, { cwd = vim.fn.getcwd() })
  end
  check(client ~= nil, 'vim.lsp.rpc.start(%s) failed', pid_bin)
  return client
end

-- request sends a request and waits (bounded) for its answer; it returns the result and the
-- number of messages pid had sent before the response arrived.
local function request(client, method, params)
  local done, err, result, seen = false, nil, nil, nil
  local ok = client.request(method, params, function(e, r)
    done, err, result, seen = true, e, r, #log
  end)
  check(ok, 'could not send %s', method)
  wait_for('the ' .. method .. ' response', function() return done end)
  check(err == nil, '%s answered with an error: %s', method, vim.inspect(err))
  return result, seen
end

local function index_of(pred, what, upto)
  for i = 1, upto or #log do
    if pred(log[i]) then
      return i
    end
  end
  fail('no ' .. what .. ' received')
end

local function note(method, id)
  return function(e)
    return e.kind == 'notification' and e.method == method and (id == nil or e.params.toolCallId == id)
  end
end

local function count(pred, upto)
  local n = 0
  for i = 1, upto or #log do
    if pred(log[i]) then
      n = n + 1
    end
  end
  return n
end

local function roles(messages)
  local r = {}
  for _, m in ipairs(messages) do
    table.insert(r, m.role)
  end
  return r
end

local function last_notification(upto)
  for i = upto, 1, -1 do
    if log[i].kind == 'notification' and log[i].method ~= 'window/logMessage' then
      return log[i]
    end
  end
end

local function run()
  say('nvim %s, pid %s', tostring(vim.version().major .. '.' .. vim.version().minor .. '.' .. vim.version().patch), pid_bin)
  local client = start_pid()

  local init = request(client, 'initialize', {
    processId = vim.fn.getpid(),
    clientInfo = { name = 'nvim vim.lsp.rpc test', version = '1' },
    rootUri = vim.NIL,
    capabilities = { experimental = { pid = { beforeToolCall = true } } },
  })
  eq(init.serverInfo.name, 'pid', 'serverInfo.name')
  eq(init.capabilities.experimental.pid.protocolVersion, '1', 'protocolVersion')
  client.notify('initialized', vim.empty_dict())

  -- A parallel batch: a (slow) reports progress and finishes only after b's toolEnd; b (fast)
  -- needs approval. toolEnd comes b then a; the transcript keeps a then b.
  local sess = request(client, 'session/new', {
    model = {
      provider = 'script',
      turns = {
        { content = {
          { type = 'toolCall', id = 'a', name = 'slow', arguments = vim.empty_dict() },
          { type = 'toolCall', id = 'b', name = 'fast', arguments = { path = 'x.txt' } },
        } },
        { content = text('done') },
      },
    },
    -- Progress texts end a line: pid holds back an unfinished last word of progress.
    scriptedTools = {
      { name = 'slow', steps = {
        { update = { content = text('half\n') } },
        { update = { content = text('three quarters\n') } },
        { waitForEnd = 'b' },
        { result = { content = text('slow ok') } },
      } },
      { name = 'fast', requiresApproval = true, steps = {
        { result = { content = text('fast ok') } },
      } },
    },
  })
  check(type(sess.sessionId) == 'string', 'session/new gave no sessionId: %s', vim.inspect(sess))

  local res, n = request(client, 'session/prompt', { sessionId = sess.sessionId, text = 'go' })
  eq(res.stopReason, 'stop', 'prompt stopReason')

  -- Every notification of the run arrived before the response.
  eq(last_notification(n).method, 'agentEnd', 'last notification before the prompt response')
  vim.wait(100)
  eq(#log, n, 'messages from pid after the prompt response (none expected)')
  for i = 1, n do
    local e = log[i]
    if e.method ~= 'window/logMessage' then
      eq(e.params.sessionId, sess.sessionId, e.kind .. ' ' .. e.method .. ' sessionId')
    end
  end

  -- One approval, for b, before b ended.
  local asks = count(function(e) return e.kind == 'request' and e.method == 'beforeToolCall' end, n)
  eq(asks, 1, 'beforeToolCall requests')
  local ask = index_of(function(e) return e.kind == 'request' and e.method == 'beforeToolCall' end, 'beforeToolCall', n)
  eq({ log[ask].params.toolCallId, log[ask].params.toolName, log[ask].params.args },
    { 'b', 'fast', { path = 'x.txt' } }, 'beforeToolCall params')

  -- Completion order: toolEnd b before toolEnd a; one start and one end per call.
  local end_a = index_of(note('toolEnd', 'a'), 'toolEnd for a', n)
  local end_b = index_of(note('toolEnd', 'b'), 'toolEnd for b', n)
  check(end_b < end_a, 'toolEnd b (#%d) should come before toolEnd a (#%d)', end_b, end_a)
  check(ask < end_b, 'beforeToolCall (#%d) should come before toolEnd b (#%d)', ask, end_b)
  eq(count(note('toolEnd'), n), 2, 'toolEnd count')
  eq(count(note('toolStart'), n), 2, 'toolStart count')
  for _, id in ipairs({ 'a', 'b' }) do
    local s = index_of(note('toolStart', id), 'toolStart for ' .. id, n)
    local e = index_of(note('toolEnd', id), 'toolEnd for ' .. id, n)
    check(s < e, 'toolStart %s (#%d) should come before its toolEnd (#%d)', id, s, e)
  end
  eq({ log[end_a].params.result.content, log[end_a].params.isError }, { text('slow ok'), false }, 'toolEnd a')
  eq({ log[end_b].params.result.content, log[end_b].params.isError }, { text('fast ok'), false }, 'toolEnd b')

  -- Every $/toolUpdate of a call precedes its toolEnd.
  local updates = {}
  for i = 1, n do
    local e = log[i]
    if note('$/toolUpdate')(e) then
      local id = e.params.toolCallId
      local e_end = index_of(note('toolEnd', id), 'toolEnd for ' .. id, n)
      check(i < e_end, '$/toolUpdate #%d of %s should come before its toolEnd #%d', i, id, e_end)
      table.insert(updates, { id, e.params.partialResult.content })
    end
  end
  eq(updates, { { 'a', text('half\n') }, { 'a', text('three quarters\n') } }, '$/toolUpdate notifications')

  -- Streaming: every messageUpdate carries its delta, and the partial message only with a
  -- *_end delta (a block complete); the last answer's text deltas make up its text.
  local answer, streamed = '', 0
  for i = 1, n do
    local e = log[i]
    if note('messageUpdate')(e) then
      streamed = streamed + 1
      local d = e.params.delta
      check(type(d) == 'table' and type(d.type) == 'string', 'messageUpdate #%d without a delta', i)
      local is_end = d.type:sub(-4) == '_end'
      check((e.params.message ~= nil) == is_end, 'messageUpdate #%d (%s) carries the message: %s, want %s', i, d.type,
        tostring(e.params.message ~= nil), tostring(is_end))
      if d.type == 'text_delta' then
        answer = answer .. d.delta
      end
    end
  end
  check(streamed > 0, 'no messageUpdate notifications')
  eq(answer, 'done', 'text deltas of the run')

  -- Both calls ran: one toolExecutionStart each, after the prepare pass (both toolStarts and
  -- b's approval), in source order, before their progress and their toolEnd.
  eq(count(note('toolExecutionStart'), n), 2, 'toolExecutionStart count')
  local exec_a = index_of(note('toolExecutionStart', 'a'), 'toolExecutionStart for a', n)
  local exec_b = index_of(note('toolExecutionStart', 'b'), 'toolExecutionStart for b', n)
  eq({ log[exec_a].params.toolName, log[exec_b].params.toolName }, { 'slow', 'fast' }, 'toolExecutionStart toolName')
  check(ask < exec_a and exec_a < exec_b, 'approval (#%d), toolExecutionStart a (#%d), b (#%d): want that order', ask, exec_a, exec_b)
  check(exec_b < end_b and exec_a < end_a, 'toolExecutionStart after toolEnd')
  for i = 1, n do
    if note('$/toolUpdate', 'a')(log[i]) then
      check(exec_a < i, '$/toolUpdate #%d of a before its toolExecutionStart #%d', i, exec_a)
    end
  end

  -- The response: tool results in source order.
  eq(roles(res.messages), { 'user', 'assistant', 'toolResult', 'toolResult', 'assistant' }, 'response message roles')
  local results = {}
  for _, m in ipairs(res.messages) do
    if m.role == 'toolResult' then
      table.insert(results, { m.toolCallId, m.toolName, m.content, m.isError })
    end
  end
  eq(results, { { 'a', 'slow', text('slow ok'), false }, { 'b', 'fast', text('fast ok'), false } }, 'tool results')
  eq(res.messages[5].content, text('done'), 'final answer')
  eq(last_notification(n).params.messages, res.messages, 'agentEnd messages vs the response')
  say('ok - parallel batch with an approval: toolEnd b (#%d) before a (#%d), results [a, b], %d messages before the response', end_b, end_a, n)

  -- Cancel the way Neovim's LSP client does ($/cancelRequest {id}) while a tool sleeps.
  local sess2 = request(client, 'session/new', {
    model = { provider = 'script', turns = {
      { content = { { type = 'toolCall', id = 'z', name = 'sleepy', arguments = vim.empty_dict() } } },
      { content = text('must not be reached') },
    } },
    scriptedTools = { { name = 'sleepy', steps = { { sleepMs = 30000 }, { result = { content = text('woke up') } } } } },
  })
  local start_log = #log
  local done, cres, cerr, cseen = false, nil, nil, nil
  local t0 = uv.hrtime()
  local ok, id = client.request('session/prompt', { sessionId = sess2.sessionId, text = 'sleep' }, function(e, r)
    done, cerr, cres, cseen = true, e, r, #log
  end)
  check(ok, 'could not send the second session/prompt')
  wait_for('toolStart of the sleeping tool', function()
    for i = start_log + 1, #log do
      if note('toolStart', 'z')(log[i]) then
        return true
      end
    end
    return false
  end)
  client.notify('$/cancelRequest', { id = id })
  wait_for('the cancelled session/prompt response', function() return done end)
  local ms = (uv.hrtime() - t0) / 1e6
  check(cerr == nil, 'cancelled prompt answered with an error: %s', vim.inspect(cerr))
  eq(cres.stopReason, 'aborted', 'stopReason after $/cancelRequest')
  check(ms < STEP_TIMEOUT_MS, 'the cancelled prompt took %d ms', ms)
  local zres = {}
  for _, m in ipairs(cres.messages) do
    if m.role == 'toolResult' then
      table.insert(zres, { m.toolCallId, m.isError })
    end
  end
  eq(zres, { { 'z', true } }, 'results after the cancel')
  eq(roles(cres.messages), { 'user', 'assistant', 'toolResult' }, 'messages after the cancel (no further model call)')
  eq(last_notification(cseen).method, 'agentEnd', 'last notification before the cancelled response')
  say('ok - $/cancelRequest while a tool sleeps: stopReason aborted after %d ms', ms)

  -- shutdown, exit, and exit code 0.
  local sd = request(client, 'shutdown', vim.NIL)
  check(sd == nil or sd == vim.NIL, 'shutdown answered %s, want null', vim.inspect(sd))
  client.notify('exit', vim.NIL)
  wait_for('pid to exit', function() return exited ~= nil end)
  check(exited.code == 0 and (exited.signal == nil or exited.signal == 0),
    'pid exit status after shutdown+exit: code %s, signal %s (want code 0)', tostring(exited.code), tostring(exited.signal))
  say('ok - shutdown and exit: pid exited with code 0')
end

local function dump_log()
  say('pid sent %d messages:', #log)
  for i, e in ipairs(log) do
    local p = vim.inspect(e.params, { newline = ' ', indent = '' })
    say('  #%d %s %s %s', i, e.kind, e.method, p:sub(1, 300))
  end
  if exited then
    say('pid exited: code %s, signal %s', tostring(exited.code), tostring(exited.signal))
  end
end

local ok, err = xpcall(run, debug.traceback)
if ok then
  say('PASS nvim vim.lsp.rpc client test')
  vim.cmd('qa!')
else
  say('FAIL nvim vim.lsp.rpc client test: %s', tostring(err))
  dump_log()
  vim.cmd('cquit 1')
end
