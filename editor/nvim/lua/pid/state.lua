-- The plugin's state, in one place: the options in force, the pid process, the conversations
-- (each a chat buffer and its session, its running prompt), the open questions and the file
-- stamps. Every other module reads and writes these tables here and keeps no state of its own,
-- so that what the plugin knows at any moment can be read in this one file.
--
-- One Neovim has one pid process at a time, serving one or more conversations (:PidChat in
-- another tab page, :PidNew!): each has its own chat buffer, session and at most one running
-- prompt. S is the state of the active conversation and of the process: S's conversation
-- fields (CONV) are those of `active`, and `chat` is its chat buffer's. A command makes the
-- conversation it is for active (focus); pid's notifications and requests run with their
-- session's conversation active (with), and so do callbacks that conversation registered
-- (bind). Everything here is touched on the main loop only.

local M = {}

-- The options setup{} takes, with their defaults (see README.md, "Setup options").
M.defaults = {
  -- The command that starts pid: program and arguments.
  cmd = { 'pid' },
  -- Extra environment variables for pid (merged into Neovim's), e.g. { PID_LOG = 'info' }.
  env = nil,
  -- pid's working folder, and the workspace folder sent in initialize; default: the cwd at
  -- start.
  cwd = nil,
  -- initializationOptions: default session settings (same fields as `session`).
  init_options = nil,
  -- The model of new sessions (session/new's model), e.g. { provider = "anthropic", id =
  -- "claude-sonnet-4-5" }; same as session.model. nil: pid's settings files decide.
  model = nil,
  -- session/new params: model, permissions, toolExecution, systemPrompt, scriptedTools...
  -- `cwd` defaults to Neovim's cwd when the session starts.
  session = {},
  -- How the chat is shown when no window of the tab shows it: an Ex command that opens a
  -- window (the buffer is put in it), or a function returning one; false: do not open one.
  -- Default: a window on the right, 40% of the editor's width (between 40 and 90 columns).
  open = nil,
  -- Let pid read and write files through Neovim's buffers (unsaved changes seen, edits land
  -- in the buffer). false: pid uses the disk, and buffers are reloaded after its tools ran.
  buffers = true,
  -- Answer pid's editor/diagnostics from vim.diagnostic (the problems after its edits, from
  -- the language servers and linters Neovim runs). false: pid is not told Neovim answers.
  diagnostics = true,
}

-- config is the options in force: setup's over the defaults. setup{} replaces it whole.
M.config = vim.deepcopy(M.defaults)

