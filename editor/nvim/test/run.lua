-- pid.nvim's test: the plugin, headless, against the real pid binary ($PID_BIN), with a
-- scripted model and scripted tools. Run it with test/run.sh, or:
--
--   PID_BIN=/path/to/pid timeout 60 nvim --headless -u NONE -i NONE -n \
--     --cmd "set rtp+=editor/nvim" -c "luafile editor/nvim/test/run.lua" </dev/null
--
-- vim.ui.select and vim.ui.input are replaced by scripted answers. Neovim exits 0 when every
-- check passed (:qa!), else non-zero (:cquit 1) after printing why and the run buffer.
--
-- PID_NVIM_TEST_XDG, when set, is a folder for the daemon's XDG_CONFIG_HOME/XDG_STATE_HOME,
-- passed with setup{env = ...}; the test checks that pid wrote its audit log there.

local STEP_TIMEOUT_MS = 10000 -- every wait is bounded by this
local uv = vim.uv or vim.loop

local passed = 0
local function say(fmt, ...)
  local line = string.format(fmt, ...)
  if line:find('ok - ', 1, true) == 1 then
    passed = passed + 1
  end
  io.stdout:write(line .. '\n')
  io.stdout:flush()
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

local pid_bin = os.getenv('PID_BIN')
check(pid_bin ~= nil and pid_bin ~= '', 'set PID_BIN to the pid binary')
pid_bin = vim.fn.fnamemodify(pid_bin, ':p')
check(vim.fn.executable(pid_bin) == 1, 'no pid binary at %s: build it (go build -o bin/pid ./cmd/pid)', pid_bin)

local xdg = os.getenv('PID_NVIM_TEST_XDG')
if xdg == nil or xdg == '' then
  xdg = vim.fn.tempname()
end
vim.fn.mkdir(xdg .. '/config', 'p')
vim.fn.mkdir(xdg .. '/state', 'p')

local pid = require('pid')
local view = require('pid.view')
local approval = require('pid.approval')

-- Scripted vim.ui.select: each approval takes the next answer of `answers`, each trust
-- question (kind "pid.trust") the next of `trust_answers`:
--   {choice = 'Allow'|'Always allow'|'Deny'|'Trust this folder'|...|nil, sync = bool,
--    never = bool, action = fn, when = fn}
-- (sync: answer inside the call; otherwise 20 ms later from a timer, or once when() is true;
-- never: do not answer, run action 50 ms later instead). 'Always allow' picks the item that
-- starts with "Always allow: " (it is labelled with its scope). Problems are recorded in
-- select_errors (an error raised in here would only become an error response to pid).
local answers = {}
local trust_answers = {}
local session_answers = {} -- {pick = fn(items) -> index or nil}
local asked = {}
local select_errors = {}
vim.ui.select = function(items, opts, on_choice)
  local kind = opts and opts.kind
  if kind == 'pid.session' then
    -- Saved sessions: items are session/list entries, shown through format_item.
    local shown = {}
    for i, it in ipairs(items) do
      shown[i] = opts.format_item and opts.format_item(it) or tostring(it)
    end
    table.insert(asked, { items = items, shown = shown, prompt = opts.prompt, kind = kind })
    local a = table.remove(session_answers, 1)
    if a == nil then
      table.insert(select_errors, 'unexpected session question: ' .. tostring(opts.prompt))
      vim.defer_fn(function() on_choice(nil, nil) end, 20)
      return
    end
    local idx = a.pick(items)
    vim.defer_fn(function() on_choice(idx and items[idx] or nil, idx) end, 20)
    return
  end
  table.insert(asked, { items = items, prompt = opts and opts.prompt, kind = kind })
  local a = table.remove(kind == 'pid.trust' and trust_answers or answers, 1)
  if a == nil then
    table.insert(select_errors, 'unexpected question: ' .. tostring(opts and opts.prompt))
    vim.defer_fn(function() on_choice(nil, nil) end, 20)
    return
  end
  if a.never then
    if a.action then
      vim.defer_fn(a.action, 50)
    end
    return
  end
  local idx = nil
  for i, it in ipairs(items) do
    if it == a.choice or (a.choice == 'Always allow' and it:find('Always allow: ', 1, true) == 1) then
      idx = i
    end
  end
  if a.choice ~= nil and idx == nil then
    table.insert(select_errors, 'answer ' .. a.choice .. ' is not among ' .. vim.inspect(items))
  end
  local item = idx and items[idx] or nil
  if a.sync then
    on_choice(item, idx)
  elseif a.when then
    local function poll()
      if a.when() then
        on_choice(item, idx)
      else
        vim.defer_fn(poll, 5)
      end
    end
    vim.defer_fn(poll, 5)
  else
    vim.defer_fn(function() on_choice(item, idx) end, 20)
  end
end

-- vim.notify is recorded (headless, it would print on stdout).
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

local inputs = {}
vim.ui.input = function(opts, on_confirm)
  table.insert(asked, { input = true, prompt = opts and opts.prompt })
  local text = table.remove(inputs, 1)
  vim.defer_fn(function() on_confirm(text) end, 10)
end

local function wait_for(what, cond)
  local ok = vim.wait(STEP_TIMEOUT_MS, cond, 5)
  if not ok then
    error(string.format('timed out after %d ms waiting for %s (status %s)', STEP_TIMEOUT_MS, what,
      vim.inspect(pid.status(), { newline = ' ', indent = '' }):sub(1, 600)), 2)
  end
end

local function text(s)
  return { { type = 'text', text = s } }
end

