-- The harness of pid.nvim's headless test (run.lua runs the cases in cases/ with it): checks,
-- bounded waits, the chat read back, and a person's answers from a script. Questions
-- (approvals, trust) are answered as a person would: the harness enters the float with
-- :PidApproval and types the key (nvim_feedkeys); vim.ui.select and vim.ui.input (saved
-- sessions, models, remembered answers, :PidAsk without text) are replaced by scripted ones;
-- vim.notify is recorded (headless, it would print on stdout).
--
-- require('lib') returns one table, t, shared by every case: its functions, the scripted
-- answers a case sets before it asks (t.answers, t.trust_answers, ...), and what was asked
-- and shown (t.asked, t.asked_select, t.notes, t.card_log, ...), which a case may reset.
--
-- PID_BIN names the pid binary. PID_NVIM_TEST_XDG, when set, is a folder for the daemon's
-- XDG_CONFIG_HOME/XDG_STATE_HOME (t.xdg; the cases pass it with setup{env = ...}).

local t = {}

t.STEP_TIMEOUT_MS = 10000 -- every wait is bounded by this
t.uv = vim.uv or vim.loop

-- passed counts the checks said with "ok - ..." (say).
t.passed = 0

-- say prints a line of the test's output; "ok - ..." lines count as passed.
function t.say(fmt, ...)
  local line = string.format(fmt, ...)
  if line:find('ok - ', 1, true) == 1 then
    t.passed = t.passed + 1
  end
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

-- check fails the test with msg (a format) unless cond holds.
function t.check(cond, msg, ...)
  if not cond then
    error(string.format(msg, ...), 2)
  end
end

-- eq fails the test unless got and want are deeply equal; what says what was compared.
function t.eq(got, want, what)
  if not vim.deep_equal(got, want) then
    error(string.format('%s: got %s, want %s', what, vim.inspect(got), vim.inspect(want)), 2)
  end
end

local pid_bin = os.getenv('PID_BIN')
t.check(pid_bin ~= nil and pid_bin ~= '', 'set PID_BIN to the pid binary')
pid_bin = vim.fn.fnamemodify(pid_bin, ':p')
t.check(vim.fn.executable(pid_bin) == 1, 'no pid binary at %s: build it (go build -o bin/pid ./cmd/pid)', pid_bin)
t.pid_bin = pid_bin

local xdg = os.getenv('PID_NVIM_TEST_XDG')
if xdg == nil or xdg == '' then
  xdg = vim.fn.tempname()
end
vim.fn.mkdir(xdg .. '/config/pid', 'p')
vim.fn.mkdir(xdg .. '/state', 'p')
t.xdg = xdg

local pid = require('pid')
local view = require('pid.view')
local approval = require('pid.approval')
t.pid, t.view, t.approval = pid, view, approval

-- Scripted answers to pid's questions. Each approval takes the next of t.answers, each trust
-- question the next of t.trust_answers: {key = 'a'|'A'|'d'|'q'|'t'|'r', never = bool, action =
-- fn, when = fn} (key: typed in the float after :PidApproval, 20 ms after it opened, or once
-- when() is true; never: not answered, action runs 50 ms later instead). Each question is
-- recorded in t.asked with its lines and keys, and whether the float had the cursor when it
-- opened. Problems are recorded in t.select_errors.
t.answers = {}
t.trust_answers = {}
t.session_answers = {} -- {pick = fn(items) -> index or nil}
t.model_answers = {} -- {pick = fn(items) -> index or nil}
t.perm_answers = {} -- {pick = fn(items) -> index or nil}
t.mode_answers = {} -- {pick = fn(items) -> index or nil}
t.checkpoint_answers = {} -- {pick = fn(items) -> index or nil}
t.command_answers = {} -- {pick = fn(items) -> index or nil}: the /command picker (:Pid)
t.host_answers = {} -- {pick = fn(items) -> index or nil}: network/allowHost's choice (network.lua)
t.inputs = {} -- the texts vim.ui.input answers, in turn
t.asked = {}
t.asked_select = {} -- each vim.ui.select: {items, shown, prompt, kind}; each vim.ui.input: {input = true, prompt}
t.select_errors = {}
t.notes = {} -- each vim.notify: {msg, level}

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
  table.insert(t.asked, entry)
  local a = table.remove(q.kind == 'trust' and t.trust_answers or t.answers, 1)
  if a == nil then
    table.insert(t.select_errors, 'unexpected question: ' .. tostring(q.lines[1]))
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
      table.insert(t.select_errors, 'key ' .. a.key .. ' is not among ' .. vim.inspect(keys))
    end
    entry.float = approval.window()
    vim.cmd('PidApproval')
    entry.entered = vim.api.nvim_get_current_win() == entry.float
    vim.api.nvim_feedkeys(a.key, 'x', false)
  end
  vim.defer_fn(press, 20)
  return r
