-- The plugin's state, in one place: the options in force, the pid process and its session, the
-- running prompt, the chat buffer, the open questions and the file stamps. Every other module
-- reads and writes these tables here and keeps no state of its own, so that what the plugin
-- knows at any moment can be read in this one file.
--
-- One Neovim has one pid process at a time, one current session in it, and at most one
-- running prompt. Everything here is touched on the main loop only.

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

-- S is the state of the pid process, its current session and the running prompt.
M.S = {
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

  -- The current session (lifecycle.lua).
  session_id = nil, -- the current session; nil: the next prompt makes (or resumes) one
  session_override = nil, -- params for the next session/new (new_session(opts))
  resume_id = nil, -- the session pid held when it stopped unexpectedly (:PidResume)
  creating = false, -- session/new (or the resume's session/load) is in flight
  loading = false, -- session/load is in flight (:PidSessions, :PidResume)
  waiters = {}, -- callbacks waiting for a session: fun(err)
  -- The current session's mode (modes.lua): {current = mode id, available = {{id, name,
  -- description}}} from session/new or session/load, current kept by modeUpdate; nil: no
  -- session said it yet (or :PidStop, :PidNew: the next session says its own).
  modes = nil,
  -- The part of the chat that shows the current session: {start = its first line (0-based),
  -- session = its id}. Loading that session again (:PidResume after pid stopped) replaces
  -- that part instead of showing the conversation twice.
  region = nil,
  region_pending = nil, -- where the next new session's part starts, when a prompt shows first
  -- The instruction files the model of a session gets, as its session/new or session/load
  -- result said them: {session = its id, files = {{path, bytes, truncated}} or nil}.
  instructions = nil,

  -- The running prompt (prompt.lua) and the runs that ended (chat.finish_run).
  run = nil, -- {text, id? (session/prompt's request id), session, cancelled, on_done, cards}
  runs = 0, -- finished runs
  last_result = nil, -- the last session/prompt result
  last_error = nil, -- the last run's error message, if it failed
  -- The text blocks of the assistant message being streamed, shown one after another, a
  -- newline between two (chat.lua's messageUpdate).
  streamed = 0,

  -- What the current session shows besides its messages (plan.lua, slash.lua, children.lua).
  -- The context meter: the last usageUpdate {used, size, cost?}; nil: none yet.
  usage = nil,
  -- The plan: the last planUpdate's entries ({content, status, priority}); nil: none yet.
  plan = nil,
  -- The session's /commands: {session = its id, list = {{name, description, input?}}} from
  -- commands/list; nil: not asked yet.
  commands = nil,
  -- The running children (subagents), by child session id: {parent = the task call's card
  -- key, session = the parent's session, description, agent, ended = stopReason or nil}.
  children = {},
  -- What pid's sandbox refused last, by session id (its own or a child's): the last bash result
  -- holding pid's sandbox note, {command, lines = the output's last lines before the note,
  -- note}, shown when that session asks to run a command outside the sandbox (escalation.lua).
  refusals = {},
}

-- diag is what the plugin knows of the buffers' diagnostics (diagnostics.lua): changed[buf] =
-- the buffer's changedtick when vim.diagnostic last changed for it (DiagnosticChanged);
-- waiting = the open editor/diagnostics answers, each {bufs = {buf = changedtick wanted},
-- finish = fun()}.
M.diag = { changed = {}, waiting = {} }

-- chat is the chat buffer's state (view.lua).
M.chat = {
  buf = nil, -- the chat buffer, pid://chat
  empty = true, -- the buffer holds only its initial empty line
  text = nil, -- {start = 0-based first line, n = line count, last} of the assistant text streaming now
  cards = {}, -- tool call key -> {mark, hl, hl_mark ("ran outside the sandbox"), status, latest, output, head, command}
  prompt_buf = nil, -- the prompt buffer, pid://prompt
}

-- questions are pid's open questions and their float (approval.lua).
M.questions = {
  -- Open questions, the first one shown: {kind, session, request_id, lines, keys, on_answer,
  -- filetype, done}.
  queue = {},
  -- The float: its window and buffer, the question it shows, and the window the cursor came
  -- from when :PidApproval entered it (it goes back there after the answer).
  float = { win = nil, buf = nil, q = nil, back = nil },
}

-- stamps[buf] is what the plugin knows of buffer buf's file (files.lua): the file's stamp when
-- Neovim last read or wrote it, false (there was no file), or {changed = true, told = stamp or
-- false or nil} (the disk changed and the buffer, which has unsaved changes, was not
-- reloaded; told: the file's stamp when the chat said so). No entry: no stamp yet.
M.stamps = {}

-- forget_process forgets the pid process (it was stopped, or it exited): the next prompt
-- starts another, with a new session.
function M.forget_process()
  local S = M.S
  S.token, S.client, S.starting, S.initialized, S.session_id = nil, nil, false, false, nil
  S.creating, S.loading = false, false
end

return M
