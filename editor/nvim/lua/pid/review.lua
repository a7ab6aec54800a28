-- :PidReview: the review of a prompt's changes hunk by hunk (docs/protocol.md, "Reviewing a
-- prompt's changes"). changes/list fills the quickfix list, one entry per pending hunk; on a
-- file of the review, the diff mode against its state before the prompt (a scratch buffer
-- made from checkpoints/diff, applied backwards), `gk` keeps and `gu` undoes the hunk under
-- the cursor (changes/keep, changes/undo), `]h`/`[h` move between hunks. changesUpdate puts
-- the list of changed files with their counts in the chat. The state is state.lua's
-- (S.review, S.review_before, S.review_group).

local state = require('pid.state')
local view = require('pid.view')
local words = require('pid.words')
local lifecycle = require('pid.lifecycle')

local S = state.S
local notify = words.notify

local M = {}

-- rel writes path relative to root when it is inside it.
local function rel(path, root)
  path = tostring(path)
  if type(root) == 'string' and root ~= '' then
    root = root:gsub('/$', '')
    if path:sub(1, #root + 1) == root .. '/' then
      return path:sub(#root + 2)
    end
  end
  return path
end

-- first_line is the line a hunk starts at in the file now (1 at least).
function M.first_line(h)
  local n = tonumber(h.newStart) or 0
  if (tonumber(h.newLines) or 0) == 0 then
    n = n + 1 -- a deletion sits after line newStart
  end
  return math.max(n, 1)
end

-- qf_items are the quickfix entries of a changes/list answer: one per pending hunk, at the
-- line it starts at now, saying the change, the hunk and the tools.
function M.qf_items(files)
  local out = {}
  for _, f in ipairs(files or {}) do
    for _, h in ipairs(f.hunks or {}) do
      if h.state ~= 'kept' then
        table.insert(out, {
          filename = f.path,
          lnum = M.first_line(h),
          text = string.format('%s %s (by %s)', f.change or 'modified', h.header or '', table.concat(f.by or {}, ', ')),
        })
      end
    end
  end
  return out
end

-- hunk_at returns the hunk of file f under line (nil: none): the one whose lines now hold
-- it, or, for a hunk of no lines now, the line it sits at.
function M.hunk_at(f, line)
  for _, h in ipairs(f and f.hunks or {}) do
    local from = M.first_line(h)
    local to = from + math.max((tonumber(h.newLines) or 0) - 1, 0)
    if line >= from and line <= to then
      return h
    end
  end
  return nil
end

-- next_line returns the line of the next (dir 1) or previous (dir -1) hunk of f from line.
function M.next_line(f, line, dir)
  local best
  for _, h in ipairs(f and f.hunks or {}) do
    local l = M.first_line(h)
    if dir > 0 and l > line and (best == nil or l < best) then
      best = l
    elseif dir < 0 and l < line and (best == nil or l > best) then
      best = l
    end
  end
  return best
end

-- before_lines returns the file's lines before the prompt from its lines now and the unified
-- diff from before to now (checkpoints/diff), applied backwards; nil when the diff is no
-- text diff.
function M.before_lines(now, diff)
  local out, at = {}, 1
  local lines = vim.split(tostring(diff or ''), '\n', { plain = true })
  local seen = false
  local i = 1
  while i <= #lines do
    local c, d = lines[i]:match('^@@ %-%d+,?%d* %+(%d+),?(%d*) @@')
    if c ~= nil then
      seen = true
      c = tonumber(c)
      local upto = (d == '0') and c or c - 1
      while at <= upto do
        table.insert(out, now[at])
        at = at + 1
      end
      i = i + 1
      while i <= #lines and not lines[i]:match('^@@ ') do
        local l = lines[i]
        local mark, rest = l:sub(1, 1), l:sub(2)
        if mark == ' ' then
          table.insert(out, rest)
          at = at + 1
        elseif mark == '-' then
          table.insert(out, rest)
        elseif mark == '+' then
          at = at + 1
        end
        i = i + 1
      end
    else
      i = i + 1
    end
  end
  if not seen then
    return nil
  end
  while at <= #now do
    table.insert(out, now[at])
    at = at + 1
  end
  return out
end

-- update_lines are the chat's lines for a changesUpdate: the files and their counts.
function M.update_lines(p, root)
  local files = type(p.files) == 'table' and p.files or {}
  if #files == 0 then
    return { '[changes] no file differs from before the prompt' }
  end
  local pending = 0
  local parts = {}
  for _, f in ipairs(files) do
    pending = pending + (tonumber(f.pending) or 0)
    table.insert(parts, string.format('%s +%d -%d%s', rel(f.path, root), tonumber(f.added) or 0, tonumber(f.removed) or 0,
      (tonumber(f.pending) or 0) > 0 and string.format(' (%d pending)', f.pending) or ''))
  end
  return { string.format('[changes] %d file%s changed, %d hunk%s to review (:PidReview): %s', #files, #files == 1 and '' or 's',
    pending, pending == 1 and '' or 's', table.concat(parts, ', ')) }
end

-- on_update keeps a changesUpdate: during a run, for its end (run_ended); else (after an
-- undo or a keep) it is shown in the chat at once.
function M.on_update(p)
  if p.sessionId ~= S.session_id then
    return
  end
  S.changes = p
  if S.run == nil then
    view.append_lines(M.update_lines(p, S.workspace))
    S.changes = nil
  end
end

-- run_ended shows, after a run's last line, the files it changed so far with their counts
-- (the last changesUpdate of the run), once.
function M.run_ended()
  local p = S.changes
  S.changes = nil
  if p ~= nil and p.sessionId == S.session_id then
    view.append_lines(M.update_lines(p, S.workspace))
  end
end

-- error_text says why a review request failed.
local function error_text(what, e)
  local said = words.error_text(e)
  if type(e) == 'table' and e.code == -32601 then
    return 'this pid cannot review changes (' .. what .. ' is unknown to it): update pid'
  end
  return what .. ' failed: ' .. said
end

-- close_before closes the diff against the state before the prompt.
local function close_before()
  if S.review_before ~= nil and vim.api.nvim_win_is_valid(S.review_before) then
    pcall(vim.api.nvim_win_close, S.review_before, true)
  end
  S.review_before = nil
end

-- show_before opens the state before the prompt of the current buffer's file beside it, both
-- windows in diff mode.
function M.show_before(client, sid, cp, path, done)
  client.request('checkpoints/diff', { sessionId = sid, checkpointId = cp }, function(e, res)
    if e ~= nil then
      return done(error_text('checkpoints/diff', e))
    end
    local diff
    for _, f in ipairs(type(res) == 'table' and res.files or {}) do
      if f.path == path then
        diff = f.diff
      end
    end
    local buf = vim.fn.bufnr(path)
    if buf < 0 or diff == nil then
      return done(nil)
    end
    local before = M.before_lines(vim.api.nvim_buf_get_lines(buf, 0, -1, false), diff)
    if before == nil then
      return done('no text diff of ' .. path)
    end
    close_before()
    local win = vim.fn.bufwinid(buf)
    if win < 0 then
      return done(nil)
    end
    vim.api.nvim_set_current_win(win)
    local scratch = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(scratch, 0, -1, false, before)
    vim.bo[scratch].modifiable = false
    vim.bo[scratch].bufhidden = 'wipe'
    vim.cmd('leftabove vsplit')
    S.review_before = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(S.review_before, scratch)
    pcall(vim.api.nvim_buf_set_name, scratch, 'pid://before/' .. path)
    vim.cmd('diffthis')
    vim.api.nvim_set_current_win(win)
    vim.cmd('diffthis')
    done(nil)
  end)
end

-- file_of returns the reviewed file of buffer buf (nil: not one).
local function file_of(buf)
  if S.review == nil then
    return nil
  end
  return S.review.files[vim.api.nvim_buf_get_name(buf)]
end

-- act keeps ('keep') or undoes ('undo') the hunk under the cursor; opts.on_done(err, res).
function M.act(what, opts)
  opts = opts or {}
  local done = words.caller(opts)
  local buf = vim.api.nvim_get_current_buf()
  local f = file_of(buf)
  local h = f and M.hunk_at(f, vim.api.nvim_win_get_cursor(0)[1])
  if h == nil then
    notify('no hunk of the review under the cursor', vim.log.levels.WARN)
    return done('no hunk')
  end
  local cur = S.review
  cur.client.request('changes/' .. what, { sessionId = cur.sid, checkpointId = cur.checkpointId, path = f.path, hunkIds = { h.id } }, function(e, res)
    if e ~= nil then
      local msg = error_text('changes/' .. what, e)
      notify(msg, vim.log.levels.ERROR)
      return done(msg)
    end
    if what == 'undo' then
      for _, s in ipairs(type(res) == 'table' and res.skipped or {}) do
        notify(string.format('the hunk was left as it is: %s', tostring(s.reason)), vim.log.levels.WARN)
      end
      require('pid.chat').reload_buffers()
    end
    M.refresh(function(err)
      done(err, res)
    end)
  end)
end

-- jump moves the cursor to the next (dir 1) or previous (dir -1) hunk.
function M.jump(dir)
  local f = file_of(vim.api.nvim_get_current_buf())
  local l = f and M.next_line(f, vim.api.nvim_win_get_cursor(0)[1], dir)
  if l ~= nil then
    vim.api.nvim_win_set_cursor(0, { l, 0 })
  end
end

-- map sets the review's keys on buffer buf.
local function map(buf)
  local o = { buffer = buf, silent = true }
  vim.keymap.set('n', 'gk', function() M.act('keep') end, vim.tbl_extend('force', o, { desc = 'pid: keep this hunk' }))
  vim.keymap.set('n', 'gu', function() M.act('undo') end, vim.tbl_extend('force', o, { desc = 'pid: undo this hunk' }))
  vim.keymap.set('n', ']h', function() M.jump(1) end, vim.tbl_extend('force', o, { desc = 'pid: next hunk' }))
  vim.keymap.set('n', '[h', function() M.jump(-1) end, vim.tbl_extend('force', o, { desc = 'pid: previous hunk' }))
end

-- on_enter sets the keys and the diff on a reviewed file's buffer when it is entered.
local function on_enter(ev)
  local f = file_of(ev.buf)
  if f == nil then
    return
  end
  map(ev.buf)
  if S.review.diffed ~= ev.buf then
    S.review.diffed = ev.buf
    M.show_before(S.review.client, S.review.sid, S.review.checkpointId, f.path, function(err)
      if err ~= nil then
        notify(err, vim.log.levels.WARN)
      end
    end)
  end
end

-- refresh lists the changes again and refills the quickfix list; done(err).
function M.refresh(done)
  local cur = S.review
  cur.client.request('changes/list', { sessionId = cur.sid, checkpointId = cur.checkpointId }, function(e, res)
    if e ~= nil then
      return done(error_text('changes/list', e))
    end
    local files = type(res) == 'table' and type(res.files) == 'table' and res.files or {}
    cur.checkpointId = res.checkpointId
    cur.files = {}
    for _, f in ipairs(files) do
      cur.files[f.path] = f
    end
    local items = M.qf_items(files)
    vim.fn.setqflist({}, ' ', { title = string.format('pid review: %d hunk%s to review', #items, #items == 1 and '' or 's'), items = items })
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if cur.files[vim.api.nvim_buf_get_name(b)] ~= nil then
        map(b)
      end
    end
    if cur.diffed ~= nil and vim.api.nvim_buf_is_valid(cur.diffed) then
      local f = cur.files[vim.api.nvim_buf_get_name(cur.diffed)]
      if f ~= nil then
        return M.show_before(cur.client, cur.sid, cur.checkpointId, f.path, function()
          done(nil, items)
        end)
      end
      close_before()
    end
    done(nil, items)
  end)
end

-- review runs :PidReview: the latest prompt's changes in the quickfix list.
-- opts.on_done(err, items) at the end.
function M.review(opts)
  opts = opts or {}
  local done = words.caller(opts)
  if S.session_id == nil and S.resume_id == nil then
    notify('no session to review: run a prompt, or load a session with :PidSessions', vim.log.levels.WARN)
    return false
  end
  lifecycle.ensure(function(err)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return done(err)
    end
    S.review = { client = S.client, sid = S.session_id, checkpointId = nil, files = {} }
    if S.review_group == nil then
      S.review_group = vim.api.nvim_create_augroup('PidReview', { clear = true })
      vim.api.nvim_create_autocmd('BufEnter', { group = S.review_group, callback = on_enter })
    end
    M.refresh(function(rerr, items)
      if rerr ~= nil then
        notify(rerr, vim.log.levels.ERROR)
        return done(rerr)
      end
      if #items == 0 then
        notify('nothing to review: the latest prompt left no pending change')
      else
        vim.cmd('copen')
      end
      done(nil, items)
    end)
  end)
  return true
end

return M
