-- The lazy.nvim spec of pid's README, as written, and :checkhealth pid (issue 34), headless:
-- health.sh runs it in a Neovim with no Go and no pid on PATH and its own XDG folders (the user
-- settings name an Anthropic model whose key variable is PID_HEALTH_TEST_KEY). The spec's
-- build runs with a stand-in for the clone (the repository's editor/ and the pid under test as
-- bin/pid), its config puts the plugin on the runtime path and starts it, and the report of
-- :checkhealth pid is read: the binary and its version, Neovim's version, the sandbox, the
-- model and its key variable (set, then unset: never its value), the folder's trust.

local root = assert(vim.env.PID_REPO, 'PID_REPO')
local pid_bin = assert(vim.env.PID_BIN, 'PID_BIN')
local secret = assert(vim.env.PID_HEALTH_TEST_KEY, 'PID_HEALTH_TEST_KEY')
local failures = 0

local function check(cond, fmt, ...)
  if cond then
    return
  end
  failures = failures + 1
  io.stdout:write('FAIL ' .. string.format(fmt, ...) .. '\n')
end

local function say(s)
  io.stdout:write(s .. '\n')
end

-- The spec: the ```lua block of README.md that starts with the "pid-agent/pid" line.
local readme = table.concat(vim.fn.readfile(root .. '/README.md'), '\n')
local block = readme:match('\n  ```lua\n(  {\n    "pid%-agent/pid",.-)\n  ```')
assert(block, 'no lazy.nvim spec for "pid-agent/pid" in README.md')
local spec = assert(loadstring('return ' .. block:gsub('\n  ', '\n'), 'README spec'))()
check(spec[1] == 'pid-agent/pid' and type(spec.build) == 'function' and type(spec.config) == 'function',
  'the spec names the repository and has build and config')

-- The clone lazy.nvim would make: the repository's editor/ folder, and no bin/ yet.
local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
vim.loop.fs_symlink(root .. '/editor', dir .. '/editor')
local plugin = { dir = dir, name = spec.name }

-- build without Go: it says to install a release binary, and fails nothing.
check(vim.fn.executable('go') == 0, 'go is not on PATH for this test')
local notes = {}
local notify = vim.notify
vim.notify = function(msg, level) table.insert(notes, { msg = msg, level = level }) end
local built_ok, built_err = pcall(spec.build, plugin)
vim.notify = notify
check(built_ok, 'build without Go failed: %s', tostring(built_err))
check(#notes == 1 and notes[1].msg:find('release binary', 1, true) and notes[1].level == vim.log.levels.WARN,
  'build without Go tells the person to install a release binary: %s', vim.inspect(notes))
say('ok - the spec\'s build without Go says to install a release binary')

-- What `make build` leaves in the clone; config then runs it.
vim.fn.mkdir(dir .. '/bin', 'p')
vim.loop.fs_symlink(pid_bin, dir .. '/bin/pid')
local opts = vim.deepcopy(spec.opts or {})
spec.config(plugin, opts)
check(vim.deep_equal(require('pid').config().cmd, { dir .. '/bin/pid' }), 'config runs the clone\'s bin/pid: %s',
  vim.inspect(require('pid').config().cmd))
check(vim.fn.exists(':PidChat') == 2, 'config made the commands')
say('ok - the spec\'s config puts the plugin on the runtime path and runs the clone\'s pid')

-- report runs :checkhealth pid and returns its buffer's text.
local function report()
  vim.cmd('silent checkhealth pid')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  return text
end

local text = report()
if vim.env.PID_HEALTH_DUMP then say(text) end
local has = function(s) return text:find(s, 1, true) ~= nil end
local v = vim.version()
check(has(('pid binary: %s/bin/pid (pid '):format(dir)), 'the binary and its version:\n%s', text)
check(has(('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch)), 'Neovim\'s version:\n%s', text)
check(has('sandbox for bash: available') or has('sandbox for bash: NOT available'), 'the sandbox:\n%s', text)
check(has('model: anthropic/claude-health-test (') and has('its key variable PID_HEALTH_TEST_KEY is set'),
  'the model and its key variable, set:\n%s', text)
check(has('is not trusted'), 'the folder\'s trust:\n%s', text)
check(not has(secret), 'the key\'s value is in the report:\n%s', text)
check(not text:find('ERROR'), 'an error with everything in place:\n%s', text)
say('ok - :checkhealth pid: binary, version, Neovim, sandbox, model with its key variable set, trust')

-- Without the key: the report says the variable is not set, as an error, and how to set it.
vim.env.PID_HEALTH_TEST_KEY = nil
text = report()
check(text:find('ERROR', 1, true) and text:find('its key variable PID_HEALTH_TEST_KEY is not set', 1, true),
  'the missing key:\n%s', text)
say('ok - :checkhealth pid: the key variable not set is an error')

-- A pid that is not there: the report says how to get one.
require('pid').setup({ cmd = { dir .. '/no-such-pid' } })
text = report()
check(text:find('pid binary not found', 1, true) and text:find('release binary', 1, true),
  'a missing binary:\n%s', text)
say('ok - :checkhealth pid: a missing binary says how to get one')

vim.fn.delete(dir, 'rf')
if failures > 0 then
  vim.cmd('cquit 1')
end
vim.cmd('qall!')