local function wait_run(n)
  wait_for('run ' .. n .. ' to finish', function()
    return pid.status().runs >= n
  end)
  local st = pid.status()
  check(st.last_error == nil, 'run %d failed: %s', n, tostring(st.last_error))
  check(#select_errors == 0, 'vim.ui.select: %s', table.concat(select_errors, '; '))
  return st.last_result
end

-- run_lines returns the run buffer's lines from the last header ">>> <prompt>" on.
local function run_lines(prompt)
  local lines = view.lines()
  local from = nil
  for i, l in ipairs(lines) do
    if l == '>>> ' .. prompt then
      from = i
    end
  end
  check(from ~= nil, 'no header for %q in the run buffer', prompt)
  return vim.list_slice(lines, from, #lines)
end

local function find(lines, pattern, what)
  for i, l in ipairs(lines) do
    if l:find(pattern, 1, true) == 1 then
      return i
    end
  end
  error(string.format('no line starting with %q (%s) in:\n  %s', pattern, what or '', table.concat(lines, '\n  ')), 2)
end

local function count(lines, prefix)
  local n = 0
  for _, l in ipairs(lines) do
    if l:find(prefix, 1, true) == 1 then
      n = n + 1
    end
  end
  return n
end

local function results(res)
  local out = {}
  for _, m in ipairs(res.messages) do
    if m.role == 'toolResult' then
      table.insert(out, { m.toolCallId, m.toolName, m.isError, (m.content[1] or {}).text })
    end
  end
  return out
end

-- of_kind returns the questions asked of one kind ("pid.approval" or "pid.trust").
local function of_kind(kind)
  local out = {}
  for _, a in ipairs(asked) do
    if a.kind == kind then
      table.insert(out, a)
    end
  end
  return out
end

local function has_line(line)
  for _, l in ipairs(view.lines()) do
    if l == line then
      return true
    end
  end
  return false
end

local function has_line_prefix(prefix)
  for _, l in ipairs(view.lines()) do
    if l:find(prefix, 1, true) == 1 then
      return true
    end
  end
  return false
end

local function roles(messages)
  local r = {}
  for _, m in ipairs(messages) do
    table.insert(r, m.role)
  end
  return r
end

local function run()
  say('%s, plugin %s, pid %s', vim.fn.execute('version'):match('NVIM v[^\n]+'), vim.api.nvim_get_runtime_file('lua/pid/init.lua', false)[1], pid_bin)

  pid.setup({
    cmd = { pid_bin },
    env = { XDG_CONFIG_HOME = xdg .. '/config', XDG_STATE_HOME = xdg .. '/state' },
    session = {
      model = { provider = 'script', turns = {
        { content = {
          { type = 'toolCall', id = 'a', name = 'slow', arguments = vim.empty_dict() },
          { type = 'toolCall', id = 'b', name = 'fast', arguments = { path = 'x.txt' } },
        } },
        { content = text('all done:\nboth tools ran') },
      } },
      scriptedTools = {
        { name = 'slow', steps = {
          -- Each ends its last word: pid holds an unfinished one back (it may be a secret's start).
          { update = { content = text('half\n') } },
          { update = { content = text('three quarters\n') } },
          { waitForEnd = 'b' },
          { result = { content = text('slow ok') } },
        } },
        { name = 'fast', requiresApproval = true, steps = {
          { result = { content = text('fast ok') } },
        } },
      },
    },
  })
  for _, c in ipairs({ 'PidAsk', 'PidCancel', 'PidNew', 'PidSessions', 'PidShow', 'PidStop' }) do
    eq(vim.fn.exists(':' .. c), 2, ':' .. c .. ' exists')
  end
  eq(pid.status().started, false, 'pid started before the first prompt (it starts lazily)')

  -- 1. A parallel batch: slow (a) reports progress and ends only after fast (b) ended; b needs
  -- approval, answered Allow. :PidAsk without text asks with vim.ui.input.
  inputs = { 'go' }
  answers = { { choice = 'Allow' } }
  vim.cmd('PidAsk')
  local res = wait_run(1)
  local st = pid.status()
  eq(st.server_info and st.server_info.name, 'pid', 'serverInfo.name')
  check(asked[1].input, 'the first question should be vim.ui.input')
  eq(#asked, 2, 'questions asked (input, then one approval)')
  eq(#asked[2].items, 3, 'approval choices: ' .. vim.inspect(asked[2].items))
  eq({ asked[2].items[1], asked[2].items[3] }, { 'Allow', 'Deny' }, 'approval choices')
  check(asked[2].items[2]:match('^Always allow: .*fast'), 'the always choice is labelled with its scope: %q', asked[2].items[2])
  check(asked[2].prompt:find('fast', 1, true) and asked[2].prompt:find('x.txt', 1, true),
    'approval prompt should name the tool and its args: %q', asked[2].prompt)

  local buf = pid.bufnr()
  eq(vim.api.nvim_buf_get_name(buf), 'pid://run', 'run buffer name')
  eq(vim.bo[buf].buftype, 'nofile', 'run buffer buftype')
  check(vim.fn.bufwinid(buf) ~= -1, 'the run buffer should be shown in a window')

  local L = run_lines('go')
  local start_a, start_b = find(L, '[start] slow (a) {}'), find(L, '[start] fast (b) {"path":"x.txt"}')
  local ask_b = find(L, '[approval] fast (b): allow')
  local end_a, end_b = find(L, '[end] slow (a) ok: slow ok'), find(L, '[end] fast (b) ok: fast ok')
  local p1, p2 = find(L, '[progress] slow (a): half'), find(L, '[progress] slow (a): three quarters')
  check(start_a < start_b, 'toolStart in source order: a (#%d) before b (#%d)', start_a, start_b)
  check(ask_b < end_b, 'the approval (#%d) before b ends (#%d)', ask_b, end_b)
  check(end_b < end_a, 'tool ends in completion order: b (#%d) before a (#%d)', end_b, end_a)
  check(start_a < p1 and p1 < p2 and p2 < end_a, 'progress of a (#%d, #%d) between its start (#%d) and end (#%d)', p1, p2, start_a, end_a)
  eq(count(L, '[end] '), 2, 'tool end lines')
  eq(count(L, '[progress] '), 2, 'progress lines')
  local ans1, ans2, done = find(L, 'all done:'), find(L, 'both tools ran'), find(L, '[done] stop')
  check(end_a < ans1 and ans1 + 1 == ans2 and ans2 < done, 'the answer (#%d, #%d) after the tools and before [done] (#%d)', ans1, ans2, done)
  eq(done, #L, 'the run ends with its [done] line')
  eq(res.stopReason, 'stop', 'stopReason')
  eq(roles(res.messages), { 'user', 'assistant', 'toolResult', 'toolResult', 'assistant' }, 'message roles')
  eq(results(res), { { 'a', 'slow', false, 'slow ok' }, { 'b', 'fast', false, 'fast ok' } }, 'tool results in source order')
  say('ok - parallel batch: ends b (#%d) then a (#%d), progress before its end, results [a, b], answer shown', end_b, end_a)

  -- 2. Approvals in one batch: c dismissed (deny), d "Always allow" (answered synchronously),
  -- e the same tool as d: not asked again.
  pid.new_session({
    model = { provider = 'script', turns = {
      { content = {
        { type = 'toolCall', id = 'c', name = 'fast', arguments = { path = 'c.txt' } },
        { type = 'toolCall', id = 'd', name = 'guarded', arguments = { n = 1 } },
        { type = 'toolCall', id = 'e', name = 'guarded', arguments = { n = 2 } },
      } },
      { content = text('after approvals') },
    } },
    scriptedTools = {
      { name = 'fast', requiresApproval = true, steps = { { result = { content = text('fast ok') } } } },
      { name = 'guarded', requiresApproval = true, steps = { { result = { content = text('guarded ok') } } } },
    },
  })
  asked = {}
  answers = { { choice = nil }, { choice = 'Always allow', sync = true } }
  vim.cmd('PidAsk approvals please')
  res = wait_run(2)
  eq(#asked, 2, 'approval questions (c, d; e is remembered)')
  L = run_lines('approvals please')
  local ask_c, end_c = find(L, '[approval] fast (c): deny (dismissed)'), find(L, '[end] fast (c) error: The user denied this call of fast.')
  local ask_d = find(L, '[approval] guarded (d): allowAlways')
  check(ask_c < end_c and end_c < ask_d, 'c asked (#%d), c ended (#%d), then d asked (#%d)', ask_c, end_c, ask_d)
  find(L, '[end] guarded (d) ok: guarded ok')
  find(L, '[end] guarded (e) ok: guarded ok')
  eq(count(L, '[approval] '), 2, 'approval lines')
  find(L, 'after approvals')
  find(L, '[done] stop')
  eq(results(res), {
    { 'c', 'fast', true, 'The user denied this call of fast.' },
    { 'd', 'guarded', false, 'guarded ok' },
    { 'e', 'guarded', false, 'guarded ok' },
  }, 'tool results after approvals')
  say('ok - approvals: dismissed = deny, "Always allow" remembered for the next call')

  -- 3. :PidCancel while a tool sleeps: the run ends with stopReason aborted.
  pid.new_session({
    model = { provider = 'script', turns = {
      { content = { { type = 'toolCall', id = 'z', name = 'sleepy', arguments = vim.empty_dict() } } },
      { content = text('must not be reached') },
    } },
    scriptedTools = { { name = 'sleepy', steps = { { sleepMs = 30000 }, { result = { content = text('woke up') } } } } },
  })
  local t0 = uv.hrtime()
  vim.cmd('PidAsk sleep')
  wait_for('the sleeping tool to start', function()
    for _, l in ipairs(view.lines()) do
      if l == '[start] sleepy (z) {}' then
        return true
      end
    end
    return false
  end)
  eq(pid.ask('again'), false, 'a second prompt while one runs')
  check(notes[#notes] and notes[#notes].msg:find('running', 1, true), 'a second prompt should be refused with a message: %s', vim.inspect(notes[#notes]))
  vim.cmd('PidCancel')
  res = wait_run(3)
  local ms = (uv.hrtime() - t0) / 1e6
  check(ms < STEP_TIMEOUT_MS, 'the cancelled prompt took %d ms', ms)
  L = run_lines('sleep')
  local c1, z_end, ab = find(L, '[cancel]'), find(L, '[end] sleepy (z) error:'), find(L, '[done] aborted')
  check(c1 < z_end and z_end < ab and ab == #L, 'cancel (#%d), end of z (#%d), [done] aborted last (#%d)', c1, z_end, ab)
  eq(res.stopReason, 'aborted', 'stopReason after :PidCancel')
  eq(roles(res.messages), { 'user', 'assistant', 'toolResult' }, 'messages after the cancel')
  check(not table.concat(L, '\n'):find('must not be reached', 1, true), 'no model call after the cancel')
  say('ok - :PidCancel during a sleeping tool: [done] aborted after %d ms', ms)

  -- 4. :PidCancel while an approval question is open (the picker never answers): pid
  -- withdraws it, the wait ends, the call's result is "Operation aborted".
  pid.new_session({
    model = { provider = 'script', turns = {
      { content = { { type = 'toolCall', id = 'w', name = 'fast', arguments = vim.empty_dict() } } },
      { content = text('must not be reached') },
    } },
    scriptedTools = { { name = 'fast', requiresApproval = true, steps = { { result = { content = text('fast ok') } } } } },
  })
  asked = {}
  answers = { { never = true, action = function() vim.cmd('PidCancel') end } }
  vim.cmd('PidAsk wait for me')
  res = wait_run(4)
  eq(#asked, 1, 'approval questions')
  L = run_lines('wait for me')
  local aw, ew = find(L, '[approval] fast (w): deny (withdrawn)'), find(L, '[end] fast (w) error: Operation aborted')
  find(L, '[done] aborted')
  check(aw < ew, 'withdrawn (#%d) before the end of w (#%d)', aw, ew)
  eq(results(res), { { 'w', 'fast', true, 'Operation aborted' } }, 'results after cancelling during an approval')
  eq(pid.status().pending_approvals, 0, 'open approval questions')
  say('ok - :PidCancel while an approval is open: withdrawn, Operation aborted')

  -- 4b. The same, cancelled behind the plugin's back (a raw $/cancelRequest): pid withdraws
  -- its approval request with $/cancelRequest, the question ends as withdrawn, in place.
  pid.new_session()
  asked = {}
  local before = pid.status().withdrawals
  answers = { { never = true, action = function()
    pid._debug.client().notify('$/cancelRequest', { id = pid._debug.run().id })
  end } }
  vim.cmd('PidAsk withdraw it')
  res = wait_run(5)
  eq(#asked, 1, 'approval questions')
  eq(pid.status().withdrawals, before + 1, "pid's withdrawals")
  L = run_lines('withdraw it')
  local wd, we, wdone = find(L, '[approval] fast (w): deny (withdrawn)'), find(L, '[end] fast (w) error: Operation aborted'), find(L, '[done] aborted')
  check(wd < we and we < wdone and wdone == #L, 'withdrawn (#%d), end of w (#%d), [done] last (#%d)', wd, we, wdone)
  check(not table.concat(L, '\n'):find('[cancel]', 1, true), 'the plugin did not cancel this one itself')
  eq(results(res), { { 'w', 'fast', true, 'Operation aborted' } }, 'results after pid withdrew the approval')
  say("ok - pid's $/cancelRequest withdraws an open approval")

  -- 5. The 0.9+ way to wait for vim.ui.select: inside a coroutine (as vim.lsp.rpc 0.9+
  -- calls server_request), the handler yields and the select callback resumes it.
  answers = { { choice = 'Deny' } }
  local got = nil
  local co = coroutine.create(function()
    got = approval.before({ sessionId = 'none', toolCallId = 'q', toolName = 't', args = vim.empty_dict() }, function() end)
  end)
  local ok, err = coroutine.resume(co)
  check(ok, 'approval.before in a coroutine failed: %s', tostring(err))
  eq(coroutine.status(co), 'suspended', 'the handler yielded while the question was open')
  wait_for('the coroutine to resume', function() return got ~= nil end)
  eq(got, { decision = 'deny' }, 'decision from the coroutine path')
  say('ok - approval in a coroutine (the 0.9+ path): yielded, resumed with the answer')

  -- 5b. rpc.start's two signatures (only 0.7's runs for real here): the arguments it passes.
  local rpcmod = require('pid.rpc')
  local real_start, real_has = vim.lsp.rpc.start, rpcmod.has_010
  local calls = {}
  vim.lsp.rpc.start = function(...)
    table.insert(calls, { n = select('#', ...), ... })
    return { fake = true }
  end
  local d, extra = { notification = function() end }, { cwd = '/', env = { A = '1' } }
  local ok10, ok07
  rpcmod.has_010 = true
  ok10 = pcall(rpcmod.start, { pid_bin, '--x' }, d, extra)
  rpcmod.has_010 = false
  ok07 = pcall(rpcmod.start, { pid_bin, '--x' }, d, extra)
  vim.lsp.rpc.start, rpcmod.has_010 = real_start, real_has
  check(ok10 and ok07, 'rpc.start failed with a stub')
  eq(calls[1], { n = 3, { pid_bin, '--x' }, d, extra }, '0.10+ start(cmd_list, dispatchers, extra)')
  eq(calls[2], { n = 4, pid_bin, { '--x' }, d, extra }, '0.7 start(cmd, args, dispatchers, extra)')
  say('ok - rpc.start: 0.10+ and 0.7 signatures')

  -- 6. The daemon used the environment given in setup{env}, and :PidStop ends it cleanly.
  check(vim.fn.filereadable(xdg .. '/state/pid/audit.log') == 1, 'pid wrote no audit log under setup{env}.XDG_STATE_HOME (%s)', xdg)
  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil end)
  eq(pid.status().exit.code, 0, 'pid exit code after :PidStop')
  eq(pid.status().started, false, 'started after :PidStop')
  say('ok - setup{env} reached pid; :PidStop: pid exited with code 0')

  -- 7. Trust declined. A workspace whose .pid/settings.json allows writes under notes/; pid
  -- (started again, in that folder) asks whether to trust it; "Keep restricted": the allow
  -- rule is ignored, so a write of notes/a.txt asks.
  local tws = vim.fn.tempname()
  vim.fn.mkdir(tws .. '/.pid', 'p')
  vim.fn.writefile({ '{"permissions":{"tools":{"write":[{"pattern":"notes/**","decision":"allow"}]}}}' }, tws .. '/.pid/settings.json')
  tws = uv.fs_realpath(tws)
  vim.cmd('cd ' .. vim.fn.fnameescape(tws))
  local ignored = 'permissions.tools["write"][0] allow "notes/**"'
  local function write_session(id, file)
    return { model = { provider = 'script', turns = {
      { content = { { type = 'toolCall', id = id, name = 'write', arguments = { path = file, content = id .. '\n' } } } },
      { content = text('written') },
    } } }
  end
  pid.new_session(write_session('w1', 'notes/a.txt'))
  asked = {}
  trust_answers = { { choice = 'Keep restricted' } }
  answers = { { choice = 'Allow' } }
  vim.cmd('PidAsk write a')
  res = wait_run(6)
  wait_for('the trust answer', function() return has_line('[trust] ' .. tws .. ': kept restricted') end)
  local tq = of_kind('pid.trust')
  eq(#tq, 1, 'trust questions')
  eq(tq[1].items, { 'Trust this folder', 'Keep restricted' }, 'trust choices')
  check(tq[1].prompt:find(tws, 1, true) and tq[1].prompt:find(ignored, 1, true),
    'the trust question should name the folder and the ignored rule: %q', tq[1].prompt)
  check(has_line('[trust] ' .. tws .. ' is not trusted; its .pid/settings.json would enable: ' .. ignored), 'the run buffer shows the question')
  local aq = of_kind('pid.approval')
  eq(#aq, 1, 'approvals: the write asked')
  eq(aq[1].items, { 'Allow', 'Always allow: write calls on the path `notes/a.txt` in this workspace', 'Deny' }, 'write approval choices')
  find(run_lines('write a'), '[approval] write (w1): allow')
  eq(results(res), { { 'w1', 'write', false, 'Created notes/a.txt (1 line, 3 B).' } }, 'the write ran')
  eq(vim.fn.readfile(tws .. '/notes/a.txt'), { 'w1' }, 'notes/a.txt')
  say('ok - trust declined: the workspace allow rule is ignored, the write asked')

  -- 8. Trust granted, answered only after the first run ended (a run's end does not withdraw
  -- a trust question). Once pid says the trust is in force, a write of notes/ in a new session
  -- runs without asking.
  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil end)
  pid.new_session({ model = { provider = 'script', turns = { { content = text('hello') } } } })
  asked = {}
  trust_answers = { { choice = 'Trust this folder', when = function() return pid.status().runs >= 7 end } }
  answers = {}
  vim.cmd('PidAsk hi')
  wait_run(7)
  local in_force = '[log] pid: ' .. tws .. ' is trusted: its settings apply in full from now on'
  wait_for("pid's log message that the trust is in force", function() return has_line(in_force) end)
  check(has_line('[trust] ' .. tws .. ': trusted'), 'the run buffer shows the answer')
  eq(#of_kind('pid.trust'), 1, 'trust questions')
  pid.new_session(write_session('w2', 'notes/b.txt'))
  vim.cmd('PidAsk write b')
  res = wait_run(8)
  eq(#of_kind('pid.approval'), 0, 'approvals: the folder allows writes under notes/ now')
  eq(results(res), { { 'w2', 'write', false, 'Created notes/b.txt (1 line, 3 B).' } }, 'the write ran')
  eq(vim.fn.readfile(tws .. '/notes/b.txt'), { 'w2' }, 'notes/b.txt')
  -- trust/list lists it; revoked, it is gone, and revoking again fails.
  local listed, revoked, again = nil, nil, nil
  check(pid.trusted_folders(function(err, folders) listed = { err = err, folders = folders } end), 'trusted_folders while pid runs')
  wait_for('trust/list', function() return listed ~= nil end)
  eq(listed.err, nil, 'trust/list error')
  eq(#listed.folders, 1, 'trusted folders')
  eq(listed.folders[1].folder, tws, 'the trusted folder')
  check(pid.revoke_trust(tws, function(err) revoked = { err = err } end), 'revoke_trust while pid runs')
  wait_for('trust/revoke', function() return revoked ~= nil end)
  eq(revoked.err, nil, 'trust/revoke error')
  check(pid.revoke_trust(tws, function(err) again = { err = err } end), 'revoke_trust again')
  wait_for('the second trust/revoke', function() return again ~= nil end)
  check(type(again.err) == 'string' and again.err:find('not a trusted folder', 1, true), 'revoking twice: %s', vim.inspect(again))
  say('ok - trust granted (after the run ended): a write of notes/ in a new session did not ask; listed, revoked')

  -- 9. The scope of "Always allow": offered for `npm test`, labelled with what it covers; not
  -- offered for `echo $(date)`, which pid cannot scope as narrowly as the call.
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'b1', name = 'bash', arguments = { command = 'echo $(date)' } } } },
    { content = { { type = 'toolCall', id = 'b2', name = 'bash', arguments = { command = 'npm test' } } } },
    { content = text('both denied') },
  } } })
  asked = {}
  answers = { { choice = 'Deny' }, { choice = 'Deny' } }
  vim.cmd('PidAsk run them')
  res = wait_run(9)
  aq = of_kind('pid.approval')
  eq(#aq, 2, 'approvals')
  eq(aq[1].items, { 'Allow', 'Deny' }, 'choices for echo $(date)')
  eq(aq[2].items, { 'Allow', 'Always allow: bash commands starting with `npm test` in this workspace', 'Deny' }, 'choices for npm test')
  check(aq[2].prompt:find('npm test', 1, true), 'the prompt shows the command: %q', aq[2].prompt)
  L = run_lines('run them')
  find(L, '[approval] bash (b1): deny')
  find(L, '[approval] bash (b2): deny')
  eq(results(res), {
    { 'b1', 'bash', true, 'The user denied this call of bash.' },
    { 'b2', 'bash', true, 'The user denied this call of bash.' },
  }, 'both denied')
  say('ok - "Always allow" offered with its scope for npm test, not for echo $(date)')


  -- 10. Saved sessions: a session prompted in one pid, pid stopped, :PidSessions in the next
  -- pid lists it (title, folder, when), loads it into the run buffer as the live run showed
  -- it, and the next :PidAsk continues it (the scripted model plays its third turn). In a
  -- folder of its own (pid was stopped at the end of 9: it starts there).
  vim.cmd('PidStop')
  local sws = vim.fn.tempname()
  vim.fn.mkdir(sws, 'p')
  sws = uv.fs_realpath(sws)
  vim.cmd('cd ' .. vim.fn.fnameescape(sws))
  pid.new_session({
    model = { provider = 'script', turns = {
      { content = { { type = 'toolCall', id = 'c1', name = 'probe', arguments = { path = 'a.txt' } } } },
      { content = text('probed') },
      { content = text('second answer') },
    } },
    scriptedTools = { { name = 'probe', steps = { { result = { content = text('ok') } } } } },
  })
  asked = {}
  vim.cmd('PidAsk Probe it, please.')
  wait_run(10)
  local live = run_lines('Probe it, please.')
  eq(live, { '>>> Probe it, please.', '[start] probe (c1) {"path":"a.txt"}', '[end] probe (c1) ok: ok', 'probed', '[done] stop' }, 'the live run')
  local sid = pid.status().session_id
  check(type(sid) == 'string', 'a session id')
  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil and not pid.status().started end)

  session_answers = { { pick = function(items)
    for i, it in ipairs(items) do
      if it.sessionId == sid then
        return i
      end
    end
  end } }
  local loaded = nil
  check(pid.sessions({ on_done = function(err, r) loaded = { err = err, result = r } end }), ':PidSessions started')
  wait_for('the session to load', function() return loaded ~= nil end)
  eq(loaded.err, nil, 'load error')
  eq(pid.status().session_id, sid, 'the loaded session is the current one')
  local sq = of_kind('pid.session')
  eq(#sq, 1, 'session pickers')
  eq(sq[1].prompt, 'Resume which session?', 'the picker prompt')
  eq(sq[1].items[1].sessionId, sid, 'the newest session first')
  eq(sq[1].items[1].title, 'Probe it, please.', 'its title')
  eq(sq[1].items[1].cwd, sws, 'its folder')
  eq(sq[1].items[1].messageCount, 4, 'its messages')
  local shown1 = sq[1].shown[1]
  check(shown1 == 'Probe it, please. | ' .. sws .. ' | just now, 4 messages'
    or shown1 == 'Probe it, please. | ' .. sws .. ' | 1 minute ago, 4 messages',
    'the picker line (title | folder | when, messages): %q', shown1)
  eq(#sq[1].items, 10, 'every saved session is listed (each earlier run had its own)')
  for i = 2, #sq[1].items do
    local sm_ = require('pid.sessions')
    check(sm_.parse_time(sq[1].items[i - 1].updatedAt) >= sm_.parse_time(sq[1].items[i].updatedAt), 'newest first: %s before %s', sq[1].items[i - 1].updatedAt, sq[1].items[i].updatedAt)
  end
  local all = view.lines()
  local head = nil
  for i, l in ipairs(all) do
    if l == string.format('[session] resumed %s "Probe it, please." (4 messages, in %s)', sid, sws) then
      head = i
    end
  end
  check(head ~= nil, 'no [session] resumed line in:\n  %s', table.concat(all, '\n  '))
  eq(all[head + 1], '', 'a blank line before the first prompt, as before a live run')
  eq(vim.list_slice(all, head + 2, head + 1 + #live), live, 'the transcript reads as the live run did')
  eq(all[head + 2 + #live], '[session] end of the saved transcript: :PidAsk continues this session', 'the last line')
  eq(head + 2 + #live, #all, 'nothing after it')
  vim.cmd('PidAsk Again?')
  res = wait_run(11)
  eq(pid.status().session_id, sid, 'the same session')
  eq(res.messages[#res.messages].content[1].text, 'second answer', "the saved model's third turn")
  find(run_lines('Again?'), 'second answer')
  say('ok - :PidSessions in a new pid: listed (title, folder, when), transcript as the live run, :PidAsk continues it')

  -- 11. A session another pid holds: said in words, nothing changes; once closed there, it
  -- loads. The other pid is started here, with the same state folder.
  local other_exit = nil
  local other = require('pid.rpc').start({ pid_bin }, {
    notification = function() end,
    server_request = function() return nil, vim.lsp.rpc.rpc_response_error(-32601, 'no') end,
    on_exit = function(code) other_exit = code end,
    on_error = function() end,
  }, { cwd = sws, env = { XDG_CONFIG_HOME = xdg .. '/config', XDG_STATE_HOME = xdg .. '/state' } })
  check(other ~= nil, 'the second pid started')
  local function other_call(method, params)
    local got = nil
    other.request(method, params, function(err, r) got = { err = err, result = r } end)
    wait_for('the second pid to answer ' .. method, function() return got ~= nil end)
    return got
  end
  local uri = vim.uri_from_fname(sws)
  eq(other_call('initialize', { processId = vim.NIL, rootUri = uri, workspaceFolders = { { uri = uri, name = 'ws' } }, capabilities = vim.empty_dict() }).err, nil, 'initialize')
  other.notify('initialized', vim.empty_dict())
  vim.cmd('PidStop')
  wait_for('pid to exit (and let go of the session)', function() return pid.status().exit ~= nil end)
  local ol = other_call('session/load', { sessionId = sid })
  check(ol.err == nil, 'the second pid loads the session: %s %s %s', tostring(ol.err), type(ol.err) == 'table' and tostring(ol.err.code) or '', type(ol.err) == 'table' and tostring(ol.err.message) or '')
  notes = {}
  session_answers = { { pick = function() return 1 end } }
  loaded = nil
  vim.cmd('PidSessions')
  wait_for('the refused load', function() return #of_kind('pid.session') == 2 and not pid.status().loading and has_line_prefix('[error] the session ' .. sid) end)
  local held = string.format('[error] the session %s is open in another pid (another Neovim or editor, or a pid still running): close it there, or quit that editor, then :PidSessions again. pid says: ', sid)
  local held_line = nil
  for _, l in ipairs(view.lines()) do
    if l:find(held, 1, true) == 1 then
      held_line = l
    end
  end
  check(held_line ~= nil and held_line:find('process %d+'), 'the run buffer says who holds it: %s', tostring(held_line))
  check(notes[#notes] and notes[#notes].msg == held_line:sub(#'[error] ' + 1), 'notified in the same words: %s', vim.inspect(notes[#notes]))
  eq(pid.status().session_id, nil, 'no current session')
  eq(other_call('session/close', { sessionId = sid }).err, nil, 'closed in the second pid')
  loaded = nil
  check(pid.load_session(sid, { on_done = function(err, r) loaded = { err = err, result = r } end }), 'load_session')
  wait_for('the load', function() return loaded ~= nil end)
  eq(loaded.err, nil, 'load error once closed there')
  eq(pid.status().session_id, sid, 'loaded')
  -- An id pid does not know.
  loaded = nil
  pid.load_session('no-such-session', { on_done = function(err) loaded = { err = err } end })
  wait_for('the unknown load', function() return loaded ~= nil end)
  check(type(loaded.err) == 'string' and loaded.err:find('pid has no saved session no-such-session any more', 1, true) == 1, 'unknown id: %s', tostring(loaded.err))
  eq(pid.status().session_id, sid, 'the current session is unchanged')
  other.request('shutdown', nil, function() other.notify('exit', nil) end)
  wait_for('the second pid to exit', function() return other_exit ~= nil end)
  eq(other_exit, 0, "the second pid's exit code")
  say('ok - a session another pid holds: said in words (process named); loaded once closed there; an unknown id said too')

  -- 12. Compaction: shown live as it starts and ends, and in the loaded transcript where it
  -- happened.
  local big = string.rep('x', 4000) -- about 1000 tokens
  pid.new_session({ model = { provider = 'script', contextWindow = 20000,
    compaction = { reserveTokens = 2000, keepRecentTokens = 1500 }, turns = {
      { content = text('one'), usage = { input = 3000, output = 10 } },
      -- Past the threshold (20000 - 2000): the next prompt compacts before its model call.
      { content = text('two'), usage = { input = 19000, output = 10 } },
      { content = text('## Goal\nsummary one') },
      { content = text('three') },
    } } })
  pid.ask('a ' .. big)
  wait_run(12)
  pid.ask('b ' .. big)
  wait_run(13)
  pid.ask('c ' .. big)
  wait_run(14)
  local three = run_lines('a ' .. big)
  L = run_lines('c ' .. big)
  local cs = find(L, '[compaction] compacting the conversation (it neared the context window)...')
  local ce = find(L, '[compaction] the conversation was compacted (it neared the context window, ')
  check(ce == cs + 1 and L[ce]:match(', %d+ tokens before%); the model now sees this summary instead of the older messages:$'), 'the compaction lines: %s', L[ce])
  eq(vim.list_slice(L, ce + 1, ce + 3), { '    ## Goal', '    summary one', 'three' }, 'the summary, then the answer')
  local csid = pid.status().session_id
  -- Loaded at once after :PidStop: the next pid starts only once the stopped one has exited,
  -- which held the session.
  vim.cmd('PidStop')
  eq(pid.status().exit, nil, 'the stopped pid is still exiting')
  loaded = nil
  pid.load_session(csid, { on_done = function(err, r) loaded = { err = err, result = r } end })
  wait_for('the load', function() return loaded ~= nil end)
  eq(loaded.err, nil, 'load error')
  eq(roles(loaded.result.messages), { 'user', 'assistant', 'user', 'assistant', 'user', 'compaction', 'assistant' }, 'the items')
  all = view.lines()
  head = nil
  for i, l in ipairs(all) do
    if l:find('[session] resumed ' .. csid, 1, true) == 1 then
      head = i
    end
  end
  check(head ~= nil, 'no [session] resumed line')
  local want = { '' }
  for _, l in ipairs(three) do
    if l ~= '[compaction] compacting the conversation (it neared the context window)...' then
      table.insert(want, l)
    end
  end
  eq(vim.list_slice(all, head + 1, #all - 1), want, 'the transcript: the three runs, less the line saying a compaction starts')
  say('ok - compaction: live lines with the summary; in the loaded transcript where it happened')

  -- 13. Paging: more than one page of session/list (50 a page), newest first, up to max.
  pid.new_session({ model = { provider = 'script', turns = { { content = text('ok') } } } })
  local runs_before = pid.status().runs
  for i = 1, 45 do
    pid.new_session()
    pid.ask('page ' .. i)
    wait_run(runs_before + i)
  end
  local got = nil
  pid._list_sessions(500, function(err, list, more) got = { err = err, list = list, more = more } end)
  wait_for('session/list', function() return got ~= nil end)
  eq(got.err, nil, 'list error')
  eq(#got.list, 10 + 1 + 45, 'all sessions, over two pages')
  eq(got.more, false, 'nothing left out')
  eq(got.list[1].title, 'page 45', 'the newest first')
  eq(got.list[45].title, 'page 1', 'then the older ones')
  local ids = {}
  for _, x in ipairs(got.list) do
    check(not ids[x.sessionId], 'session %s listed twice', x.sessionId)
    ids[x.sessionId] = true
  end
  got = nil
  pid._list_sessions(52, function(err, list, more) got = { err = err, list = list, more = more } end)
  wait_for('session/list', function() return got ~= nil end)
  eq({ #got.list, got.more }, { 52, true }, 'up to max, saying more were left out')
  got = nil
  pid._list_sessions(50, function(err, list, more) got = { err = err, list = list, more = more } end)
  wait_for('session/list', function() return got ~= nil end)
  eq({ #got.list, got.more }, { 50, true }, 'exactly one page of max')
  say('ok - session/list paging: %d sessions over two pages, newest first; max respected', 10 + 1 + 45)

  -- 14. The picker line's pieces.
  local sm = require('pid.sessions')
  local now = sm.parse_time('2026-12-01T12:00:00Z')
  eq(sm.parse_time('2026-12-01T12:00:00.25Z'), now + 0.25, 'fractions of a second')
  check(sm.parse_time('2026-12-01T12:00:00.66Z') > sm.parse_time('2026-12-01T12:00:00.666Z') == false, '.66 is before .666')
  eq(sm.parse_time('2026-12-01T13:30:00+01:30'), now, 'an offset')
  eq(sm.parse_time('1970-01-01T00:00:00Z'), 0, 'the epoch')
  eq(sm.parse_time('2000-03-01T00:00:00Z'), 951868800, 'after a leap day')
  eq(sm.parse_time('yesterday'), nil, 'not a time')
  local function ago_(secs) return os.date('!%Y-%m-%dT%H:%M:%SZ', now - secs) end
  local rel = {}
  for _, secs in ipairs({ 10, -300, 60, 59 * 60, 3 * 3600 + 300, 86400 + 3600, 3 * 86400, 14 * 86400, 65 * 86400, 400 * 86400 }) do
    table.insert(rel, sm.relative_time(ago_(secs), now))
  end
  eq(rel, { 'just now', 'just now', '1 minute ago', '59 minutes ago', '3 hours ago', 'yesterday', '3 days ago', '2 weeks ago', '2 months ago', 'last year' }, 'relative times')
  eq(sm.short_folder('/home/me/src/x', '/home/me'), '~/src/x', 'short folder')
  eq(sm.short_folder('/home/mess', '/home/me'), '/home/mess', 'not under home')
  eq(sm.format_item({ sessionId = 's', cwd = '/home/me/w', title = 'fix\nthe  bug', updatedAt = ago_(3 * 3600), messageCount = 1 },
    { now = now, home = '/home/me', current = 's', workspace = '/home/me/other' }),
    'fix the bug | ~/w | 3 hours ago, 1 message, the current session, another folder: :cd there and :PidStop to resume it', 'a picker line')
  eq(sm.format_item({ sessionId = 't', cwd = '/w/sub', title = '', updatedAt = ago_(0), messageCount = 2 }, { now = now, workspace = '/w' }),
    '(no text) | /w/sub | just now, 2 messages', 'an untitled session in the workspace')
  local tl = pid._transcript_lines({
    { role = 'user', content = text('hi') },
    { role = 'assistant', content = { { type = 'text', text = 'Let me look.' }, { type = 'toolCall', id = 'c', name = 'ls', arguments = vim.empty_dict() } }, stopReason = 'toolUse' },
    { role = 'toolResult', toolCallId = 'c', content = text('a\nb'), isError = false },
    { role = 'assistant', content = {}, stopReason = 'error', errorMessage = 'the provider failed' },
    { role = 'mystery' },
    { role = 'user', content = text('again') },
    { role = 'compaction', summary = '', tokensBefore = 0, firstKeptIndex = 6, reason = 'manual' },
  })
  eq(tl, { '', '>>> hi', 'Let me look.', '[start] ls (c) {}', '[end] ls (c) ok: a (+1 lines)', '[error] the provider failed', '[done] error',
    '', '>>> again', '[compaction] the conversation was compacted (on request); the model now sees this summary instead of the older messages: (empty)',
    '[done] unfinished (pid stopped before the model answered?)' }, 'transcript lines')
  say('ok - picker lines (title | folder | when), ISO times as UTC, transcript lines')

  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil end)
  eq(pid.status().exit.code, 0, 'pid exit code after :PidStop')
end

local ok, err = xpcall(run, debug.traceback)
if ok then
  if os.getenv('PID_NVIM_TEST_DUMP') == '1' then
    say('-- run buffer:')
    for i, l in ipairs(view.lines()) do
      say('%3d  %s', i, l)
    end
  end
  say('PASS pid.nvim')
  say('pid.nvim: %d passed, 0 failed', passed)
  vim.cmd('qa!')
else
  say('FAIL pid.nvim: %s', tostring(err))
  say('pid.nvim: %d passed, 1 failed', passed)
  local okb, lines = pcall(view.lines)
  if okb then
    say('-- run buffer:')
    for i, l in ipairs(lines) do
      say('%3d  %s', i, l)
    end
  end
  say('-- status: %s', vim.inspect(pid.status()):sub(1, 3000))
  for _, n in ipairs(notes) do
    say('-- vim.notify: %s', tostring(n.msg))
  end
  vim.cmd('cquit 1')
end
