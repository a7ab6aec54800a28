-- pid.nvim's test: the plugin, headless, against the real pid binary ($PID_BIN), with a
-- scripted model and scripted tools. Run it with test/run.sh, or:
--
--   PID_BIN=/path/to/pid timeout 60 nvim --headless -u NONE -i NONE -n \
--     --cmd "set rtp+=editor/nvim" -c "luafile editor/nvim/test/run.lua" </dev/null
--
-- Questions (approvals, trust) are answered as a person would: the test enters the float with
-- :PidApproval and types the key (nvim_feedkeys), from a script of answers; vim.ui.select and
-- vim.ui.input (saved sessions, models, :PidAsk without text) are replaced by scripted ones.
-- Neovim exits 0 when every check passed (:qa!), else non-zero (:cquit 1) after printing why
-- and the chat.
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
vim.fn.mkdir(xdg .. '/config/pid', 'p')
vim.fn.mkdir(xdg .. '/state', 'p')

local pid = require('pid')
local view = require('pid.view')
local approval = require('pid.approval')

-- Scripted answers to pid's questions. Each approval takes the next of `answers`, each trust
-- question the next of `trust_answers`: {key = 'a'|'A'|'d'|'q'|'t'|'r', never = bool, action =
-- fn, when = fn} (key: typed in the float after :PidApproval, 20 ms after it opened, or once
-- when() is true; never: not answered, action runs 50 ms later instead). Each question is
-- recorded in `asked` with its lines and keys, and whether the float had the cursor when it
-- opened. Problems are recorded in select_errors.
local answers = {}
local trust_answers = {}
local session_answers = {} -- {pick = fn(items) -> index or nil}
local model_answers = {} -- {pick = fn(items) -> index or nil}
local perm_answers = {} -- {pick = fn(items) -> index or nil}
local asked = {}
local select_errors = {}

