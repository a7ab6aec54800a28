-- Starting pid with Neovim's own JSON-RPC client, vim.lsp.rpc, on every supported Neovim.
--
-- vim.lsp.rpc.start changed its signature in 0.10:
--   0.7 - 0.9: start(cmd: string, cmd_args: string[], dispatchers, extra_spawn_params)
--   0.10+:     start(cmd: string[], dispatchers, extra_spawn_params)
-- Both accept extra_spawn_params = {cwd, env}; env is merged into Neovim's environment.

local M = {}

local uv = vim.uv or vim.loop

M.has_010 = vim.fn.has('nvim-0.10') == 1

-- start spawns cmd (a list: program then arguments) and returns the rpc client, or nil and a
-- message saying why it could not.
function M.start(cmd, dispatchers, extra)
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' or cmd[1] == '' then
    return nil, 'pid: `cmd` must be a list like {"pid"}, got ' .. vim.inspect(cmd)
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    return nil, string.format('pid: %q is not an executable (set `cmd` in require("pid").setup{})', cmd[1])
  end
  local ok, client
  if M.has_010 then
    ok, client = pcall(vim.lsp.rpc.start, cmd, dispatchers, extra)
  else
    ok, client = pcall(vim.lsp.rpc.start, cmd[1], vim.list_slice(cmd, 2), dispatchers, extra)
  end
  if not ok then
    return nil, 'pid: could not start ' .. table.concat(cmd, ' ') .. ': ' .. tostring(client)
  end
  if client == nil then
    return nil, 'pid: could not start ' .. table.concat(cmd, ' ')
  end
  return client
end

-- kill ends the process of a client that does not exit by itself.
function M.kill(client)
  if client == nil then
    return
  end
  if type(client.terminate) == 'function' then -- 0.10+
    pcall(client.terminate)
  elseif client.handle and not client.handle:is_closing() then -- 0.7 - 0.9
    pcall(client.handle.kill, client.handle, 'sigterm')
  elseif client.pid then
    pcall(uv.kill, client.pid, 'sigterm')
  end
end

return M
