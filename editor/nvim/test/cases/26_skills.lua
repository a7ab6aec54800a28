-- Issue 39 in Neovim: /skills and /agents, the plugin's own commands, list what pid's
-- skills/list and agents/list say (those in use with their notes, those left out with why) as
-- a command's output, without a run; they complete with pid's commands, and each skill is one
-- of pid's commands (/NAME). It runs in the session the cases before it left.

return function(t)
  local pid = t.pid
  local say, check, eq, wait_for, run_lines = t.say, t.check, t.eq, t.wait_for, t.run_lines

  vim.fn.mkdir(t.xdg .. '/config/pid/skills/deploy', 'p')
  vim.fn.writefile({ '---', 'description: Deploys the app', 'allowed-tools: Bash', '---', 'Run make deploy.' }, t.xdg .. '/config/pid/skills/deploy/SKILL.md')
  vim.fn.mkdir(t.xdg .. '/config/pid/agents', 'p')
  vim.fn.writefile({ '---', 'description: Reviews code', 'tools: Read, Grep', '---', 'Review.' }, t.xdg .. '/config/pid/agents/reviewer.md')

  local done = nil
  pid.ask('/skills', { on_done = function(err, text) done = { err = err, text = text } end })
  wait_for('/skills to answer', function() return done ~= nil end)
  eq(done.err, nil, '/skills did not fail')
  local L = run_lines('/skills')
  eq(L[2], '[command] /skills:', 'the output header')
  eq(L[3], '    Skills in use:', 'the list')
  eq(L[4], '    - /deploy: Deploys the app (user: ' .. t.xdg .. '/config/pid/skills/deploy/SKILL.md)', 'the skill, its source and file')
  check(L[5]:find('note: "allowed-tools" is ignored', 1, true) ~= nil, "allowed-tools' note: %s", L[5])

  done = nil
  pid.ask('/agents', { on_done = function(err, text) done = { err = err, text = text } end })
  wait_for('/agents to answer', function() return done ~= nil end)
  L = run_lines('/agents')
  eq(L[2], '[command] /agents:', 'the output header')
  eq(L[4], '    - reviewer: Reviews code (user: ' .. t.xdg .. '/config/pid/agents/reviewer.md)', 'the agent')

  -- The completion: the plugin's own, and the skill as one of pid's commands.
  require('pid.slash').refresh(function() done = 'listed' end)
  wait_for('commands/list', function() return done == 'listed' end)
  eq(vim.fn.getcompletion('Pid /sk', 'cmdline'), { '/skills' }, '/skills completes')
  eq(vim.fn.getcompletion('Pid /de', 'cmdline'), { '/deploy' }, "the skill's command completes")
  say('ok - /skills and /agents list what pid found; the skill is a /NAME command')

  -- A task's worktree under its card: what was merged, what was not, where it is kept.
  local children = require('pid.children')
  eq(children.worktree_lines({ worktree = { path = '/s/w/c1', applied = {}, conflicts = { { path = '/w/f.txt', reason = 'same lines' } } } }),
    { 'worktree: 0 files merged into your files', 'not merged: /w/f.txt (same lines)', 'the worktree is kept at /s/w/c1' }, 'a conflict')
  eq(children.worktree_lines({ worktree = { path = '/s/w/c2', applied = { { path = '/w/f.txt', change = 'modified' } }, conflicts = {} } }),
    { 'worktree: 1 file merged into your files' }, 'a clean merge')
  eq(children.worktree_lines({ turns = 1 }), {}, 'no worktree')
  say('ok - a task card says what its worktree merged and what it kept')
end
