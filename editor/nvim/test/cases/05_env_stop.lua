-- setup{env} reaches pid; :PidStop ends it with exit code 0.

return function(t)
  local pid = t.pid
  local say, check, eq, wait_for = t.say, t.check, t.eq, t.wait_for

  -- 6. The daemon used the environment given in setup{env}, and :PidStop ends it cleanly.
  check(vim.fn.filereadable(t.xdg .. '/state/pid/audit.log') == 1, 'pid wrote no audit log under setup{env}.XDG_STATE_HOME (%s)', t.xdg)
  vim.cmd('PidStop')
  wait_for('pid to exit', function() return pid.status().exit ~= nil end)
  eq(pid.status().exit.code, 0, 'pid exit code after :PidStop')
  eq(pid.status().started, false, 'started after :PidStop')
  say('ok - setup{env} reached pid; :PidStop: pid exited with code 0')
end