end

vim.ui.select = function(items, opts, on_choice)
  local kind = opts and opts.kind
  local shown = {}
  for i, it in ipairs(items) do
    shown[i] = opts.format_item and opts.format_item(it) or tostring(it)
  end
  table.insert(t.asked_select, { items = items, shown = shown, prompt = opts.prompt, kind = kind })
  local list = kind == 'pid.model' and t.model_answers or kind == 'pid.permission' and t.perm_answers
    or kind == 'pid.mode' and t.mode_answers or kind == 'pid.checkpoint' and t.checkpoint_answers
    or kind == 'pid.command' and t.command_answers or kind == 'pid.host' and t.host_answers or t.session_answers
  local a = table.remove(list, 1)
  if a == nil then
    table.insert(t.select_errors, 'unexpected select: ' .. tostring(opts.prompt))
    vim.defer_fn(function() on_choice(nil, nil) end, 20)
    return
  end
  local idx = a.pick(items)
  vim.defer_fn(function() on_choice(idx and items[idx] or nil, idx) end, 20)
end

vim.notify = function(msg, level)
  table.insert(t.notes, { msg = msg, level = level })
end

vim.ui.input = function(opts, on_confirm)
  table.insert(t.asked_select, { input = true, prompt = opts and opts.prompt })
  local text = table.remove(t.inputs, 1)
  vim.defer_fn(function() on_confirm(text) end, 10)
end

-- streamed_while_running: whether streamed text reached the chat while the run still went on.
t.streamed_while_running = false
local real_text_append = view.text_append
view.text_append = function(piece)
  real_text_append(piece)
  if piece ~= '\n' and pid.status().running then
    t.streamed_while_running = true
  end
end

-- card_log is every change of a card, in order: {key, status, latest}.
t.card_log = {}
local real_card_set = view.card_set
view.card_set = function(key, status, latest, output)
  real_card_set(key, status, latest, output)
  local c = view.card(key)
  if c then
    table.insert(t.card_log, { key = key, status = c.status, latest = c.latest })
  end
end

-- notes_of records the params of every notification with method that the chat shows (those
-- of the current session), in the list it returns, from now on.
function t.notes_of(method)
  local list = {}
  local chat = require('pid.chat')
  local real = chat.notifications[method]
  chat.notifications[method] = function(p)
    table.insert(list, p)
    if real then
      real(p)
    end
  end
  return list
end

-- chat_statusline returns what the status line of the chat's window shows (nil: no window).
function t.chat_statusline()
  local win = view.window()
  if win == nil then
    return nil
  end
  return vim.api.nvim_eval_statusline(vim.wo[win].statusline, { winid = win, maxwidth = 200 }).str
end

-- wait_for waits until cond() holds, at most STEP_TIMEOUT_MS; what names it when it fails.
function t.wait_for(what, cond)
  local ok = vim.wait(t.STEP_TIMEOUT_MS, cond, 5)
  if not ok then
    error(string.format('timed out after %d ms waiting for %s (status %s)', t.STEP_TIMEOUT_MS, what,
      vim.inspect(pid.status(), { newline = ' ', indent = '' }):sub(1, 600)), 2)
  end
end

-- text is a content list of one text block.
function t.text(s)
  return { { type = 'text', text = s } }
end

