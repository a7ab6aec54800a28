-- What the plugin tells the person outside the chat, in words: notifications (vim.notify,
-- titled "pid"), and pid's errors said so that a setup problem names what to change here
-- (setup{model=...}, the settings file), never protocol fields.

local M = {}

-- notify shows msg as a notification of pid's (level: vim.log.levels, default INFO).
function M.notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'pid' })
end

-- error_text says a pid error ({code, message, data?}, or anything else) in words. Setup
-- problems (error.data.reason) name what to change: setup{model=...}, :PidModel and the
-- settings file.
function M.error_text(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local said = tostring(err.message or vim.inspect(err))
  local d = type(err.data) == 'table' and err.data or {}
  local file = d.file or '~/.config/pid/settings.json'
  local example = 'require("pid").setup{model = {provider = "anthropic", id = "claude-sonnet-4-5"}}'
  if d.reason == 'noModel' then
    return string.format('pid has no model: pick one with :PidModel, or set it with %s, or "model" in %s. (pid says: %s)', example, file, said)
  elseif d.reason == 'apiKeyMissing' then
    local v = d.variable or 'the API key variable'
    return string.format('the model needs its API key in %s: export %s=... in the shell you start Neovim from (or setup{env = {%s = ...}}), then :PidStop so that pid starts again with it; or name the variable in apiKeyEnv of setup{model=...} or "model" in %s. (pid says: %s)',
      v, v, v, file, said)
  elseif d.reason == 'invalidModel' then
    local where = d.file and string.format('"model" in %s', d.file) or 'setup{model=...} (or the model you picked with :PidModel)'
    return string.format('the model setting is not usable%s: fix %s. (pid says: %s)', d.field and (' (its "' .. d.field .. '")') or '', where, said)
  elseif d.reason == 'untrustedSetting' then
    return string.format('the workspace folder %s sets "%s" in %s, but it is not trusted, so pid ignores it: trust the folder when pid asks, or set setup{model=...} or "model" in ~/.config/pid/settings.json. (pid says: %s)',
      tostring(d.folder or '?'), tostring(d.setting or 'model'), tostring(d.file or '.pid/settings.json'), said)
  end
  return said
end

-- caller returns a function(err, res) that calls opts.on_done, when given, with them (a
-- callback that fails is notified, not raised).
function M.caller(opts)
  return function(err, res)
    if opts.on_done then
      local ok, e = pcall(opts.on_done, err, res)
      if not ok then
        M.notify('on_done failed: ' .. tostring(e), vim.log.levels.ERROR)
      end
    end
  end
end

return M
