-- :checkhealth pid (issue 34): the pid binary the plugin starts and its version, Neovim's
-- version, the sandbox bash runs in, the model new sessions get and whether its key variable
-- is set (never its value), and the trust of the current folder. What pid knows comes from
-- `pid doctor --json`, run like the plugin runs pid (setup's cmd, env and cwd). Neovim 0.7+:
-- on 0.7 and 0.8 the report functions are health's report_*.

local M = {}

local health = vim.health or require('health')
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local report_error = health.error or health.report_error
local info = health.info or health.report_info

-- run runs argv (in cwd, with env merged into Neovim's) and returns its exit code and stdout;
-- nil and the reason when it cannot start or does not end within 15 s.
local function run(argv, cwd, env)
  local out = {}
  local opts = {
    stdout_buffered = true,
    on_stdout = function(_, data) out = data end,
    cwd = cwd,
  }
  if env and next(env) ~= nil then
    opts.env = env
  end
  local ok_start, id = pcall(vim.fn.jobstart, argv, opts)
  if not ok_start or id <= 0 then
    return nil, 'cannot be started'
  end
  local code = vim.fn.jobwait({ id }, 15000)[1]
  if code == -1 then
    vim.fn.jobstop(id)
    return nil, 'did not answer within 15 s'
  end
  return code, table.concat(out, '\n')
end

-- config returns the plugin's options in force (setup's, else the defaults).
local function config()
  local okp, pid = pcall(require, 'pid')
  local cfg = okp and pid.config() or nil
  return cfg or require('pid.state').defaults
end

local function check_binary(cfg)
  local cmd = cfg.cmd
  if type(cmd) == 'string' then
    cmd = { cmd }
  end
  local exe = cmd and cmd[1] and vim.fn.exepath(cmd[1]) or ''
  if exe == '' then
    report_error(('pid binary not found: %s'):format(vim.inspect(cmd and cmd[1])), {
      'Install a release binary (pid-VERSION-OS-ARCH.tar.gz) and put it on PATH,',
      'or build one with Go: make build (bin/pid), or go install github.com/pid-agent/pid/cmd/pid@latest,',
      'or give its path: require("pid").setup{cmd = {"/path/to/pid"}}',
    })
    return nil
  end
  local code, out = run({ exe, '--version' }, nil, cfg.env)
  local line = out and vim.split(out, '\n')[1] or ''
  if code ~= 0 or not line:match('^pid ') then
    report_error(('%s --version failed (%s): %s'):format(exe, code or out, line))
    return nil
  end
  ok(('pid binary: %s (%s)'):format(exe, line))
  return exe
end

local function check_neovim()
  local v = vim.version()
  local s = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if v.major == 0 and v.minor < 7 then
    report_error('Neovim ' .. s .. ': pid.nvim needs 0.7 or later')
  else
    ok('Neovim ' .. s)
  end
end

-- key_of says whether the environment pid starts in has name set (setup's env over Neovim's).
local function key_set(cfg, name)
  local v = cfg.env and cfg.env[name]
  if v == nil then
    v = vim.env[name]
  end
  return v ~= nil and vim.trim(tostring(v)) ~= ''
end

local function check_model(cfg, report)
  local m = cfg.model or (type(cfg.session) == 'table' and cfg.session.model) or nil
  local from = 'setup{model}'
  if m == nil and type(cfg.init_options) == 'table' then
    m = cfg.init_options.model
    from = 'setup{init_options.model}'
  end
  if m ~= nil then
    local name = ('%s/%s'):format(tostring(m.provider), tostring(m.id or ''))
    if m.provider ~= 'anthropic' and m.provider ~= 'openai' then
      ok(('model: %s (%s; needs no key)'):format(name, from))
      return
    end
    local var = m.apiKeyEnv or (m.provider == 'anthropic' and 'ANTHROPIC_API_KEY' or 'OPENAI_API_KEY')
    if key_set(cfg, var) then
      ok(('model: %s (%s); its key variable %s is set'):format(name, from, var))
    else
      warn(('model: %s (%s); its key variable %s is not set'):format(name, from, var),
        { 'export ' .. var .. ' before starting Neovim, or save a key with `pid login` in a terminal' })
    end
    return
  end
  if report.modelError then
    report_error('the user settings cannot be read: ' .. report.modelError)
    return
  end
  local sm = report.model
  if sm == nil or sm == vim.NIL then
    warn(('no model: none in setup{} nor in %s'):format(report.settings or 'the user settings'),
      { 'run `pid login` in a terminal (it saves a key and a default model),',
        'or require("pid").setup{model = {provider = "anthropic", id = "claude-sonnet-4-5"}}' })
    return
  end
  local name = ('%s/%s (%s)'):format(sm.provider, sm.id, report.settings)
  if sm.keyVariable == nil or sm.keyVariable == vim.NIL then
    ok('model: ' .. name)
  elseif sm.keySet then
    ok(('model: %s; its key variable %s is set'):format(name, sm.keyVariable))
  elseif sm.keySource ~= nil and sm.keySource ~= vim.NIL and sm.keySource ~= '' then
    ok(('model: %s; %s is not set, the key comes from %s'):format(name, sm.keyVariable, sm.keySource))
  elseif sm.keyError ~= nil and sm.keyError ~= vim.NIL then
    report_error(('model: %s; its key variable %s is not set'):format(name, sm.keyVariable),
      { 'export ' .. sm.keyVariable .. ' before starting Neovim, or save a key with `pid login` in a terminal' })
  else
    ok(('model: %s; %s is not set and the server needs no key'):format(name, sm.keyVariable))
  end
end

local function check_doctor(cfg, exe)
  local cwd = cfg.cwd or vim.fn.getcwd()
  local _, out = run({ exe, 'doctor', '--json' }, cwd, cfg.env)
  local okj, report = pcall(vim.fn.json_decode, out or '')
  if not okj or type(report) ~= 'table' or type(report.sandbox) ~= 'table' then
    report_error(('%s doctor --json gave no report (an older pid?): %s'):format(exe, tostring(out)))
    return
  end
  local sb = report.sandbox
  if sb.available then
    ok(('sandbox for bash: available (Landlock ABI %d, user namespaces %s, network namespace %s, PID namespace %s)')
      :format(sb.landlockAbi or 0, sb.userNamespaces and 'yes' or 'no', sb.networkNamespaces and 'yes' or 'no',
        sb.pidNamespaces and 'yes' or 'no'))
  else
    warn('sandbox for bash: NOT available: ' .. tostring(sb.reason),
      { 'bash refuses to run until the kernel gives the sandbox, or the settings say "sandbox": {"mode": "off"}' })
  end
  check_model(cfg, report)
  local f = report.folder or {}
  if f.trustError ~= nil and f.trustError ~= vim.NIL then
    warn('trusted folders cannot be read: ' .. f.trustError)
  elseif f.trusted then
    ok(('folder %s is trusted: its .pid/settings.json and instruction files apply'):format(f.path))
  else
    info(('folder %s is not trusted: its .pid/settings.json may only narrow what pid does, and its instruction files are left out until you trust it (pid asks at the first prompt)'):format(tostring(f.path)))
  end
end

-- check is what :checkhealth pid runs.
function M.check()
  start('pid')
  local cfg = config()
  local exe = check_binary(cfg)
  check_neovim()
  if exe then
    check_doctor(cfg, exe)
  end
end

return M
