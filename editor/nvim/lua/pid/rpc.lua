-- pid's JSON-RPC connection: the process (spawned with libuv, vim.uv on 0.10+, vim.loop on
-- 0.7 - 0.9) and the messages over its stdio, framed as LSP frames (Content-Length headers).
--
-- Our own, not vim.lsp.rpc: that one wants the answer to a request from pid (an approval, a
-- file read) as the return value of its handler, so on 0.7 - 0.8 a question the person takes
-- time over would block the editor. Here a request handler gets a `respond` function and may
-- answer whenever it likes, on every Neovim version.
--
-- Every callback (notifications, requests, responses, exit) runs on the main loop, scheduled
-- in the order pid's messages arrived.

local M = {}

local uv = vim.uv or vim.loop

-- How many lines of pid's stderr are kept for messages (see client.stderr_tail).
M.STDERR_LINES = 40

local function environ(extra)
  local env = vim.fn.environ()
  for k, v in pairs(extra or {}) do
    env[k] = tostring(v)
  end
  local list = {}
  for k, v in pairs(env) do
    table.insert(list, k .. '=' .. v)
  end
  return list
end

-- start spawns cmd (a list: program, then arguments) with opts {cwd?, env?} (env is merged
-- into Neovim's environment) and returns a client, or nil and a message saying why it could
-- not. handlers (all optional, all called on the main loop):
--   notification(method, params)
--   request(method, params, respond, id): answer with respond(result) or respond(nil, {code,
--     message}); answering twice is ignored, never answering leaves pid waiting
--   cancel(id): pid withdrew its request id ($/cancelRequest)
--   exit(code, signal)
-- The client: request(method, params, cb(err, result)) -> ok, id (err: {code, message,
-- data?}); notify(method, params) -> ok; kill(); is_closing(); pid; stderr_tail() -> lines.
function M.start(cmd, handlers, opts)
  opts = opts or {}
  handlers = handlers or {}
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' or cmd[1] == '' then
    return nil, 'pid: `cmd` must be a list like {"pid"}, got ' .. vim.inspect(cmd)
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    return nil, string.format('pid: %q is not an executable (set `cmd` in require("pid").setup{})', cmd[1])
  end
  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local client = { closed = false }
  local callbacks = {}
  local next_id = 0
  local tail = {}
  local handle, pid_or_err
  handle, pid_or_err = uv.spawn(cmd[1], {
    args = vim.list_slice(cmd, 2),
    stdio = { stdin, stdout, stderr },
    cwd = opts.cwd,
    env = environ(opts.env),
  }, function(code, signal)
    client.closed = true
    for _, p in ipairs({ stdin, stdout, stderr }) do
      if not p:is_closing() then
        p:close()
      end
    end
    if handle and not handle:is_closing() then
      handle:close()
    end
    vim.schedule(function()
      local pending = callbacks
      callbacks = {}
      for _, cb in pairs(pending) do
        pcall(cb, { code = -32099, message = 'pid exited' }, nil)
      end
      if handlers.exit then
        handlers.exit(code, signal)
      end
    end)
  end)
  if not handle then
    for _, p in ipairs({ stdin, stdout, stderr }) do
      p:close()
    end
    return nil, 'pid: could not start ' .. table.concat(cmd, ' ') .. ': ' .. tostring(pid_or_err)
  end
  client.pid = pid_or_err

  local function send(msg)
    if client.closed or stdin:is_closing() then
      return false
    end
    msg.jsonrpc = '2.0'
    local ok, body = pcall(vim.json.encode, msg)
    if not ok then
      return false
    end
    stdin:write('Content-Length: ' .. #body .. '\r\n\r\n' .. body)
    return true
  end

  local function dispatch(msg)
    if type(msg) ~= 'table' then
      return
    end
    if msg.method ~= nil and msg.id ~= nil then
      local id, answered = msg.id, false
      local function respond(result, err)
        if answered then
          return
        end
        answered = true
        if err ~= nil then
          send({ id = id, error = err })
        else
          send({ id = id, result = result == nil and vim.NIL or result })
        end
      end
      if handlers.request then
        local ok, e = pcall(handlers.request, msg.method, msg.params, respond, id)
        if not ok then
          respond(nil, { code = -32603, message = 'pid.nvim: ' .. tostring(e) })
        end
      else
        respond(nil, { code = -32601, message = 'pid.nvim does not handle ' .. tostring(msg.method) })
      end
    elseif msg.method ~= nil then
      if msg.method == '$/cancelRequest' and handlers.cancel then
        handlers.cancel(type(msg.params) == 'table' and msg.params.id or nil)
      end
      if handlers.notification then
        handlers.notification(msg.method, msg.params)
      end
    elseif msg.id ~= nil then
      local cb = callbacks[msg.id]
      callbacks[msg.id] = nil
      if cb then
        if msg.error ~= nil then
          cb(msg.error, nil)
        else
          cb(nil, msg.result)
        end
      end
    end
  end

  local buffer = ''
  stdout:read_start(function(err, chunk)
    if err or not chunk then
      return
    end
    buffer = buffer .. chunk
    while true do
      local header_end = buffer:find('\r\n\r\n', 1, true)
      if not header_end then
        break
      end
      local len = tonumber(buffer:sub(1, header_end - 1):match('[Cc]ontent%-[Ll]ength:%s*(%d+)'))
      if not len then
        buffer = buffer:sub(header_end + 4) -- a frame we cannot read: skip its header
      else
        if #buffer < header_end + 3 + len then
          break
        end
        local body = buffer:sub(header_end + 4, header_end + 3 + len)
        buffer = buffer:sub(header_end + 4 + len)
        local ok, msg = pcall(vim.json.decode, body, { luanil = { object = true } })
        if ok then
          vim.schedule(function()
            dispatch(msg)
          end)
        end
      end
    end
  end)
  local partial = ''
  stderr:read_start(function(err, chunk)
    if err or not chunk then
      return
    end
    partial = partial .. chunk
    for line in partial:gmatch('([^\n]*)\n') do
      table.insert(tail, line)
      if #tail > M.STDERR_LINES then
        table.remove(tail, 1)
      end
    end
    partial = partial:match('[^\n]*$')
  end)

  function client.request(method, params, cb)
    next_id = next_id + 1
    local id = next_id
    if params == nil then
      params = vim.NIL
    end
    if not send({ id = id, method = method, params = params }) then
      return false, nil
    end
    -- The answer is handled for the conversation that asked (state.lua's bind).
    callbacks[id] = cb and require('pid.state').bind(cb) or function() end
    return true, id
  end

  function client.notify(method, params)
    if params == nil then
      params = vim.NIL
    end
    return send({ method = method, params = params })
  end

  function client.is_closing()
    return client.closed
  end

  function client.stderr_tail()
    return vim.list_slice(tail, 1, #tail)
  end

  -- kill sends SIGTERM (pid kills its tools' processes and exits).
  function client.kill(signal)
    if handle and not handle:is_closing() then
      pcall(handle.kill, handle, signal or 'sigterm')
    end
  end

  return client
end

return M
