-- Questions pid asks the person (tool approvals, workspace trust), in a floating window that
-- opens WITHOUT taking focus and is answered only by keys of its own buffer:
--
--   approval: a allow, A always allow (its scope shown), d deny, q dismiss (= deny); a call
--             asking to leave the sandbox has its own float (escalation.lua), A only when
--             pid scopes "always" to exactly that command
--   trust:    t trust this folder, r keep restricted, q dismiss (= keep restricted)
--
-- Keys typed for something else (insert mode in another buffer, a command line) never reach
-- those mappings: the person answers after entering the float with :PidApproval (or a
-- mapping of theirs to it). The float shows what would happen: the diff of a write or an
-- edit against the file as the editor has it (unsaved changes included), the whole command of
-- a bash call, the arguments of other tools.
--
-- Questions wait in a queue, one float at a time, with no timeout: a person may take their
-- time. pid may withdraw one (the prompt was cancelled); the run ending or pid exiting ends
-- them too. Everything here runs on the main loop.

local escalation = require('pid.escalation')
local proposal = require('pid.proposal')

local M = {}

M.ALLOW, M.ALWAYS_ALLOW, M.DENY = 'allow', 'allowAlways', 'deny'

-- CANCELLED is what Neovim's input() gives back when Escape cancels a key's question.
M.CANCELLED = '\1pid: cancelled'

-- How many ignored settings a trust question names before "and N more".
M.MAX_IGNORED_SHOWN = 6

-- The open questions (the first one shown) and the float (see state.lua).
local questions = require('pid.state').questions
local queue = questions.queue
local float = questions.float

local function valid_win(w)
  return w ~= nil and vim.api.nvim_win_is_valid(w)
end

local function close_float()
  local win, buf = float.win, float.buf
  float.win, float.buf, float.q = nil, nil, nil
  local was_current = valid_win(win) and vim.api.nvim_get_current_win() == win
  if valid_win(win) then
    pcall(vim.api.nvim_win_close, win, true)
  end
  if buf ~= nil and vim.api.nvim_buf_is_valid(buf) then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
  end
  if was_current and valid_win(float.back) then
    pcall(vim.api.nvim_set_current_win, float.back)
  end
end

local show_next

-- answer ends question q with value (why: nil when the person answered, else "withdrawn" or
-- "dismissed"; text: what the person typed for a key that asks, see show_next); it is a no-op
-- for a question already ended.
local function answer(q, value, why, text)
  if q.done then
    return false
  end
  q.done = true
  for i, x in ipairs(queue) do
    if x == q then
      table.remove(queue, i)
      break
    end
  end
  if float.q == q then
    close_float()
  end
  local ok, err = pcall(q.on_answer, value, why, text)
  if not ok then
    vim.notify('pid: ' .. tostring(err), vim.log.levels.ERROR)
  end
  show_next()
  return true
end

-- float_geometry places the float at the bottom left of the editor, beside the chat when the
-- chat shows in a window on the right, so that the run stays visible; as high as lines take
-- once wrapped (so that the keys at the end show), at most share (default 0.6) of the
-- editor's height.
local function float_geometry(lines, share, title)
  local columns, rows = vim.o.columns, vim.o.lines - vim.o.cmdheight - 1
  local right = columns
  local chat = require('pid.view').window()
  if chat then
    local pos = vim.api.nvim_win_get_position(chat)
    if pos[2] > 20 then
      right = pos[2]
    end
  end
  local width = math.max(30, math.min(right - 4, 110))
  local nlines = 0
  for _, l in ipairs(lines) do
    nlines = nlines + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  local height = math.max(3, math.min(nlines, math.floor(rows * (share or 0.6))))
  local opts = {
    relative = 'editor',
    anchor = 'SW',
    row = rows - 1,
    col = 1,
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
    focusable = true,
    noautocmd = true,
  }
  if vim.fn.has('nvim-0.9') == 1 then
    opts.title = ' ' .. (title or 'pid asks') .. ' '
    opts.title_pos = 'center'
  end
  return opts
end

