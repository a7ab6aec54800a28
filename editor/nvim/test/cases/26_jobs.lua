-- Issue 36 in Neovim: :PidJobs lists the session's background jobs in a split (jobs/list),
-- <CR> shows a job's output under it (jobs/output), K kills it (jobs/kill) and the list shows
-- it ended (drawn again at jobUpdate). The job runs in pid's real sandbox. It runs in the folder
-- 07_saved_sessions.lua moved to.

return function(t)
  local pid = t.pid
  local say, check, eq, wait_for, text, wait_run = t.say, t.check, t.eq, t.wait_for, t.text, t.wait_run
  local R = t.runs()
  local call = function(id, name, args) return { type = 'toolCall', id = id, name = name, arguments = args } end
  local jobs = require('pid.jobs')
  local state = require('pid.state')
  state.focus()

  eq(jobs.line_of({ jobId = 'job-2', running = false, exitCode = 3, command = 'make\nall' }), 'job-2  exited 3            make all', 'an ended job\'s line')
  eq(jobs.line_of({ jobId = 'job-3', running = false, exitCode = 143, command = 'npm run dev' }), 'job-3  killed (signal 15)  npm run dev', 'a killed job\'s line')

  pid.new_session({ mode = 'auto', permissions = { default = 'allow' }, model = { provider = 'script', turns = {
    { content = { call('j1', 'bash', { command = 'echo ready-from-the-job; exec sleep 1000', background = true, waitFor = '^ready', waitMs = 60000 }) } },
    { content = text('the job runs') },
  } } })
  pid.ask('start a job')
  wait_run(R + 1)

  local before = #vim.api.nvim_list_wins()
  vim.cmd('PidJobs')
  local function list_lines()
    local b = jobs.buffers()
    return b and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}
  end
  wait_for('the jobs list', function() return (list_lines()[1] or ''):find('^job%-1  running') ~= nil end)
  eq(list_lines(), { 'job-1  running             echo ready-from-the-job; exec sleep 1000' }, ':PidJobs\'s list')
  eq(#vim.api.nvim_list_wins(), before + 1, 'the list in a split')
  local list_buf = jobs.buffers()
  eq(vim.api.nvim_get_current_buf(), list_buf, 'the cursor in the list')

  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  local function out_lines()
    local _, b = jobs.buffers()
    return b and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}
  end
  wait_for("the job's output", function() return vim.tbl_contains(out_lines(), 'ready-from-the-job') end)
  check(out_lines()[1]:find('^job%-1  running') ~= nil, 'the output names the job: %s', vim.inspect(out_lines()))
  eq(vim.api.nvim_get_current_buf(), list_buf, 'the cursor stays in the list')

  vim.api.nvim_feedkeys('K', 'x', false)
  wait_for('the killed job', function() return (list_lines()[1] or ''):find('^job%-1  killed %(signal 15%)') ~= nil end)
  say('ok - :PidJobs lists the job, <CR> shows its output, K kills it')

  -- Leave the layout as it was for what comes after.
  for _, b in ipairs({ jobs.buffers() }) do
    local w = vim.fn.bufwinid(b)
    if w ~= -1 then
      vim.api.nvim_win_close(w, true)
    end
  end
end