local real_ask = approval.ask
approval.ask = function(q)
  local before_win = vim.api.nvim_get_current_win()
  local r = real_ask(q)
  local keys = {}
  for _, k in ipairs(q.keys) do
    keys[k.key] = k.label
  end
  local entry = { kind = q.kind, lines = vim.list_slice(q.lines, 1, #q.lines), keys = keys, q = q }
  entry.focused = vim.api.nvim_get_current_win() ~= before_win
  table.insert(asked, entry)
  local a = table.remove(q.kind == 'trust' and trust_answers or answers, 1)
  if a == nil then
    table.insert(select_errors, 'unexpected question: ' .. tostring(q.lines[1]))
    return r
  end
  entry.answer = a
  if a.never then
    if a.action then
      vim.defer_fn(a.action, 50)
    end
    return r
  end
  local function press()
    if q.done then
      return
    end
    if approval.current() ~= q or (a.when and not a.when()) then
      vim.defer_fn(press, 5)
      return
    end
    if keys[a.key] == nil then
      table.insert(select_errors, 'key ' .. a.key .. ' is not among ' .. vim.inspect(keys))
    end
    entry.float = approval.window()
    vim.cmd('PidApproval')
    entry.entered = vim.api.nvim_get_current_win() == entry.float
    vim.api.nvim_feedkeys(a.key, 'x', false)
  end
  vim.defer_fn(press, 20)
  return r
end

local asked_select = {}
vim.ui.select = function(items, opts, on_choice)
  local kind = opts and opts.kind
  local shown = {}
  for i, it in ipairs(items) do
    shown[i] = opts.format_item and opts.format_item(it) or tostring(it)
  end
  table.insert(asked_select, { items = items, shown = shown, prompt = opts.prompt, kind = kind })
  local list = kind == 'pid.model' and model_answers or kind == 'pid.permission' and perm_answers or session_answers
  local a = table.remove(list, 1)
  if a == nil then
    table.insert(select_errors, 'unexpected select: ' .. tostring(opts.prompt))
    vim.defer_fn(function() on_choice(nil, nil) end, 20)
    return
  end
  local idx = a.pick(items)
  vim.defer_fn(function() on_choice(idx and items[idx] or nil, idx) end, 20)
end

-- vim.notify is recorded (headless, it would print on stdout).
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

local inputs = {}
vim.ui.input = function(opts, on_confirm)
  table.insert(asked_select, { input = true, prompt = opts and opts.prompt })
  local text = table.remove(inputs, 1)
  vim.defer_fn(function() on_confirm(text) end, 10)
end

-- Whether streamed text reached the chat while the run still went on.
local streamed_while_running = false
local real_text_append = view.text_append
view.text_append = function(piece)
  real_text_append(piece)
  if piece ~= '\n' and pid.status().running then
    streamed_while_running = true
  end
end

-- Every change of a card, in order: {key, status, latest}.
local card_log = {}
local real_card_set = view.card_set
view.card_set = function(key, status, latest, output)
  real_card_set(key, status, latest, output)
  local c = view.card(key)
  if c then
    table.insert(card_log, { key = key, status = c.status, latest = c.latest })
  end
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
  check(#select_errors == 0, 'questions: %s', table.concat(select_errors, '; '))
  return st.last_result
end

-- run_lines returns the chat's lines (cards with their status, as shown) from the last
-- header ">>> <prompt>" on.
local function run_lines(prompt)
  local lines = view.lines(true)
  local from = nil
  for i, l in ipairs(lines) do
    if l == '>>> ' .. prompt then
      from = i
    end
  end
  check(from ~= nil, 'no header for %q in the chat', prompt)
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

-- of_kind returns the questions asked of one kind ("approval" or "trust").
local function of_kind(kind)
  local out = {}
  for _, a in ipairs(asked) do
    if a.kind == kind then
      table.insert(out, a)
    end
  end
  return out
end

local function selects(kind)
  local out = {}
  for _, a in ipairs(asked_select) do
    if a.kind == kind then
      table.insert(out, a)
    end
  end
  return out
end

local function has_line(line)
  for _, l in ipairs(view.lines(true)) do
    if l == line then
      return true
    end
  end
  return false
end

local function has_line_prefix(prefix)
  for _, l in ipairs(view.lines(true)) do
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

-- log_of returns the card changes of one card key: "status · latest" strings.
local function log_of(key)
  local out = {}
  for _, e in ipairs(card_log) do
    if e.key == key then
      table.insert(out, e.status .. (e.latest ~= '' and (' · ' .. e.latest) or ''))
    end
  end
  return out
end

local function contains(lines, s)
  for _, l in ipairs(lines) do
    if l == s then
      return true
    end
  end
  return false
end

local function user_texts(messages)
  local out = {}
  for _, m in ipairs(messages) do
    if m.role == 'user' then
      local t = {}
      for _, c in ipairs(m.content) do
        if c.type == 'text' then
          table.insert(t, c.text)
        end
      end
      table.insert(out, table.concat(t, '\n'))
    end
  end
  return out
end

local function run()
  say('%s, plugin %s, pid %s', vim.fn.execute('version'):match('NVIM v[^\n]+'), vim.api.nvim_get_runtime_file('lua/pid/init.lua', false)[1], pid_bin)

  -- The user settings list the models :PidModel offers (test 17): scripted ones.
  vim.fn.writefile({ vim.json.encode({ models = {
    { provider = 'script', id = 'alt', name = 'Alternative', turns = { { content = text('the alternative model answers') } } },
    { provider = 'script', id = 'other' },
  } }) }, xdg .. '/config/pid/settings.json')

  pid.setup({
    cmd = { pid_bin },
    env = { XDG_CONFIG_HOME = xdg .. '/config', XDG_STATE_HOME = xdg .. '/state' },
    open = 'botright 80vsplit',
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
          { update = { content = text('step 1\nstep 2\nthree quarters\n') } },
          { waitForEnd = 'b' },
          { result = { content = text('slow ok') } },
        } },
        { name = 'fast', requiresApproval = true, steps = {
          { result = { content = text('fast ok') } },
        } },
      },
    },
  })
  for _, c in ipairs({ 'PidAsk', 'PidChat', 'PidSteer', 'PidFollowUp', 'PidApproval', 'PidCancel', 'PidNew', 'PidSessions', 'PidModel', 'PidPermissions', 'PidResume', 'PidShow', 'PidStop' }) do
    eq(vim.fn.exists(':' .. c), 2, ':' .. c .. ' exists')
  end
  eq(pid.status().started, false, 'pid started before the first prompt (it starts lazily)')

  -- 1. A parallel batch: slow (a) reports progress and ends only after fast (b) ended; b needs
  -- approval, answered with `a` in the float. :PidAsk without text asks with vim.ui.input.
  inputs = { 'go' }
  answers = { { key = 'a' } }
  local code_win = vim.api.nvim_get_current_win()
  vim.cmd('PidAsk')
  local res = wait_run(1)
  local st = pid.status()
  local sid = st.session_id
  eq(st.server_info and st.server_info.name, 'pid', 'serverInfo.name')
  check(asked_select[1].input, 'the first question should be vim.ui.input')
  eq(#asked, 1, 'questions asked (one approval)')
  local q = asked[1]
  eq(q.focused, false, 'the approval float did not take the cursor when it opened')
  eq(q.entered, true, ':PidApproval put the cursor in the float')
  eq(q.keys, { a = 'allow', A = 'always allow: every call of the tool fast in this workspace', d = 'deny', q = 'dismiss (deny)' }, 'the keys of the float')
  check(contains(q.lines, 'A always allows every call of the tool fast in this workspace'), 'the float says what A covers: %s', vim.inspect(q.lines))
  check(q.lines[1]:find('fast x.txt', 1, true), 'the float names the tool and its path: %q', q.lines[1])
  eq(vim.api.nvim_get_current_win(), code_win, 'after the answer the cursor is back where it was')
  eq(approval.window(), nil, 'the float closed')

  local buf = pid.bufnr()
  eq(vim.api.nvim_buf_get_name(buf), 'pid://chat', 'chat buffer name')
  eq(vim.bo[buf].buftype, 'nofile', 'chat buftype')
  eq(vim.bo[buf].filetype, 'markdown', 'chat filetype')
  check(vim.fn.bufwinid(buf) ~= -1, 'the chat should be shown in a window')

  local L = run_lines('go')
  eq(L, {
    '>>> go',
    '[tool] slow {}  ok · slow ok',
    '[tool] fast x.txt  ok · fast ok',
    '[approval] fast (b): allow',
    'all done:',
    'both tools ran',
    '[done] stop',
  }, 'the chat after the run')
  -- The cards changed in place: a showed the LATEST line of its progress, then its result.
  local la, lb = log_of(sid .. '/a'), log_of(sid .. '/b')
  eq(la, { 'running', 'running · half', 'running · three quarters', 'ok · slow ok' }, "a's card over time")
  eq(lb, { 'waiting · waiting for your answer: :PidApproval', 'running', 'running', 'ok · fast ok' }, "b's card over time")
  local b_ok, a_ok
  for i, e in ipairs(card_log) do
    if e.key == sid .. '/b' and e.status == 'ok' then b_ok = i end
    if e.key == sid .. '/a' and e.status == 'ok' then a_ok = i end
  end
  check(b_ok < a_ok, 'b ended (#%d) before a (#%d): completion order', b_ok, a_ok)
  eq(view.card(sid .. '/a').line, find(view.lines(true), '[tool] slow {}'), "a's card kept its line")
  eq(streamed_while_running, true, 'the answer was shown while the run went on (streamed)')
  -- <CR> on a card opens the call's whole output.
  local chat_win = vim.fn.bufwinid(buf)
  vim.api.nvim_set_current_win(chat_win)
  vim.api.nvim_win_set_cursor(chat_win, { view.card(sid .. '/a').line, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  eq(vim.api.nvim_buf_get_lines(0, 0, -1, false), { '[tool] slow {}', '', 'slow ok' }, 'the output view')
  vim.cmd('close')
  vim.api.nvim_set_current_win(code_win)
  eq(res.stopReason, 'stop', 'stopReason')
  eq(roles(res.messages), { 'user', 'assistant', 'toolResult', 'toolResult', 'assistant' }, 'message roles')
  eq(results(res), { { 'a', 'slow', false, 'slow ok' }, { 'b', 'fast', false, 'fast ok' } }, 'tool results in source order')
  say('ok - parallel batch: cards in place with the latest output line, approval answered with `a` in the float, answer shown')

  -- 2. Approvals in one batch: c dismissed with q (deny), d "always" with A, e the same tool
  -- as d: not asked again.
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
  answers = { { key = 'q' }, { key = 'A' } }
  vim.cmd('PidAsk approvals please')
  res = wait_run(2)
  eq(#asked, 2, 'approval questions (c, d; e is remembered)')
  eq(asked[2].lines[3], 'n: 1', "d's float shows its arguments")
  L = run_lines('approvals please')
  eq(L, {
    '>>> approvals please',
    '[tool] fast c.txt  error · The user denied this call of fast.',
    '[approval] fast (c): deny (dismissed)',
    '[tool] guarded {"n":1}  ok · guarded ok',
    '[approval] guarded (d): allowAlways (every call of the tool guarded in this workspace)',
    '[tool] guarded {"n":2}  ok · guarded ok',
    'after approvals',
    '[done] stop',
  }, 'the chat after the approvals')
  eq(results(res), {
    { 'c', 'fast', true, 'The user denied this call of fast.' },
    { 'd', 'guarded', false, 'guarded ok' },
    { 'e', 'guarded', false, 'guarded ok' },
  }, 'tool results after approvals')
  say('ok - approvals: q dismisses (= deny), A always allows, remembered for the next call')

  -- 2b. :PidPermissions lists the remembered answer and revokes it.
  perm_answers = { { pick = function() return 1 end } }
  local revoked_perm = nil
  pid.permissions({ on_done = function(err, x) revoked_perm = { err = err, x = x } end })
  wait_for('the revoke', function() return revoked_perm ~= nil end)
  eq(revoked_perm.err, nil, 'revoke error')
  local pq = selects('pid.permission')
  eq(#pq, 1, 'permission pickers')
  eq(pq[1].shown, { 'always allow every guarded call in ' .. vim.fn.getcwd() }, 'the remembered answers as listed')
  check(has_line('[permissions] revoked: always allow every guarded call in ' .. vim.fn.getcwd() .. '; pid asks again for such calls'), 'the chat says it')
  revoked_perm = nil
  pid.permissions({ on_done = function(err, x) revoked_perm = { err = err, x = x } end })
  wait_for('the second list', function() return revoked_perm ~= nil end)
  eq(#selects('pid.permission'), 1, 'no picker when nothing is remembered')
  eq(notes[#notes].msg, 'pid remembers no "always" answers', 'said instead')
  say('ok - :PidPermissions: the remembered answer listed in words and revoked')

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
    local c = view.card(tostring(pid.status().session_id) .. '/z')
    return c ~= nil and c.status == 'running'
  end)
  eq(pid.ask('again'), false, 'a second prompt while one runs')
  check(notes[#notes] and notes[#notes].msg:find(':PidSteer', 1, true), 'a second prompt should be refused naming :PidSteer: %s', vim.inspect(notes[#notes]))
  vim.cmd('PidCancel')
  res = wait_run(3)
  local ms = (uv.hrtime() - t0) / 1e6
  check(ms < STEP_TIMEOUT_MS, 'the cancelled prompt took %d ms', ms)
  L = run_lines('sleep')
  eq(L, { '>>> sleep', '[tool] sleepy {}  error · Operation aborted', '[cancel] cancelling...', '[done] aborted' }, 'the chat after the cancel')
  eq(res.stopReason, 'aborted', 'stopReason after :PidCancel')
  eq(roles(res.messages), { 'user', 'assistant', 'toolResult' }, 'messages after the cancel')
  say('ok - :PidCancel during a sleeping tool: [done] aborted after %d ms', ms)

  -- 4. :PidCancel while an approval is open (never answered): pid withdraws it, the float
  -- closes, the call's result is "Operation aborted".
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
  find(L, '[approval] fast (w): deny (withdrawn)')
  find(L, '[tool] fast {}  error · Operation aborted')
  find(L, '[done] aborted')
  eq(results(res), { { 'w', 'fast', true, 'Operation aborted' } }, 'results after cancelling during an approval')
  eq(pid.status().pending_approvals, 0, 'open approval questions')
  eq(approval.window(), nil, 'the float closed')
  say('ok - :PidCancel while an approval is open: withdrawn, float closed, Operation aborted')

  -- 4b. The same, cancelled behind the plugin's back (a raw $/cancelRequest): pid withdraws
  -- its approval request with $/cancelRequest naming it, the question ends as withdrawn.
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
  eq(L, { '>>> withdraw it', '[tool] fast {}  error · Operation aborted', '[approval] fast (w): deny (withdrawn)', '[done] aborted' }, 'the chat')
  eq(results(res), { { 'w', 'fast', true, 'Operation aborted' } }, 'results after pid withdrew the approval')
  say("ok - pid's $/cancelRequest withdraws the open approval it names")

  -- 5. Keys typed for something else never answer: while an approval is open, `x = 1<Enter>`
  -- typed in insert mode into a file buffer lands in that buffer; the question stays open and
  -- the tool does not run; only `d` in the float answers it.
  local scratch = vim.fn.tempname() .. '.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(scratch))
  local typed_buf = vim.api.nvim_get_current_buf()
  pid.new_session({
    model = { provider = 'script', turns = {
      { content = { { type = 'toolCall', id = 'k', name = 'bash', arguments = { command = 'echo should-not-run > ran.txt' } } } },
      { content = text('denied, as asked') },
    } },
  })
  asked = {}
  local typed = false
  answers = { { key = 'd', when = function() return typed end } }
  vim.cmd('PidAsk type while it asks')
  wait_for('the approval float', function() return approval.window() ~= nil end)
  eq(vim.api.nvim_get_current_buf(), typed_buf, 'the cursor stayed in the file buffer')
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('ix = 1<CR>y = 2<CR>a<Esc>', true, false, true), 'x', false)
  eq(vim.api.nvim_buf_get_lines(typed_buf, 0, -1, false), { 'x = 1', 'y = 2', 'a' }, 'the keys went to the file buffer')
  check(approval.window() ~= nil and pid.status().pending_approvals == 1, 'the question is still open after the stray keys')
  eq(pid.status().running, true, 'the run still waits')
  eq(vim.fn.filereadable(vim.fn.getcwd() .. '/ran.txt'), 0, 'the command did not run')
  -- Closing the float (:q in it, <C-w>o) does not answer either: it comes back.
  local first_float = approval.window()
  vim.api.nvim_win_close(first_float, true)
  wait_for('the float to come back', function() return approval.window() ~= nil and approval.window() ~= first_float end)
  eq(pid.status().pending_approvals, 1, 'still asked')
  typed = true
  res = wait_run(6)
  eq(results(res), { { 'k', 'bash', true, 'The user denied this call of bash.' } }, 'only `d` in the float answered')
  eq(asked[1].lines[3], '$ echo should-not-run > ran.txt', 'the float shows the whole command')
  vim.cmd('bwipeout!')
  say('ok - keys typed elsewhere (x = 1<Enter> in insert mode) and closing the float do not answer; the command did not run; d in the float denied')

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
  trust_answers = { { key = 'r' } }
  answers = { { key = 'a' } }
  vim.cmd('PidAsk write a')
  res = wait_run(7)
  wait_for('the trust answer', function() return has_line('[trust] ' .. tws .. ': kept restricted') end)
  local tq = of_kind('trust')
  eq(#tq, 1, 'trust questions')
  eq(tq[1].keys, { t = 'trust this folder', r = 'keep restricted', q = 'dismiss (keep restricted)' }, 'trust keys')
  eq(tq[1].focused, false, 'the trust float did not take the cursor')
  local tl = table.concat(tq[1].lines, '\n')
  check(tl:find(tws, 1, true) and tl:find(ignored, 1, true),
    'the trust question should name the folder and the ignored rule: %q', tl)
  check(has_line('[trust] ' .. tws .. ' is not trusted; its .pid/settings.json would enable: ' .. ignored), 'the run buffer shows the question')
  local aq = of_kind('approval')
  eq(#aq, 1, 'approvals: the write asked')
  eq(aq[1].keys.A, 'always allow: write calls on the path `notes/a.txt` in this workspace', 'the always key says its scope')
  eq(vim.list_slice(aq[1].lines, 3, 7), { '(a new file)', '--- notes/a.txt', '+++ notes/a.txt (proposed)', '@@ -0,0 +1 @@', '+w1' }, 'the float shows the diff of the new file')
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
  trust_answers = { { key = 't', when = function() return pid.status().runs >= 8 end } }
  answers = {}
  vim.cmd('PidAsk hi')
  wait_run(8)
  local in_force = '[log] pid: ' .. tws .. ' is trusted: its settings apply in full from now on'
  wait_for("pid's log message that the trust is in force", function() return has_line(in_force) end)
  check(has_line('[trust] ' .. tws .. ': trusted'), 'the run buffer shows the answer')
  eq(#of_kind('trust'), 1, 'trust questions')
  pid.new_session(write_session('w2', 'notes/b.txt'))
  vim.cmd('PidAsk write b')
  res = wait_run(9)
  eq(#of_kind('approval'), 0, 'approvals: the folder allows writes under notes/ now')
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
  answers = { { key = 'd' }, { key = 'd' } }
  vim.cmd('PidAsk run them')
  res = wait_run(10)
  aq = of_kind('approval')
  eq(#aq, 2, 'approvals')
  eq(aq[1].keys, { a = 'allow', d = 'deny', q = 'dismiss (deny)' }, 'keys for echo $(date)')
  eq(aq[2].keys.A, 'always allow: bash commands starting with `npm test` in this workspace', 'the always key for npm test')
  check(contains(aq[2].lines, 'A always allows bash commands starting with `npm test` in this workspace'), 'the float says what A covers')
  check(contains(aq[2].lines, '$ npm test'), 'the float shows the command: %s', vim.inspect(aq[2].lines))
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
  wait_run(11)
  local live = run_lines('Probe it, please.')
  eq(live, { '>>> Probe it, please.', '[tool] probe a.txt  ok · ok', 'probed', '[done] stop' }, 'the live run')
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
  local sq = selects('pid.session')
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
  eq(#sq[1].items, 11, 'every saved session is listed (each earlier run had its own)')
  for i = 2, #sq[1].items do
    local sm_ = require('pid.sessions')
    check(sm_.parse_time(sq[1].items[i - 1].updatedAt) >= sm_.parse_time(sq[1].items[i].updatedAt), 'newest first: %s before %s', sq[1].items[i - 1].updatedAt, sq[1].items[i].updatedAt)
  end
  local all = view.lines(true)
  local head = nil
  for i, l in ipairs(all) do
    if l == string.format('[session] resumed %s "Probe it, please." (4 messages, in %s)', sid, sws) then
      head = i
    end
  end
  check(head ~= nil, 'no [session] resumed line in:\n  %s', table.concat(all, '\n  '))
  eq(all[head + 1], '', 'a blank line before the first prompt, as before a live run')
  eq(vim.list_slice(all, head + 2, head + 1 + #live), live, 'the transcript reads as the live run did')
  eq(all[head + 2 + #live], '[session] end of the saved transcript: the next prompt continues this session', 'the last line')
  eq(head + 2 + #live, #all, 'nothing after it')
  vim.cmd('PidAsk Again?')
  res = wait_run(12)
  eq(pid.status().session_id, sid, 'the same session')
  eq(res.messages[#res.messages].content[1].text, 'second answer', "the saved model's third turn")
  find(run_lines('Again?'), 'second answer')
  say('ok - :PidSessions in a new pid: listed (title, folder, when), transcript as the live run, :PidAsk continues it')

  -- 11. A session another pid holds: said in words, nothing changes; once closed there, it
  -- loads. The other pid is started here, with the same state folder.
  local other_exit = nil
  local other = require('pid.rpc').start({ pid_bin }, {
    exit = function(code) other_exit = code end,
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
  wait_for('the refused load', function() return #selects('pid.session') == 2 and not pid.status().loading and has_line_prefix('[error] the session ' .. sid) end)
  local held = string.format('[error] the session %s is open in another pid (another Neovim or editor, or a pid still running): close it there, or quit that editor, then :PidSessions again. pid says: ', sid)
  local held_line = nil
  for _, l in ipairs(view.lines(true)) do
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
      { content = text('three') },
    }, summaries = { { content = text('## Goal\nsummary one') } } } })
  pid.ask('a ' .. big)
  wait_run(13)
  pid.ask('b ' .. big)
  wait_run(14)
  pid.ask('c ' .. big)
  wait_run(15)
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
  all = view.lines(true)
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
  eq(#got.list, 11 + 1 + 45, 'all sessions, over two pages')
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
  say('ok - session/list paging: %d sessions over two pages, newest first; max respected', 11 + 1 + 45)

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
  eq(tl, { '', '>>> hi', 'Let me look.', '[tool] ls {}  ok · b', '[error] the provider failed', '[done] error',
    '', '>>> again', '[compaction] the conversation was compacted (on request); the model now sees this summary instead of the older messages: (empty)',
    '[done] unfinished (pid stopped before the model answered?)' }, 'transcript lines')
  say('ok - picker lines (title | folder | when), ISO times as UTC, transcript lines')


  -- 15. Files through the editor. notes.txt is open with unsaved changes: pid reads it through
  -- fs/read_text_file (the model sees the unsaved line), the edit's float shows the diff
  -- against the buffer, and the edit lands in the buffer, which is written (buffer and file
  -- agree: nothing to reload, no W11). other.txt is open and unchanged: a bash command
  -- rewrites it on disk, and its buffer is reloaded without a question.
  local R0 = pid.status().runs
  local ws = vim.fn.getcwd()
  vim.fn.writefile({ 'one', 'two' }, ws .. '/notes.txt')
  vim.fn.writefile({ 'before' }, ws .. '/other.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/other.txt'))
  local other_buf = vim.api.nvim_get_current_buf()
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/notes.txt'))
  local notes_buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(notes_buf, 1, 2, false, { 'two (unsaved)' })
  eq(vim.bo[notes_buf].modified, true, 'notes.txt has unsaved changes')
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'r1', name = 'read', arguments = { path = 'notes.txt' } } } },
    { content = { { type = 'toolCall', id = 'e1', name = 'edit', arguments = { path = 'notes.txt', edits = { { oldText = 'two (unsaved)', newText = 'two (edited)' } } } } } },
    { content = { { type = 'toolCall', id = 'b1', name = 'bash', arguments = { command = "printf 'after\\n' > other.txt" } } } },
    { content = text('edited') },
  } } })
  asked = {}
  answers = { { key = 'a' }, { key = 'a' } }
  local reads, writes = pid.status().fs_reads, pid.status().fs_writes
  vim.cmd('PidAsk edit it')
  res = wait_run(R0 + 1)
  local read_result = res.messages[3]
  eq(read_result.role, 'toolResult', 'the read result')
  check(read_result.content[1].text:find('two (unsaved)', 1, true), 'the model saw the unsaved line: %s', read_result.content[1].text)
  check(pid.status().fs_reads > reads and pid.status().fs_writes > writes, 'fs requests: %d reads, %d writes', pid.status().fs_reads - reads, pid.status().fs_writes - writes)
  local eq_lines = of_kind('approval')[1].lines
  check(contains(eq_lines, '-two (unsaved)') and contains(eq_lines, '+two (edited)') and contains(eq_lines, ' one'),
    'the edit float shows the diff against the buffer: %s', vim.inspect(eq_lines))
  eq(vim.api.nvim_buf_get_lines(notes_buf, 0, -1, false), { 'one', 'two (edited)' }, 'the edit landed in the buffer')
  eq(vim.bo[notes_buf].modified, false, 'the buffer was written')
  eq(vim.fn.readfile(ws .. '/notes.txt'), { 'one', 'two (edited)' }, 'the file on disk agrees')
  eq(vim.api.nvim_buf_get_lines(other_buf, 0, -1, false), { 'after' }, "other.txt's buffer was reloaded after bash changed the file")
  eq(vim.bo[other_buf].modified, false, 'other.txt is not modified')
  L = run_lines('edit it')
  find(L, '[tool] read notes.txt  ok · 2 lines')
  find(L, '[tool] edit notes.txt  ok · Edited notes.txt')
  find(L, '[tool] bash $ printf')
  say('ok - files through the editor: the unsaved line seen, the edit in the buffer and on disk, a file bash changed reloaded')

  -- 16. :'<,'>PidAsk: the selected lines go with the question as a resource block.
  vim.fn.writefile({ 'alpha', 'beta', 'gamma', 'delta' }, ws .. '/sel.lua')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/sel.lua'))
  pid.new_session({ model = { provider = 'script', turns = { { content = text('a selection') } } } })
  vim.cmd('2,3PidAsk what is this?')
  res = wait_run(R0 + 2)
  L = run_lines('what is this?')
  eq(L, { '>>> what is this?', '[context] sel.lua lines 2-3', 'a selection', '[done] stop' }, 'the chat names the selection')
  local sent = user_texts(res.messages)[1]
  check(sent:find('what is this?', 1, true) == 1 and sent:find('beta\ngamma', 1, true) and sent:find('sel.lua', 1, true) and not sent:find('alpha', 1, true),
    'the model got the question, then the selection with its path: %q', sent)
  -- :PidAsk! adds the buffer's diagnostics; @path names a file (a resource_link).
  local dns = vim.api.nvim_create_namespace('pid_test')
  vim.diagnostic.set(dns, 0, { { lnum = 1, col = 2, severity = vim.diagnostic.severity.ERROR, message = 'beta is undefined', source = 'lint' } })
  pid.new_session({ model = { provider = 'script', turns = { { content = text('fixed') } } } })
  vim.cmd('PidAsk! fix it, see @sel.lua and @missing.txt')
  res = wait_run(R0 + 3)
  L = run_lines('fix it, see @sel.lua and @missing.txt')
  eq(vim.list_slice(L, 1, 3), { '>>> fix it, see @sel.lua and @missing.txt', '[context] diagnostics of sel.lua (1)', '[context] @sel.lua' }, 'the chat names the diagnostics and the file')
  sent = user_texts(res.messages)[1]
  check(sent:find('sel.lua:2:3: error: beta is undefined [lint]', 1, true), 'the diagnostics were sent: %q', sent)
  check(select(2, sent:gsub('sel%.lua', '')) >= 3, 'the file link was sent too: %q', sent)
  check(not sent:find('missing.txt', #'fix it, see @sel.lua and @missing.txt' + 1, true), 'no link to a file that does not exist: %q', sent)
  say("ok - :'<,'>PidAsk sends the selection as a resource with the question; :PidAsk! the diagnostics, @path a link")

  -- 17. :PidSteer and :PidFollowUp while a run goes (its approval waits): the steer is taken
  -- after the tools, the follow-up when the run would stop.
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'g', name = 'gate', arguments = vim.empty_dict() } } },
    { content = text('after steer') },
    { content = text('after follow-up') },
  } }, scriptedTools = { { name = 'gate', requiresApproval = true, steps = { { result = { content = text('gate ok') } } } } } })
  asked = {}
  answers = { { never = true, action = function()
    vim.cmd('PidSteer also this')
    vim.cmd('PidFollowUp and then this')
    approval.press('a')
  end } }
  vim.cmd('PidAsk steer please')
  res = wait_run(R0 + 4)
  eq(user_texts(res.messages), { 'steer please', 'also this', 'and then this' }, 'the user messages')
  L = run_lines('steer please')
  eq(L, { '>>> steer please', '[tool] gate {}  ok · gate ok', '[steer] also this', '[follow-up] and then this', '[approval] gate (g): allow', 'after steer', 'after follow-up', '[done] stop' }, 'the chat')
  say('ok - :PidSteer and :PidFollowUp during a run: taken after the tools and when it would stop')

  -- 18. :PidModel: models/list in vim.ui.select, session/setModel; the next message, typed in
  -- the prompt window (:PidChat), is answered by the picked model.
  pid.new_session({ model = { provider = 'script', turns = { { content = text('first model') } } } })
  model_answers = { { pick = function(items)
    for i, m in ipairs(items) do
      if m.id == 'alt' then return i end
    end
  end } }
  local picked = nil
  pid.pick_model({ on_done = function(err, m) picked = { err = err, model = m } end })
  wait_for('the model to be set', function() return picked ~= nil end)
  eq(picked.err, nil, 'setModel error')
  local ms_ = selects('pid.model')
  eq(ms_[1].shown, { 'Alternative (script/alt)', 'script/other' }, 'the models as listed')
  eq(ms_[1].prompt, 'Model (now: script)', 'the picker names the current model')
  check(has_line('[model] Alternative (script/alt) from the next model call on'), 'the chat says the model changed')
  vim.cmd('PidChat')
  eq(vim.api.nvim_buf_get_name(0), 'pid://prompt', 'the cursor is in the prompt window')
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('Ause it<CR>', true, false, true), 'x', false)
  res = wait_run(R0 + 5)
  eq(res.messages[#res.messages].content[1].text, 'the alternative model answers', 'the picked model answered')
  find(run_lines('use it'), 'the alternative model answers')
  vim.cmd('wincmd p')
  say('ok - :PidModel: listed, set; a message from the prompt window is answered by the picked model')

  -- 19. A setup problem in words: no model anywhere; the error names setup{model=...} and
  -- the settings file.
  pid.setup({ cmd = { pid_bin }, env = { XDG_CONFIG_HOME = xdg .. '/config', XDG_STATE_HOME = xdg .. '/state' } })
  pid.new_session({})
  local failed = nil
  pid.ask('no model', { on_done = function(err) failed = err end })
  wait_for('the failed prompt', function() return failed ~= nil end)
  check(failed:find('pid has no model: pick one with :PidModel, or set it with require("pid").setup{model = {', 1, true)
    and failed:find(xdg .. '/config/pid/settings.json', 1, true), 'the error names the setting and the file: %s', failed)
  check(has_line('[error] ' .. failed), 'the chat shows it')
  say('ok - no model: the error names setup{model=...}, :PidModel and the settings file')

  -- 20. pid killed: "pid stopped; the session was saved", :PidResume loads the same session;
  -- killed again, the next prompt continues it too (no silent new session).
  pid.new_session({ model = { provider = 'script', turns = {
    { content = text('before the crash') },
    { content = text('after the resume') },
    { content = text('after the second crash') },
  } } })
  pid.ask('remember me')
  res = wait_run(R0 + 7)
  local csid2 = pid.status().session_id
  uv.kill(pid.status().pid, 'sigkill')
  wait_for('the crash to be noticed', function() return pid.status().crashed and not pid.status().started end)
  eq(pid.status().resume_id, csid2, 'the session to resume')
  check(has_line_prefix('[exit] pid stopped; the session was saved: :PidResume (or the next prompt) continues it'), 'the chat says pid stopped')
  check(notes[#notes].msg:find('pid stopped; the session was saved', 1, true), 'notified: %s', notes[#notes].msg)
  vim.cmd('PidResume')
  wait_for('the resumed session', function() return pid.status().session_id == csid2 and not pid.status().loading end)
  check(has_line_prefix('[session] resumed ' .. csid2), 'the transcript is shown again')
  pid.ask('still there?')
  res = wait_run(R0 + 8)
  eq(res.messages[#res.messages].content[1].text, 'after the resume', 'the same conversation goes on')
  uv.kill(pid.status().pid, 'sigkill')
  wait_for('the second crash', function() return pid.status().crashed and not pid.status().started end)
  pid.ask('and now?')
  res = wait_run(R0 + 9)
  eq(pid.status().session_id, csid2, 'the next prompt continued the saved session')
  eq(res.messages[#res.messages].content[1].text, 'after the second crash', 'its model went on')
  local al = view.lines(true)
  check(al[#al - 2] == '>>> and now?' or al[#al - 2]:find('^>>> and now%?'), 'the prompt follows the resumed transcript: %s', table.concat(vim.list_slice(al, #al - 5, #al), ' | '))
  say('ok - pid killed: said in the chat, :PidResume and the next prompt continue the same session')

  -- 21. Files changed on disk behind a buffer, within the second Neovim's own check ignores.
  -- (a) greet.txt is open and unchanged; while the edit's approval waits, another line changes
  -- on disk (same size): the edit must not write the buffer's old text over it, and what the
  -- model is told must be true; the buffer shows the disk's text. (b) notes2.txt has unsaved
  -- changes and changed on disk too: the read fails with why, the chat says so, nothing is
  -- lost. (c) a write Neovim did not do (a BufWriteCmd that writes nothing) is not a success.
  local R1 = pid.status().runs
  vim.fn.writefile({ 'hello world', 'second line', 'third line' }, ws .. '/greet.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/greet.txt'))
  local greet_buf = vim.api.nvim_get_current_buf()
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'g1', name = 'read', arguments = { path = 'greet.txt' } } } },
    { content = { { type = 'toolCall', id = 'g2', name = 'edit', arguments = { path = 'greet.txt', edits = { { oldText = 'hello world', newText = 'hi world' } } } } } },
    { content = text('greeted') },
  } } })
  local on_disk = { 'hello world', 'second LINE', 'third line' }
  asked = {}
  answers = { { never = true, action = function()
    vim.fn.writefile(on_disk, ws .. '/greet.txt') -- another program changes line 2
    approval.press('a')
  end } }
  pid.ask('greet')
  res = wait_run(R1 + 1)
  local edit_result = results(res)[2]
  eq({ edit_result[1], edit_result[3] }, { 'g2', true }, 'the edit failed')
  check(edit_result[4]:find('changed', 1, true), 'the model is told the file changed: %s', edit_result[4])
  eq(vim.fn.readfile(ws .. '/greet.txt'), on_disk, 'the change on disk was kept')
  eq(vim.api.nvim_buf_get_lines(greet_buf, 0, -1, false), on_disk, 'the buffer shows the file as it is now')
  eq(vim.bo[greet_buf].modified, false, 'greet.txt has nothing unsaved')
  say('ok - a file changed on disk while its edit waited: not overwritten, the model told, the buffer reloaded')

  -- The same change made between the edit's read and its write (another program wins the
  -- race): the write refuses, the change stays.
  local files_mod = require('pid.files')
  vim.fn.writefile({ 'alpha', 'beta' }, ws .. '/race.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/race.txt'))
  local race_buf = vim.api.nvim_get_current_buf()
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'x1', name = 'read', arguments = { path = 'race.txt' } } } },
    { content = { { type = 'toolCall', id = 'x2', name = 'edit', arguments = { path = 'race.txt', edits = { { oldText = 'alpha', newText = 'ALPHA' } } } } } },
    { content = text('raced') },
  } } })
  local real_read, race_reads = files_mod.read, 0
  files_mod.read = function(params, on_conflict)
    local r, e = real_read(params, on_conflict)
    if params.path:match('race%.txt$') then
      race_reads = race_reads + 1
      if race_reads == 2 then
        vim.fn.writefile({ 'alpha', 'BETA' }, ws .. '/race.txt') -- after the edit's read
      end
    end
    return r, e
  end
  answers = { { key = 'a' } }
  pid.ask('race')
  res = wait_run(R1 + 2)
  files_mod.read = real_read
  local x2 = results(res)[2]
  eq(race_reads, 2, 'the read and the edit read race.txt')
  eq(x2[3], true, 'the edit failed')
  check(x2[4]:find('changed on disk since it was read; nothing was written', 1, true), 'the model is told: %s', x2[4])
  eq(vim.fn.readfile(ws .. '/race.txt'), { 'alpha', 'BETA' }, 'the change on disk was kept')
  eq(vim.api.nvim_buf_get_lines(race_buf, 0, -1, false), { 'alpha', 'BETA' }, 'the buffer shows it')
  say('ok - a change on disk between the edit\'s read and its write: the write refuses, the change stays')

  vim.fn.writefile({ 'one', 'two' }, ws .. '/notes2.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/notes2.txt'))
  local n2 = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(n2, 1, 2, false, { 'two (unsaved)' })
  vim.fn.writefile({ 'one', 'TWO' }, ws .. '/notes2.txt')
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'n1', name = 'read', arguments = { path = 'notes2.txt' } } } },
    { content = { { type = 'toolCall', id = 'n2', name = 'read', arguments = { path = 'notes2.txt' } } } },
    { content = text('seen') },
  } } })
  pid.ask('read notes2')
  res = wait_run(R1 + 3)
  local read2 = results(res)[1]
  eq(read2[3], true, 'the read failed')
  check(read2[4]:find('changed on disk while its buffer in Neovim has unsaved changes', 1, true) and read2[4]:find(':e!', 1, true),
    'the model is told why and what the person can do: %s', read2[4])
  eq(results(res)[2][3], true, 'the second read failed too')
  eq(count(run_lines('read notes2'), '[file] ' .. ws .. '/notes2.txt changed on disk while its buffer has unsaved changes'), 1, 'the chat says so, once')
  eq(vim.api.nvim_buf_get_lines(n2, 0, -1, false), { 'one', 'two (unsaved)' }, 'the unsaved change is still in the buffer')
  eq(vim.fn.readfile(ws .. '/notes2.txt'), { 'one', 'TWO' }, 'the file is as the other program left it')
  -- Deleted on disk under unsaved changes: the model is told, the unsaved text stays.
  os.remove(ws .. '/notes2.txt')
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'd1', name = 'read', arguments = { path = 'notes2.txt' } } } },
    { content = text('gone') },
  } } })
  pid.ask('read deleted notes2')
  res = wait_run(R1 + 4)
  local d1 = results(res)[1]
  eq({ d1[3], d1[4] }, { true, 'file not found: notes2.txt' }, 'the model is told the file is gone (pid looks on disk first)')
  eq(vim.api.nvim_buf_get_lines(n2, 0, -1, false), { 'one', 'two (unsaved)' }, 'the unsaved text is still in the buffer')
  say('ok - unsaved changes over a file changed on disk: the read fails with why, the chat says so once, nothing lost')

  vim.fn.writefile({ 'keep' }, ws .. '/w.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/w.txt'))
  local wgroup = vim.api.nvim_create_augroup('PidTestNoWrite', { clear = true })
  vim.api.nvim_create_autocmd('BufWriteCmd', { group = wgroup, pattern = ws .. '/w.txt', callback = function() end })
  pid.new_session({ model = { provider = 'script', turns = {
    { content = { { type = 'toolCall', id = 'w1', name = 'read', arguments = { path = 'w.txt' } } } },
    { content = { { type = 'toolCall', id = 'w2', name = 'edit', arguments = { path = 'w.txt', edits = { { oldText = 'keep', newText = 'changed' } } } } } },
    { content = text('tried') },
  } } })
  answers = { { key = 'a' } }
  pid.ask('change w')
  res = wait_run(R1 + 5)
  vim.api.nvim_del_augroup_by_id(wgroup)
  local w2 = results(res)[2]
  eq(w2[3], true, 'the edit is not a success')
  check(w2[4]:find('did not write', 1, true), 'the model is told the file was not written: %s', w2[4])
  eq(vim.fn.readfile(ws .. '/w.txt'), { 'keep' }, 'nothing was written')
  vim.cmd('edit! ' .. vim.fn.fnameescape(ws .. '/w.txt'))
  say('ok - a write Neovim did not do is reported as not done')

  -- 22. pid killed while a tool runs: its card says so (not "running" forever); :PidResume
  -- shows the conversation once, in place of what the chat showed of it.
  pid.new_session({ model = { provider = 'script', turns = { { content = { { type = 'text', text = 'building' }, { type = 'toolCall', id = 'k1', name = 'build', arguments = vim.empty_dict() } } } } },
    scriptedTools = { { name = 'build', steps = { { sleepMs = 600000 }, { result = { content = text('built') } } } } } })
  local shown_before = view.lines(true)
  local before = #shown_before
  pid.ask('build it')
  local key
  wait_for('the build card to run', function()
    key = pid.status().session_id and (pid.status().session_id .. '/k1')
    local c = key and view.card(key)
    return c ~= nil and c.status == 'running'
  end)
  local ksid = pid.status().session_id
  uv.kill(pid.status().pid, 'sigkill')
  wait_for('the crash to be noticed', function() return pid.status().crashed and not pid.status().started end)
  local kc = view.card(key)
  eq({ kc.status, kc.latest }, { 'cancelled', 'pid stopped before it ended' }, 'the card after the kill')
  vim.cmd('PidResume')
  wait_for('the resumed session', function() return pid.status().session_id == ksid and not pid.status().loading end)
  local after = vim.list_slice(view.lines(true), before + 1, #view.lines(true))
  eq(count(after, '>>> build it'), 1, 'the prompt shown once')
  eq(count(after, 'building'), 1, 'the answer shown once')
  eq(count(after, '[tool] build'), 1, 'one card')
  eq(count(after, '[session] resumed ' .. ksid), 1, 'the resumed line')
  eq(vim.list_slice(view.lines(true), 1, before), shown_before, 'what the chat showed before this session is untouched')
  local rc = view.card(key)
  check(rc ~= nil and rc.status == 'error', 'the resumed card shows the saved result: %s', vim.inspect(rc))
  say('ok - pid killed during a tool: the card is cancelled, :PidResume shows the conversation once')

  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil end)
  eq(pid.status().exit.code, 0, 'pid exit code after :PidStop')
end

local ok, err = xpcall(run, debug.traceback)
if ok then
  if os.getenv('PID_NVIM_TEST_DUMP') == '1' then
    say('-- chat:')
    for i, l in ipairs(view.lines(true)) do
      say('%3d  %s', i, l)
    end
  end
  say('PASS pid.nvim')
  say('pid.nvim: %d passed, 0 failed', passed)
  vim.cmd('qa!')
else
  say('FAIL pid.nvim: %s', tostring(err))
  say('pid.nvim: %d passed, 1 failed', passed)
  local okb, lines = pcall(view.lines, true)
  if okb then
    say('-- chat:')
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
