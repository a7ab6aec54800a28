-- pid.nvim's test: the plugin, headless, against the real pid binary ($PID_BIN), with a
-- scripted model and scripted tools. Run it with test/run.sh, or:
--
--   PID_BIN=/path/to/pid timeout 60 nvim --headless -u NONE -i NONE -n \
--     --cmd "set rtp+=editor/nvim" -c "luafile editor/nvim/test/run.lua" </dev/null
--
-- This file runs the cases, test/cases/*.lua in the order of their names, in this one Neovim,
-- with the harness test/lib.lua (each case is a function(t) of the harness's table). They run
-- one after another against the same pid state folder, so a case may rely on what the ones
-- before it left, and says so at its top: the sessions they saved (07, 08 count them), the
-- user settings' models (01 writes them, 12 picks one), Neovim's cwd (06 moves it to a
-- trusted folder, 07 to the folder where the cases after it run).
--
-- Neovim exits 0 when every check passed (:qa!), else non-zero (:cquit 1) after printing why,
-- the chat, the plugin's status and the notifications. PID_NVIM_TEST_DUMP=1 prints the chat
-- at the end of a passing run too. PID_NVIM_TEST_UNTIL=NN runs the cases up to the one whose
-- name starts with NN (the ones after it rely on it, never the ones before).

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
package.path = here .. '/?.lua;' .. package.path

local t = require('lib')
local say = t.say

local until_case = os.getenv('PID_NVIM_TEST_UNTIL')
if until_case == '' then
  until_case = nil
end

local function run()
  local cases = vim.fn.glob(here .. '/cases/*.lua', false, true)
  table.sort(cases)
  t.check(#cases > 0, 'no cases in %s/cases', here)
  for _, path in ipairs(cases) do
    local name = vim.fn.fnamemodify(path, ':t')
    say('# %s', name)
    local case = dofile(path)
    t.check(type(case) == 'function', '%s returns no function(t)', name)
    case(t)
    if until_case ~= nil and name:find(until_case, 1, true) == 1 then
      break
    end
  end
end

local ok, err = xpcall(run, debug.traceback)
if ok then
  if os.getenv('PID_NVIM_TEST_DUMP') == '1' then
    say('-- chat:')
    for i, l in ipairs(t.view.lines(true)) do
      say('%3d  %s', i, l)
    end
  end
  say('PASS pid.nvim')
  say('pid.nvim: %d passed, 0 failed', t.passed)
  vim.cmd('qa!')
else
  say('FAIL pid.nvim: %s', tostring(err))
  say('pid.nvim: %d passed, 1 failed', t.passed)
  local okb, lines = pcall(t.view.lines, true)
  if okb then
    say('-- chat:')
    for i, l in ipairs(lines) do
      say('%3d  %s', i, l)
    end
  end
  say('-- status: %s', vim.inspect(t.pid.status()):sub(1, 3000))
  for _, n in ipairs(t.notes) do
    say('-- vim.notify: %s', tostring(n.msg))
  end
  vim.cmd('cquit 1')
end