show_next = function()
  if float.q ~= nil or #queue == 0 then
    return
  end
  local q = queue[1]
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, q.lines)
  vim.bo[buf].modifiable = false
  if q.filetype then
    vim.bo[buf].filetype = q.filetype
  end
  for _, k in ipairs(q.keys) do
    vim.api.nvim_buf_set_keymap(buf, 'n', k.key, '', {
      noremap = true,
      nowait = true,
      silent = true,
      desc = 'pid: ' .. k.label,
      callback = function()
        if k.input == nil then
          return answer(q, k.value, k.why)
        end
        -- A key that asks for a text first (a reason). Escape in Neovim's own input gives
        -- back `cancelreturn`: the question stays open. Nothing typed (nil on 0.7) is ''.
        vim.ui.input({ prompt = k.input, cancelreturn = M.CANCELLED }, function(text)
          if text ~= M.CANCELLED then
            answer(q, k.value, k.why, text or '')
          end
        end)
      end,
    })
  end
  -- The float never takes the cursor: the person enters it with :PidApproval. Where a window
  -- cannot open now (the command-line window, a text lock), try again shortly: the question
  -- stays open meanwhile.
  local ok, win = pcall(vim.api.nvim_open_win, buf, false, float_geometry(q.lines, q.height, q.title))
  if not ok then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
    vim.defer_fn(show_next, 200)
    return
  end
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].cursorline = true
  if q.warn ~= nil then
    -- A question that needs care (leaving the sandbox): its border and its warning lines stand
    -- out (PidWarning: ErrorMsg's colours unless a colorscheme sets its own; WarningMsg's
    -- colour alone is lost on 0.7's pink floats).
    vim.cmd('highlight default link PidWarning ErrorMsg')
    vim.wo[win].winhighlight = 'FloatBorder:WarningMsg'
    for _, row in ipairs(q.warn) do
      vim.api.nvim_buf_add_highlight(buf, -1, 'PidWarning', row, 0, -1)
    end
  end
  float.win, float.buf, float.q = win, buf, q
  -- Closed without an answer (:q, <C-w>o): the question is still open, so show it again;
  -- a question the person asked for (q.close_cancels) is cancelled instead.
  vim.api.nvim_create_autocmd('WinClosed', {
    pattern = tostring(win),
    once = true,
    callback = function()
      if float.win == win and not q.done then
        float.win, float.buf, float.q = nil, nil, nil
        vim.schedule(q.close_cancels and function() answer(q, nil, 'dismissed') end or show_next)
      end
    end,
  })
  pcall(vim.cmd, 'redraw')
end

-- ask queues a question: lines to show, keys = {{key, label, value, why?, input?}} (input: a
-- prompt for a text the key asks before it answers), on_answer(value, why, text) called once,
-- height: the float's largest share of the editor's height, close_cancels: closing the float
-- answers nil ("dismissed") instead of showing it again, title: the float's title (Neovim
-- 0.9+; default "pid asks"), warn: 0-based rows of lines shown as a warning (the border too).
-- It returns the question.
function M.ask(q)
  q.done = false
  -- Answered for the conversation that asked (the float is every conversation's).
  local conversations = require('pid.state')
  q.on_answer = conversations.bind(q.on_answer)
  -- With several conversations, the float says which one asks.
  if #conversations.convs > 1 and q.kind ~= 'trust' then
    local c = conversations.active
    table.insert(q.lines, 1, string.format('asked in %s ("%s")', require('pid.view').chat_name(), c.title or 'no prompt yet'))
    for i, row in ipairs(q.warn or {}) do
      q.warn[i] = row + 1
    end
  end
  table.insert(queue, q)
  show_next()
  return q
end

-- focus puts the cursor in the open question's float (normal mode). It returns false when no
-- question is open.
function M.focus()
  if not valid_win(float.win) then
    return false
  end
  local cur = vim.api.nvim_get_current_win()
  if cur ~= float.win then
    float.back = cur
  end
  vim.cmd('stopinsert')
  vim.api.nvim_set_current_win(float.win)
  return true
end

-- window returns the float of the open question, nil when none.
function M.window()
  return valid_win(float.win) and float.win or nil
end

-- current returns the question the float shows, nil when none.
function M.current()
  return float.q
end

-- press answers the open question as its key would (for tests and scripts).
function M.press(key)
  local q = float.q
  if q == nil then
    return false
  end
  for _, k in ipairs(q.keys) do
    if k.key == key then
      return answer(q, k.value, k.why)
    end
  end
  return false
end

-- withdraw ends open questions: pid's request id (pid withdrew it), or all of session (nil:
-- all sessions) that are not trust questions unless with_trust (pid exited or was stopped).
function M.withdraw(session, with_trust, request_id)
  for _, q in ipairs(vim.list_slice(queue, 1, #queue)) do
    local hit
    if request_id ~= nil then
      hit = q.request_id == request_id
    else
      hit = (with_trust or q.kind ~= 'trust') and (session == nil or q.session == nil or q.session == session)
    end
    if hit then
      answer(q, nil, 'withdrawn')
    end
  end
end

-- pending returns how many questions are open (shown or waiting for the float).
function M.pending()
  return #queue
end

-- short_json is v as JSON on one line, cut to limit characters (proposal.lua's).
local short_json = proposal.short_json
M.short_json = short_json

-- oneline makes text from pid (or from the workspace, through pid) fit one line.
local function oneline(v)
  return (tostring(v):gsub('%c', ' '))
end

-- scope returns the description of what an always answer covers, or nil when params.always
-- is absent or malformed.
function M.scope(always)
  if type(always) ~= 'table' or type(always.description) ~= 'string' or always.description:match('^%s*$') then
    return nil
  end
  return oneline(always.description)
end

-- before asks a beforeToolCall question in the float and calls respond({decision}) once it
-- is answered (or withdrawn: deny). opts: request_id (pid's, for withdraw), read, resolve (see
-- proposal.lua), on_line(text) for the chat, on_open() when it is shown, asker: which task's
-- subagent asks (children.asker), said in the float, session: the session that asks (the
-- subagent's own; default params.sessionId). A call asking to leave the sandbox
-- (params.sandbox.escalation) is asked as escalation.lua says.
function M.before(params, opts)
  params = params or {}
  local name = tostring(params.toolName or '?')
  local id = tostring(params.toolCallId or '?')
  local desc = M.scope(params.always)
  local shown, body, ft = pcall(proposal.proposal, name, params.args, opts.read, opts.resolve)
  if not shown then
    -- Whatever went wrong in showing the change, the question is still asked, with the
    -- arguments as pid sent them.
    body, ft = { 'arguments: ' .. short_json(params.args or vim.empty_dict(), 100000), '(the change could not be shown: ' .. tostring(body) .. ')' }, nil
  end
  local what = name
  if type(params.args) == 'table' and type(params.args.path) == 'string' then
    what = name .. ' ' .. params.args.path
  end
  local outside = escalation.asks(params)
  local lines, warn, title
  local keys = {
    { key = 'a', label = outside and 'allow once, outside the sandbox' or 'allow', value = M.ALLOW },
  }
  if outside then
    -- Leaving the sandbox: its own question (escalation.lua), "always" only for exactly
    -- this command, for this session.
    lines, warn, desc = escalation.lines(params, desc, body, opts.session)
    title = escalation.TITLE
    ft = nil -- a diff's syntax would colour the model's words
  else
    lines = { string.format('pid wants to run %s:', what), '' }
    vim.list_extend(lines, body)
    table.insert(lines, '')
    if desc ~= nil then
      table.insert(lines, 'A always allows ' .. desc)
    end
  end
  if opts.asker ~= nil then
    table.insert(lines, 2, 'asked by a subagent, for ' .. opts.asker)
    for i, row in ipairs(warn or {}) do
      warn[i] = row > 0 and row + 1 or row
    end
  end
  if desc ~= nil then
    table.insert(keys, { key = 'A', label = (outside and 'always allow outside the sandbox: ' or 'always allow: ') .. desc, value = M.ALWAYS_ALLOW })
  end
  table.insert(keys, { key = 'd', label = 'deny', value = M.DENY })
  table.insert(keys, { key = 'q', label = 'dismiss (deny)', value = M.DENY, why = 'dismissed' })
  if outside then
    table.insert(lines, desc ~= nil and '[a] allow once   [A] always: this command, this session   [d] deny   [q] dismiss (deny)'
      or '[a] allow once   [d] deny   [q] dismiss (deny)')
  else
    table.insert(lines, desc ~= nil and '[a] allow   [A] always allow   [d] deny   [q] dismiss (deny)'
      or '[a] allow   [d] deny   [q] dismiss (deny)')
  end
  table.insert(lines, ':PidApproval goes here to answer; keys typed elsewhere never answer')
  return M.ask({
    kind = 'approval',
    session = params.sessionId,
    request_id = opts.request_id,
    tool_call_id = params.toolCallId,
    lines = lines,
    filetype = ft,
    keys = keys,
    title = title,
    warn = warn,
    on_answer = function(value, why)
      local decision = value or M.DENY
      local shown = decision
      if why ~= nil then
        shown = 'deny (' .. why .. ')'
      elseif decision == M.ALWAYS_ALLOW then
        shown = decision .. ' (' .. desc .. ')'
      elseif outside and decision == M.ALLOW then
        shown = decision .. ' (once, outside the sandbox)'
      end
      if opts.on_line then
        opts.on_line(string.format('[approval] %s (%s): %s', name, id, shown))
      end
      opts.respond({ decision = decision })
    end,
  })
end

-- withheld sorts what pid left out of an untrusted folder (workspace/requestTrust's ignored,
-- pid's words per item) by what it is: its settings ("model"), its instruction files
-- ("instructions: AGENTS.md"), skills ("skill: NAME (PATH)") and agents ("agent: ...").
function M.withheld(ignored)
  local w = { settings = {}, instructions = {}, skills = {}, agents = {} }
  for _, v in ipairs(type(ignored) == 'table' and ignored or {}) do
    local item = oneline(v)
    local kind, rest = item:match('^(%a+): (.*)$')
    if kind == 'instructions' then
      table.insert(w.instructions, rest)
    elseif kind == 'skill' then
      table.insert(w.skills, rest)
    elseif kind == 'agent' then
      table.insert(w.agents, rest)
    else
      table.insert(w.settings, item)
    end
  end
  return w
end

-- trust_text says which folder pid asks about, and what it leaves out of it until trusted: only
-- what the folder really holds (a folder with AGENTS.md alone has no settings to speak of), as
-- lines, each a thing the folder holds.
function M.trust_text(params)
  local folder = oneline(params.folder or '?')
  local w = M.withheld(params.ignored)
  local out = {}
  if #w.settings > 0 then
    local list = table.concat(vim.list_slice(w.settings, 1, M.MAX_IGNORED_SHOWN), '; ')
    if #w.settings > M.MAX_IGNORED_SHOWN then
      list = string.format('%s; and %d more', list, #w.settings - M.MAX_IGNORED_SHOWN)
    end
    table.insert(out, 'what its .pid/settings.json would enable: ' .. list)
  end
  local function named(items, one, many)
    if #items > 0 then
      table.insert(out, string.format('its %s %s', #items == 1 and one or many, table.concat(items, ', ')))
    end
  end
  named(w.instructions, 'instruction file (for the model)', 'instruction files (for the model)')
  named(w.skills, 'skill', 'skills')
  named(w.agents, 'agent', 'agents')
  if #out == 0 then
    out = { 'what it holds (pid did not name it)' }
  end
  return folder, out
end

-- trust asks a workspace/requestTrust question in the float; respond({trusted}) once
-- answered. Only t trusts; dismissed or withdrawn keep the folder restricted.
function M.trust(params, opts)
  params = type(params) == 'table' and params or {}
  local folder, held = M.trust_text(params)
  if opts.on_line then
    opts.on_line(string.format('[trust] %s is not trusted; pid leaves out %s', folder, table.concat(held, '; and ')))
  end
  local lines = {
    'pid: the workspace folder ' .. folder .. ' is not trusted,',
    'so pid leaves out:',
  }
  for _, l in ipairs(held) do
    table.insert(lines, '  ' .. l)
  end
  vim.list_extend(lines, { '', '[t] trust this folder   [r] keep restricted   [q] dismiss (keep restricted)',
    ':PidApproval goes here to answer; keys typed elsewhere never answer' })
  return M.ask({
    kind = 'trust',
    request_id = opts.request_id,
    lines = lines,
    keys = {
      { key = 't', label = 'trust this folder', value = true },
      { key = 'r', label = 'keep restricted', value = false },
      { key = 'q', label = 'dismiss (keep restricted)', value = false, why = 'dismissed' },
    },
    on_answer = function(value, why)
      local shown = value and 'trusted' or 'kept restricted'
      if why ~= nil then
        shown = shown .. ' (' .. why .. ')'
      end
      if opts.on_line then
        opts.on_line(string.format('[trust] %s: %s', folder, shown))
      end
      opts.respond({ trusted = value == true })
    end,
  })
end

return M
