-- :PidJobs: the session's background jobs (jobs/list) in a split, one a line; K on a line kills
-- that job (jobs/kill), <CR> shows its output (jobs/output) in a split under the list. The
-- list is drawn again when pid says a job of that session started or ended (jobUpdate).

local state = require('pid.state')
local lifecycle = require('pid.lifecycle')
local words = require('pid.words')

local S = state.S
local notify, error_text = words.notify, words.error_text

local M = {}

local J = state.jobs

-- line_of says one job on a line: id, how it stands, command.
function M.line_of(j)
  local st
  if j.running then
    st = 'running'
  elseif type(j.exitCode) == 'number' and j.exitCode > 128 then
    st = 'killed (signal ' .. (j.exitCode - 128) .. ')'
  else
    st = 'exited ' .. tostring(j.exitCode)
  end
  return string.format('%s  %-18s  %s', tostring(j.jobId), st, tostring(j.command):gsub('\n', ' '))
end

-- scratch returns a scratch buffer named name, made once.
local function scratch(buf, name)
  if buf ~= nil and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  return buf
end

local function set_lines(buf, lines)
  vim.api.nvim_buf_set_option(buf, 'modifiable', true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
end

-- show_in shows buf in a window: the one showing it already, else a new split at the bottom.
local function show_in(buf)
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  end
  return win
end

-- draw writes the jobs into the list's buffer.
local function draw(sid, jobs)
  J.sid, J.shown = sid, jobs
  local lines = {}
  for _, j in ipairs(jobs) do
    table.insert(lines, M.line_of(j))
  end
  if #lines == 0 then
    lines = { 'No background jobs in this session.' }
  end
  set_lines(J.list_buf, lines)
end

-- refresh asks pid for the session's jobs and draws them.
function M.refresh(on_done)
  local client, sid = S.client, S.session_id
  if client == nil or sid == nil or J.list_buf == nil then
    return
  end
  client.request('jobs/list', { sessionId = sid }, function(e, res)
    vim.schedule(function()
      if e ~= nil then
        notify(error_text(e), vim.log.levels.ERROR)
      elseif vim.api.nvim_buf_is_valid(J.list_buf) then
        draw(sid, type(res) == 'table' and type(res.jobs) == 'table' and res.jobs or {})
      end
      if on_done then
        on_done(e)
      end
    end)
  end)
end

-- at_cursor returns the job on the cursor's line of the list.
local function at_cursor()
  return J.shown[vim.api.nvim_win_get_cursor(0)[1]]
end

-- kill stops the job on the cursor's line (jobs/kill), then draws the list again.
function M.kill()
  local j, client = at_cursor(), S.client
  if j == nil or client == nil then
    return
  end
  client.request('jobs/kill', { sessionId = J.sid, jobId = j.jobId }, function(e)
    vim.schedule(function()
      if e ~= nil then
        notify(error_text(e), vim.log.levels.ERROR)
      end
      M.refresh()
    end)
  end)
end

-- output shows what the job on the cursor's line printed (jobs/output) under the list.
function M.output()
  local j, client = at_cursor(), S.client
  if j == nil or client == nil then
    return
  end
  client.request('jobs/output', { sessionId = J.sid, jobId = j.jobId }, function(e, res)
    vim.schedule(function()
      if e ~= nil then
        notify(error_text(e), vim.log.levels.ERROR)
        return
      end
      J.out_buf = scratch(J.out_buf, 'pid://job-output')
      local lines = vim.split(type(res) == 'table' and tostring(res.output or '') or '', '\n', { plain = true })
      table.insert(lines, 1, M.line_of(type(res) == 'table' and res.job or j))
      table.insert(lines, 2, '')
      set_lines(J.out_buf, lines)
      local back = vim.api.nvim_get_current_win()
      show_in(J.out_buf)
      vim.api.nvim_set_current_win(back)
    end)
  end)
end

-- open is :PidJobs: the list in a split, with its keys.
function M.open()
  if S.session_id == nil then
    notify('no session yet: its jobs are listed once a prompt has run', vim.log.levels.WARN)
    return false
  end
  lifecycle.ensure(function(err)
    if err ~= nil then
      notify(err, vim.log.levels.ERROR)
      return
    end
    J.list_buf = scratch(J.list_buf, 'pid://jobs')
    local opts = { noremap = true, silent = true }
    vim.api.nvim_buf_set_keymap(J.list_buf, 'n', 'K', '', vim.tbl_extend('force', opts, { desc = 'pid: kill this job', callback = M.kill }))
    vim.api.nvim_buf_set_keymap(J.list_buf, 'n', '<CR>', '', vim.tbl_extend('force', opts, { desc = "pid: this job's output", callback = M.output }))
    vim.api.nvim_buf_set_keymap(J.list_buf, 'n', 'R', '', vim.tbl_extend('force', opts, { desc = 'pid: list the jobs again', callback = function() M.refresh() end }))
    vim.api.nvim_set_current_win(show_in(J.list_buf))
    M.refresh()
  end)
  return true
end

-- on_update is jobUpdate: the shown list is drawn again when it is that session's.
function M.on_update(p)
  if type(p) == 'table' and p.sessionId == J.sid and J.list_buf ~= nil and vim.api.nvim_buf_is_valid(J.list_buf) then
    M.refresh()
  end
end

-- For tests: the list's and the output's buffers.
function M.buffers()
  return J.list_buf, J.out_buf
end

return M
