-- No model anywhere: the error names setup{model=...}, :PidModel and the settings file.

return function(t)
  local pid = t.pid
  local say, check, wait_for, find, has_line = t.say, t.check, t.wait_for, t.find, t.has_line

  -- 19. A setup problem in words: no model anywhere; the error names setup{model=...} and
  -- the settings file.
  pid.setup({ cmd = { t.pid_bin }, env = { XDG_CONFIG_HOME = t.xdg .. '/config', XDG_STATE_HOME = t.xdg .. '/state' } })
  pid.new_session({})
  local failed = nil
  pid.ask('no model', { on_done = function(err) failed = err end })
  wait_for('the failed prompt', function() return failed ~= nil end)
  check(failed:find('pid has no model: pick one with :PidModel, or set it with require("pid").setup{model = {', 1, true)
    and failed:find(t.xdg .. '/config/pid/settings.json', 1, true), 'the error names the setting and the file: %s', failed)
  check(has_line('[error] ' .. failed), 'the chat shows it')
  say('ok - no model: the error names setup{model=...}, :PidModel and the settings file')
end