-- CONV are the fields of S that belong to a conversation: those of the active one.
local CONV = {
  session_id = true, -- its session; nil: the next prompt makes (or resumes) one
  session_override = true, -- params for its next session/new (new_session(opts))
  resume_id = true, -- the session pid held when it stopped unexpectedly (:PidResume)
  creating = true, -- session/new (or the resume's session/load) is in flight
  loading = true, -- session/load is in flight (:PidSessions, :PidResume)
  waiters = true, -- callbacks waiting for a session: fun(err)
  -- Its session's mode (modes.lua): {current = mode id, available = {{id, name,
  -- description}}} from session/new or session/load, current kept by modeUpdate; nil: no
  -- session said it yet (or :PidStop, :PidNew: the next session says its own).
  modes = true,
  -- The part of the chat that shows its session: {start = its first line (0-based), session =
  -- its id}. Loading that session again (:PidResume after pid stopped) replaces that part
  -- instead of showing the conversation twice.
  region = true,
  region_pending = true, -- where the next new session's part starts, when a prompt shows first
  -- The instruction files the model of its session gets, as its session/new or session/load
  -- result said them: {session = its id, files = {{path, bytes, truncated}} or nil}.
  instructions = true,
  -- Its running prompt (prompt.lua): {text, id? (session/prompt's request id), session,
  -- cancelled, on_done, cards}; nil: none runs.
  run = true,
  last_result = true, -- its last session/prompt result
  last_error = true, -- its last run's error message, if it failed
  -- The text blocks of the assistant message being streamed, shown one after another, a
  -- newline between two (chat.lua's messageUpdate).
  streamed = true,
  -- The context meter: the last usageUpdate {used, size, cost?, session}; nil: none yet.
  usage = true,
  -- The plan: the last planUpdate's entries ({content, status, priority}); nil: none yet.
  plan = true,
  -- The review of a prompt's changes shown (review.lua): {client, sid, checkpointId, files =
  -- {path -> changes/list's file}, diffed = the buffer in diff mode}; nil: none.
  review = true,
  -- The window of the file before the prompt beside a reviewed file (review.lua); nil: none.
  review_before = true,
  -- The autocommand group of :PidReview (review.lua); nil until the first :PidReview.
  review_group = true,
  -- The last changesUpdate of the running prompt, shown at its end (review.lua); nil: none.
  changes = true,
  -- Its session's /commands: {session = its id, list = {{name, description, input?}}} from
  -- commands/list; nil: not asked yet.
  commands = true,
  -- The `/NAME args` the person typed, by the prompt pid made of it (a template filled in):
  -- a redrawn conversation and the rewind picker show them as typed.
  typed = true,
  -- The texts of its session's user messages on the current branch, oldest first (from
  -- session/load, then as pid adds them): the rewind picker marks the prompts gone from it.
  prompts = true,
}
M.CONV = CONV

-- new_conv returns a conversation numbered n: its fields of S (CONV) and its chat buffer's state.
local function new_conv(n)
  return {
    n = n,
    waiters = {},
    streamed = 0,
    typed = {},
    prompts = {},
    -- The tab page it belongs to (:PidChat there made it, or first showed it); nil: none yet.
    tab = nil,
    -- Its title: its first prompt, or the loaded session's (chats.lua names it by that).
    title = nil,
    -- Its chat buffer (view.lua) and prompt buffer (promptwin.lua).
    chat = {
      buf = nil, -- the chat buffer: pid://chat (the first conversation), pid://chat/N
      empty = true, -- the buffer holds only its initial empty line
      text = nil, -- {start = 0-based first line, n = line count, last} of the assistant text streaming now
      cards = {}, -- tool call key -> {mark, hl, hl_mark ("ran outside the sandbox"), status, latest, output, head, command}
      prompt_buf = nil, -- the prompt buffer, pid://prompt (pid://prompt/N)
    },
  }
end
M.new_conv = new_conv

-- convs are the conversations, in the order they were made; active is the one S and chat
-- are of now.
M.convs = { new_conv(1) }
M.active = M.convs[1]

-- S is the state of the pid process and (CONV) of the active conversation.
M.S = setmetatable({
  -- The process (lifecycle.lua).
  client = nil, -- the rpc client (rpc.lua) while pid runs
  -- Identifies the current pid process (a table; handlers of an older one compare and ignore),
  -- and says what happens at its end: {exited = true once it exited, after_exit = the start
  -- of the next pid that waits for it}.
  token = nil,
  starting = false, -- pid is starting: initialize is in flight
  initialized = false, -- initialize was answered and `initialized` sent
  init_waiters = {}, -- callbacks waiting for pid to be initialized: fun(err)
  server_info = nil, -- initialize's serverInfo
  saves_sessions = false, -- initialize's capabilities.experimental.pid.sessions
  workspace = nil, -- the workspace folder pid was started with
  stopping = nil, -- the token of a pid :PidStop stopped that has not exited yet
  exit = nil, -- {code, signal} of the last pid process that exited
  crashed = false, -- the last pid exited without :PidStop
  stderr = nil, -- the last lines on stderr of the last pid that stopped unexpectedly
  withdrawals = 0, -- requests pid withdrew ($/cancelRequest from pid)
  fs_reads = 0, -- fs/read_text_file requests answered
  fs_writes = 0, -- fs/write_text_file requests answered
  runs = 0, -- finished runs, of every conversation

  -- The running children (subagents), by child session id: {parent = the task call's card
  -- key, session = the parent's session, description, agent, ended = stopReason or nil}.
  children = {},
  -- What pid's sandbox refused last, by session id (its own or a child's): the last bash result
  -- holding pid's sandbox note, {command, lines = the output's last lines before the note,
  -- note}, shown when that session asks to run a command outside the sandbox (escalation.lua).
  refusals = {},
  -- Neovim's 'breakat' view.lua replaced while a chat is shown (it breaks lines at blanks only
  -- then); nil: not replaced.
  breakat_was = nil,
}, {
  __index = function(_, k)
    if CONV[k] then
      return M.active[k]
    end
  end,
  __newindex = function(t, k, v)
    if CONV[k] then
      M.active[k] = v
    else
      rawset(t, k, v)
    end
  end,
})

-- with calls fn(...) with conv active (S and chat are its), then makes the one active before
-- active again; it returns what fn returns, and raises what fn raises. conv nil: as it is.
function M.with(conv, fn, ...)
  if conv == nil or conv == M.active then
    return fn(...)
  end
  local before = M.active
  M.active = conv
  local r = { pcall(fn, ...) }
  M.active = before
  if not r[1] then
    error(r[2], 0)
  end
  return unpack(r, 2, table.maxn(r))
