-- :PidRewind: going back to before one of the session's prompts (docs/protocol.md, "Rewind").
-- A picker of the session's checkpoints (checkpoints/list: one per prompt, newest first, with
-- the prompt's text, when, and how many files it changed), the diff from before that prompt
-- to the files as they are now (checkpoints/diff) in the float, answered by its keys: files,
-- conversation or both (session/rewind). Then the chat says what was restored, removed and
-- skipped (and why), the buffers of restored files are reloaded, and after a rewind of the
-- conversation the chat shows the session again from session/load. The state is state.lua's.

local state = require('pid.state')
local view = require('pid.view')
local approval = require('pid.approval')
local sessions = require('pid.sessions')
local lifecycle = require('pid.lifecycle')
local chat = require('pid.chat')
local words = require('pid.words')
local files_mod = require('pid.files')

local S = state.S
local notify = words.notify

local M = {}

-- CHOICES are the float's keys: what each restores (nil: cancel).
M.CHOICES = {
  { key = 'f', label = 'restore the files', restore = 'files' },
  { key = 'c', label = 'rewind the conversation', restore = 'conversation' },
  { key = 'b', label = 'both', restore = 'both' },
  { key = 'q', label = 'cancel' },
}

-- rel writes path relative to root (the workspace) when it is inside it.
function M.rel(path, root)
  path = tostring(path)
  if type(root) == 'string' and root ~= '' then
    root = root:gsub('/$', '')
    if path:sub(1, #root + 1) == root .. '/' then
      return path:sub(#root + 2)
    end
  end
  return path
end

-- oneline makes a prompt's text one line of at most width characters.
local function oneline(s, width)
  s = tostring(s or ''):gsub('%s+', ' '):gsub('^ ', ''):gsub(' $', '')
  if s == '' then
    return '(no text)'
  end
  if vim.fn.strchars(s) > width then
    s = vim.fn.strcharpart(s, 0, width - 3) .. '...'
  end
  return s
end

-- files_text says how many files a checkpoint's prompt changed.
local function files_text(n)
  if n == 0 then
    return 'no file changed'
  end
  return string.format('%d file%s', n, n == 1 and '' or 's')
end

-- SAFETY starts the prompt of a rewind's own checkpoint (the state it replaced).
M.SAFETY = 'Before rewinding to: '

-- typed returns a prompt as the person typed it: a `/NAME args` command of this conversation's
-- as typed (S.typed: pid keeps the prompt it made of it), else as it is. prompt may be cut
-- (a checkpoint keeps 200 characters): the prompt it begins is looked for then.
function M.typed(prompt)
  prompt = tostring(prompt or '')
  local typed = S.typed or {}
  if typed[prompt] ~= nil then
    return typed[prompt]
  end
  for sent, t in pairs(typed) do
    if #prompt >= 80 and sent:sub(1, #prompt) == prompt then
      return t
    end
  end
  return prompt
end

-- gone marks the checkpoints whose prompt is no longer in the conversation (a rewind of the
-- conversation took it out; pid still lists its checkpoint), given prompts, the texts of the
-- conversation's user messages, oldest first: the messages are matched from the newest back,
-- each to the newest checkpoint older than the ones matched after it with its text; the other
-- checkpoints (but a rewind's own) are gone. It returns a set of checkpoint ids.
function M.gone(cps, prompts)
  local function cut(t)
    return vim.fn.strcharpart(tostring(t), 0, 200)
  end
  local limit = #cps + 1
  local kept = {}
  for i = #(prompts or {}), 1, -1 do
    for j = limit - 1, 1, -1 do
      if cps[j].prompt == cut(prompts[i]) then
        kept[cps[j].id] = true
        limit = j
        break
      end
    end
  end
  local out = {}
  for _, cp in ipairs(cps) do
    if not kept[cp.id] and tostring(cp.prompt):sub(1, #M.SAFETY) ~= M.SAFETY then
      out[cp.id] = true
    end
  end
  return out
end

-- item_label is one checkpoint as a line of the picker:
--   "fix the test in parse.go" | 5 minutes ago | 2 files[ | incomplete: why][ | rewound away]
-- (a command as typed; gone: a rewind took its prompt out of the conversation).
function M.item_label(cp, now, gone)
  local n = type(cp.files) == 'table' and #cp.files or 0
  local prompt = tostring(cp.prompt or '')
  local text
  if prompt:sub(1, #M.SAFETY) == M.SAFETY then
    text = 'undo the rewind to "' .. oneline(M.typed(prompt:sub(#M.SAFETY + 1)), 60) .. '"'
  else
    text = '"' .. oneline(M.typed(prompt), 70) .. '"'
  end
  local s = string.format('%s | %s | %s', text, sessions.relative_time(cp.timestamp, now), files_text(n))
  if cp.incomplete then
    s = s .. ' | incomplete: ' .. oneline(cp.reason or 'some changes were not recorded', 80)
  end
  if gone then
    s = s .. ' | rewound away: no longer in the conversation'
  end
  return s
end

-- skip_text is why a rewind leaves a file as it is, in Neovim's words (no protocol field).
function M.skip_text(reason)
  return (tostring(reason or 'no reason given'):gsub('%s*%(pass force to restore it anyway%)', ''))
end

-- float_lines are the float's lines (filetype diff): the prompt, the files changed since
-- then, those of them with unsaved changes in Neovim (paths), the keys, then each file's diff,
-- whole.
function M.float_lines(cp, files, root, now, unsaved)
  local lines = {
    string.format('Rewind to before this prompt (%s):', sessions.relative_time(cp.timestamp, now)),
  }
  for _, l in ipairs(vim.split(tostring(cp.prompt or ''), '\n', { plain = true })) do
    table.insert(lines, '  ' .. l)
  end
  if cp.incomplete then
    table.insert(lines, 'Not every change of that prompt was recorded (' .. oneline(cp.reason or '?', 200) .. '): some files may not come back.')
  end
  table.insert(lines, '')
  if #files == 0 then
    table.insert(lines, 'No file changed since then: restoring the files changes nothing.')
  else
    table.insert(lines, string.format('Since then (%s):', files_text(#files)))
    local left = 0
    for _, f in ipairs(files) do
      -- Said before the choice: a file the rewind would leave as it is, and why.
      local skip = type(f.skip) == 'string' and f.skip ~= '' and ('  left as it is: ' .. M.skip_text(f.skip)) or ''
      left = left + (skip ~= '' and 1 or 0)
      table.insert(lines, string.format('  %-9s %s%s', tostring(f.change), M.rel(f.path, root), skip))
    end
    if left > 0 then
      table.insert(lines, string.format('Restoring the files leaves %s as %s, as said; :PidRewind! restores %s too (over the changes).',
        left == 1 and 'one' or tostring(left), left == 1 and 'it is' or 'they are', left == 1 and 'it' or 'them'))
    end
  end
  if unsaved ~= nil and #unsaved > 0 then
    local names = {}
    for _, p in ipairs(unsaved) do
      table.insert(names, M.rel(p, root))
    end
    table.insert(lines, string.format('Unsaved changes in Neovim: %s. Restoring the files replaces them (u in the buffer brings them back).', table.concat(names, ', ')))
  end
  table.insert(lines, '')
  local keys = {}
  for _, c in ipairs(M.CHOICES) do
    table.insert(keys, string.format('[%s] %s', c.key, c.label))
  end
  table.insert(lines, table.concat(keys, '   '))
  table.insert(lines, 'files: the files as they were before that prompt; conversation: the session goes on from before it')
  for _, f in ipairs(files) do
    local d = type(f.diff) == 'string' and f.diff:gsub('\n$', '') or ''
    table.insert(lines, '')
    if d:sub(1, 4) ~= '--- ' and d:sub(1, 5) ~= 'diff ' then
      local name = M.rel(f.path, root)
      vim.list_extend(lines, { '--- ' .. name .. ' (before that prompt)', '+++ ' .. name .. ' (now)' })
    end
    if d == '' then
      table.insert(lines, '(' .. tostring(f.change) .. ', no text diff)')
    else
      vim.list_extend(lines, vim.split(d, '\n', { plain = true }))
    end
  end
  return lines
end

-- report_lines say in the chat what a rewind did (result: session/rewind's).
function M.report_lines(cp, restore, result, root)
  result = type(result) == 'table' and result or {}
  local restored = type(result.restored) == 'table' and result.restored or {}
  local removed = type(result.removed) == 'table' and result.removed or {}
  local skipped = type(result.skipped) == 'table' and result.skipped or {}
  local what = { files = 'the files', conversation = 'the conversation', both = 'the files and the conversation' }
  local out = { string.format('[rewind] %s, back to before "%s"', what[restore] or restore, oneline(M.typed(cp.prompt), 70)) }
  if restore ~= 'conversation' then
    table.insert(out, string.format('[rewind] %d restored, %d removed, %d skipped', #restored, #removed, #skipped))
  end
  for _, p in ipairs(restored) do
    table.insert(out, '[rewind] restored ' .. M.rel(p, root))
  end
  for _, p in ipairs(removed) do
    table.insert(out, '[rewind] removed ' .. M.rel(p, root))
  end
  for _, x in ipairs(skipped) do
    if type(x) == 'table' then
      table.insert(out, string.format('[rewind] skipped %s: %s', M.rel(x.path, root), M.skip_text(x.reason)))
    end
  end
  if #skipped > 0 then
    table.insert(out, '[rewind] skipped files are as they were; :PidRewind! restores them too (over their changes)')
  end
  if restore ~= 'files' then
    table.insert(out, '[rewind] the conversation goes on from before that prompt')
  end
  if result.safetyCheckpointId ~= nil then
    -- pid keeps what the rewind took away in a checkpoint of its own, listed by that name.
    table.insert(out, string.format('[rewind] undo: :PidRewind, then "undo the rewind to "%s""', oneline(M.typed(cp.prompt), 60)))
  end
  return out
end

-- error_text says a failed checkpoints/* or session/rewind call in words.
local function error_text(what, e)
  local said = words.error_text(e)
  if type(e) == 'table' and e.code == -32803 then
    return 'a prompt is running: wait for it or :PidCancel it, then :PidRewind (pid says: ' .. said .. ')'
  end
  if type(e) == 'table' and e.code == -32601 then
    return 'this pid cannot rewind (' .. what .. ' is unknown to it): update pid'
  end
  return what .. ' failed: ' .. said
end

-- buffers_left says which removed files still have a buffer in Neovim (with their old text).
local function buffers_left(removed, root)
  local out = {}
  for _, p in ipairs(removed) do
    local b = vim.fn.bufnr(p)
    if b > 0 and vim.api.nvim_buf_is_loaded(b) then
      table.insert(out, string.format('[rewind] %s is removed, but Neovim still has its buffer: :bwipeout it (:w would write it again)', M.rel(p, root)))
    end
  end
  return out
end

-- apply calls session/rewind and reports; done(err, result).
local function apply(client, sid, cp, restore, force, done)
  if S.run ~= nil then
    local msg = 'a prompt is running: wait for it or :PidCancel it, then :PidRewind'
    notify(msg, vim.log.levels.WARN)
    return done(msg)
  end
  if S.client ~= client or S.session_id ~= sid then
    local msg = 'the session changed (or pid stopped) meanwhile: nothing was rewound'
    notify(msg, vim.log.levels.WARN)
    return done(msg)
  end
  local params = { sessionId = sid, checkpointId = cp.id, restore = restore }
  if force then
    params.force = true
  end
  client.request('session/rewind', params, function(e, res)
    if e ~= nil then
      local msg = error_text('session/rewind', e)
      view.append('[error] ' .. msg)
      notify(msg, vim.log.levels.ERROR)
      return done(msg)
    end
    local root = S.workspace
    local function report()
      chat.reload_buffers()
      local lines = M.report_lines(cp, restore, res, root)
      vim.list_extend(lines, buffers_left(type(res) == 'table' and type(res.removed) == 'table' and res.removed or {}, root))
      view.append_lines(lines)
      local said = lines[1]:sub(#'[rewind] ' + 1)
      if restore ~= 'conversation' then
        said = said .. '; ' .. lines[2]:sub(#'[rewind] ' + 1)
      end
      notify('rewound ' .. said)
      done(nil, res)
    end
    if restore == 'files' then
      return report()
    end
    -- The conversation went back: the chat shows the session again as pid now has it.
    if not lifecycle.load_session(sid, { summary = { rewound = true }, on_done = function(lerr)
      if lerr ~= nil then
        view.append('[rewind] the chat could not show the rewound conversation: ' .. lerr)
      end
      report()
    end }) then
      report()
    end
  end)
end

-- rewind runs :PidRewind (force: :PidRewind!, files changed since pid's last change are
-- restored too). opts.on_done(err, result) at the end: result is session/rewind's, nil when
-- nothing was chosen. It returns false while a prompt runs or when there is no session.
function M.rewind(opts)
  opts = opts or {}
  local done = words.caller(opts)
  if S.run ~= nil then
    notify('a prompt is running: wait for it or :PidCancel it, then :PidRewind', vim.log.levels.WARN)
    return false
  end
  if S.session_id == nil and S.resume_id == nil then
    notify('no session to rewind: run a prompt, or load a session with :PidSessions', vim.log.levels.WARN)
    return false
  end
  lifecycle.ensure(function(err)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return done(err)
    end
    local client, sid = S.client, S.session_id
    client.request('checkpoints/list', { sessionId = sid }, function(e, res)
      if e ~= nil then
        local msg = error_text('checkpoints/list', e)
        notify(msg, vim.log.levels.ERROR)
        return done(msg)
      end
      local list = {}
      for _, cp in ipairs(type(res) == 'table' and type(res.checkpoints) == 'table' and res.checkpoints or {}) do
        if type(cp) == 'table' and cp.id ~= nil then
          table.insert(list, 1, cp) -- newest first
        end
      end
      if #list == 0 then
        notify('nothing to rewind: this session has no checkpoints yet (one is made at each prompt)')
        return done(nil, nil)
      end
      local now = os.time()
      local oldest_first = {}
      for i = #list, 1, -1 do
        table.insert(oldest_first, list[i])
      end
      local gone = M.gone(oldest_first, S.prompts)
      state.select(list, {
        prompt = 'Rewind to before which prompt? (newest first)',
        kind = 'pid.checkpoint',
        format_item = function(cp)
          return M.item_label(cp, now, gone[cp.id])
        end,
      }, function(cp)
        if cp == nil then
          return done(nil, nil)
        end
        M.show_diff(client, sid, cp, opts.force, done)
      end)
    end)
  end)
  return true
end

-- unsaved_of returns the paths of files whose buffer has unsaved changes: pid writes a file
-- back through its buffer, over them.
local function unsaved_of(files)
  local out = {}
  for _, f in ipairs(files) do
    local b = type(f.path) == 'string' and files_mod.buffer(f.path) or nil
    if b ~= nil and vim.bo[b].modified then
      table.insert(out, f.path)
    end
  end
  return out
end

-- show_diff shows the diff from before checkpoint cp to now in the float (the cursor in it),
-- then rewinds as the key pressed says.
function M.show_diff(client, sid, cp, force, done)
  client.request('checkpoints/diff', { sessionId = sid, checkpointId = cp.id }, function(e, res)
    if e ~= nil then
      local msg = error_text('checkpoints/diff', e)
      notify(msg, vim.log.levels.ERROR)
      return done(msg)
    end
    local files = type(res) == 'table' and type(res.files) == 'table' and res.files or {}
    local keys = {}
    for _, c in ipairs(M.CHOICES) do
      table.insert(keys, { key = c.key, label = c.label, value = c.restore })
    end
    local q = approval.ask({
      kind = 'rewind',
      session = sid,
      lines = M.float_lines(cp, files, S.workspace, os.time(), unsaved_of(files)),
      filetype = 'diff',
      height = 0.8,
      close_cancels = true,
      keys = keys,
      on_answer = function(restore)
        if restore == nil then
          return done(nil, nil)
        end
        apply(client, sid, cp, restore, force, done)
      end,
    })
    -- The person asked for it: the float takes the cursor (unless another question is shown).
    if approval.current() == q then
      approval.focus()
    end
  end)
end

return M