-- runs returns how many runs (prompts) have ended: a case's runs are counted from it.
function t.runs()
  return pid.status().runs
end

-- wait_run waits until n runs have ended, checks that the last one did not fail and that no
-- question went unscripted, and returns its session/prompt result.
function t.wait_run(n)
  t.wait_for('run ' .. n .. ' to finish', function()
    return pid.status().runs >= n
  end)
  local st = pid.status()
  t.check(st.last_error == nil, 'run %d failed: %s', n, tostring(st.last_error))
  t.check(#t.select_errors == 0, 'questions: %s', table.concat(t.select_errors, '; '))
  return st.last_result
end

-- run_lines returns the chat's lines (cards with their status, as shown) from the last
-- header ">>> <prompt>" on.
function t.run_lines(prompt)
  local lines = view.lines(true)
  local from = nil
  for i, l in ipairs(lines) do
    if l == '>>> ' .. prompt then
      from = i
    end
  end
  t.check(from ~= nil, 'no header for %q in the chat', prompt)
  return vim.list_slice(lines, from, #lines)
end

-- find returns the index of the first of lines that starts with pattern; it fails without.
function t.find(lines, pattern, what)
  for i, l in ipairs(lines) do
    if l:find(pattern, 1, true) == 1 then
      return i
    end
  end
  error(string.format('no line starting with %q (%s) in:\n  %s', pattern, what or '', table.concat(lines, '\n  ')), 2)
end

-- count returns how many of lines start with prefix.
function t.count(lines, prefix)
  local n = 0
  for _, l in ipairs(lines) do
    if l:find(prefix, 1, true) == 1 then
      n = n + 1
    end
  end
  return n
end

-- results returns a prompt result's tool results: {toolCallId, toolName, isError, first text}.
function t.results(res)
  local out = {}
  for _, m in ipairs(res.messages) do
    if m.role == 'toolResult' then
      table.insert(out, { m.toolCallId, m.toolName, m.isError, (m.content[1] or {}).text })
    end
  end
  return out
end

-- with_kind returns the entries of list whose kind is kind.
local function with_kind(list, kind)
  local out = {}
  for _, a in ipairs(list) do
    if a.kind == kind then
      table.insert(out, a)
    end
  end
  return out
end

-- of_kind returns the questions asked of one kind ("approval" or "trust").
function t.of_kind(kind)
  return with_kind(t.asked, kind)
end

-- selects returns the vim.ui.select calls of one kind ('pid.session', 'pid.model', ...).
function t.selects(kind)
  return with_kind(t.asked_select, kind)
end

-- chat_has reports whether a line of the chat satisfies match.
local function chat_has(match)
  for _, l in ipairs(view.lines(true)) do
    if match(l) then
      return true
    end
  end
  return false
end

-- has_line reports whether the chat has the line.
function t.has_line(line)
  return chat_has(function(l)
    return l == line
  end)
end

-- has_line_prefix reports whether a line of the chat starts with prefix.
function t.has_line_prefix(prefix)
  return chat_has(function(l)
    return l:find(prefix, 1, true) == 1
  end)
end

-- roles returns the roles of messages, in order.
function t.roles(messages)
  local r = {}
  for _, m in ipairs(messages) do
    table.insert(r, m.role)
  end
  return r
end

-- log_of returns the card changes of one card key: "status · latest" strings.
function t.log_of(key)
  local out = {}
  for _, e in ipairs(t.card_log) do
    if e.key == key then
      table.insert(out, e.status .. (e.latest ~= '' and (' · ' .. e.latest) or ''))
    end
  end
  return out
end

-- contains reports whether lines hold the line s.
function t.contains(lines, s)
  for _, l in ipairs(lines) do
    if l == s then
      return true
    end
  end
  return false
end

-- user_texts returns the text of each user message of messages.
function t.user_texts(messages)
  local out = {}
  for _, m in ipairs(messages) do
    if m.role == 'user' then
      local parts = {}
      for _, c in ipairs(m.content) do
        if c.type == 'text' then
          table.insert(parts, c.text)
        end
      end
      table.insert(out, table.concat(parts, '\n'))
    end
  end
  return out
end

return t