end

-- bind returns fn bound to the conversation active now: called later (an rpc answer, a
-- picker's choice, a timer), it runs with that conversation active.
function M.bind(fn)
  if fn == nil then
    return nil
  end
  local conv = M.active
  return function(...)
    return M.with(conv, fn, ...)
  end
end

-- of_session returns the conversation of session id: the one whose session it is (or whose
-- running prompt's), else the one of the task whose child it is; nil when none.
function M.of_session(id)
  if id == nil then
    return nil
  end
  for _, c in ipairs(M.convs) do
    if c.session_id == id or (c.run ~= nil and c.run.session == id) or c.resume_id == id then
      return c
    end
  end
  local child = M.S.children[id]
  if child ~= nil and child.session ~= id then
    return M.of_session(child.session)
  end
  return nil
end

-- of_buf returns the conversation whose chat or prompt buffer buf is, nil for another buffer.
function M.of_buf(buf)
  for _, c in ipairs(M.convs) do
    if c.chat.buf == buf or c.chat.prompt_buf == buf then
      return c
    end
  end
  return nil
end

-- current returns the conversation a command is for: the one of the current buffer (its chat
-- or prompt), else the one a window of the current tab page shows, else the tab page's own,
-- else the one active last.
function M.current()
  local c = M.of_buf(vim.api.nvim_get_current_buf())
  if c ~= nil then
    return c
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    c = M.of_buf(vim.api.nvim_win_get_buf(win))
    if c ~= nil then
      return c
    end
  end
  local tab = vim.api.nvim_get_current_tabpage()
  for _, x in ipairs(M.convs) do
    if x.tab == tab then
      return x
    end
  end
  return M.active
end

-- focus makes the conversation a command is for (current) active, and returns it.
function M.focus()
  M.active = M.current()
  return M.active
end

-- select and input are vim.ui.select and vim.ui.input with the choice handled for the
-- conversation active now (bind).
function M.select(items, opts, on_choice)
  return vim.ui.select(items, opts, M.bind(on_choice))
end

function M.input(opts, on_confirm)
  return vim.ui.input(opts, M.bind(on_confirm))
end

-- add makes a new conversation, active, and returns it.
function M.add()
  local c = new_conv(#M.convs + 1)
  table.insert(M.convs, c)
  M.active = c
  return c
end

-- diag is what the plugin knows of the buffers' diagnostics (diagnostics.lua): changed[buf] =
-- the buffer's changedtick when vim.diagnostic last changed for it (DiagnosticChanged);
-- waiting = the open editor/diagnostics answers, each {bufs = {buf = changedtick wanted},
-- finish = fun()}.
M.diag = { changed = {}, waiting = {} }

-- chat is the active conversation's chat buffer's state (view.lua, promptwin.lua; its fields
-- are documented in new_conv).
M.chat = setmetatable({}, {
  __index = function(_, k)
    return M.active.chat[k]
  end,
  __newindex = function(_, k, v)
    M.active.chat[k] = v
  end,
})

-- questions are pid's open questions and their float (approval.lua).
M.questions = {
  -- Open questions, the first one shown: {kind, session, request_id, lines, keys, on_answer,
  -- filetype, done}.
  queue = {},
  -- The float: its window and buffer, the question it shows, and the window the cursor came
  -- from when :PidApproval entered it (it goes back there after the answer).
  float = { win = nil, buf = nil, q = nil, back = nil },
}

-- jobs is :PidJobs's list (jobs.lua).
M.jobs = {
  list_buf = nil, -- the list's buffer (pid://jobs), made by the first :PidJobs
  out_buf = nil, -- the output's buffer (pid://job-output), made by the first <CR>
  sid = nil, -- the session the list shows
  shown = {}, -- its jobs as jobs/list gave them, by line
}

-- stamps[buf] is what the plugin knows of buffer buf's file (files.lua): the file's stamp when
-- Neovim last read or wrote it, false (there was no file), or {changed = true, told = stamp or
-- false or nil} (the disk changed and the buffer, which has unsaved changes, was not
-- reloaded; told: the file's stamp when the chat said so). No entry: no stamp yet.
M.stamps = {}

-- forget_process forgets the pid process (it was stopped, or it exited): the next prompt
-- starts another, with a new session in every conversation.
function M.forget_process()
  local S = M.S
  S.token, S.client, S.starting, S.initialized = nil, nil, false, false
  for _, c in ipairs(M.convs) do
    c.session_id, c.creating, c.loading = nil, false, false
  end
end

return M
