-- Saved sessions for people: a session/list entry as one line of a picker (title, folder,
-- when, how many messages), a failed session/load in words, and the line that says a session's
-- instruction files. Pure functions: no pid, no buffers; Neovim 0.7+.

local M = {}

-- How many sessions :PidSessions lists at most (session/list pages hold 50).
M.MAX_LISTED = 500

-- days_from_civil is the number of days from 1970-01-01 to the given date of the proleptic
-- Gregorian calendar (H. Hinnant's algorithm), so that times are read as UTC whatever the
-- local time zone is.
local function days_from_civil(y, m, d)
  if m <= 2 then
    y = y - 1
  end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

-- parse_time reads an ISO 8601 time ("2026-12-01T17:16:43.5Z", or with +hh:mm) as seconds
-- since the Unix epoch, with the fraction; nil when it cannot.
function M.parse_time(s)
  if type(s) ~= 'string' then
    return nil
  end
  local y, mo, d, h, mi, sec, rest = s:match('^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt ](%d%d):(%d%d):(%d%d)(.*)$')
  if y == nil then
    return nil
  end
  local t = days_from_civil(tonumber(y), tonumber(mo), tonumber(d)) * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(sec)
  local frac = rest:match('^%.(%d+)')
  if frac ~= nil then
    t = t + tonumber('0.' .. frac)
    rest = rest:sub(#frac + 2)
  end
  if rest == 'Z' or rest == 'z' or rest == '' then
    return t
  end
  local sign, oh, om = rest:match('^([+-])(%d%d):?(%d%d)$')
  if sign == nil then
    return nil
  end
  local off = tonumber(oh) * 3600 + tonumber(om) * 60
  return sign == '+' and t - off or t + off
end

local function ago(n, unit, last)
  if n == 1 then
    return last
  end
  return string.format('%d %ss ago', n, unit)
end

-- relative_time says how long before now (seconds since the epoch, default os.time()) the
-- ISO time iso was: "just now", "5 minutes ago", "3 hours ago", "yesterday", "2 weeks ago",
-- "last year". A time in the future is "just now"; one that cannot be read is returned as is.
function M.relative_time(iso, now)
  local t = M.parse_time(iso)
  if t == nil then
    return tostring(iso)
  end
  local s = (now or os.time()) - t
  if s < 60 then
    return 'just now'
  end
  local min = math.floor(s / 60)
  if min < 60 then
    return ago(min, 'minute', '1 minute ago')
  end
  local h = math.floor(min / 60)
  if h < 24 then
    return ago(h, 'hour', '1 hour ago')
  end
  local d = math.floor(h / 24)
  if d < 7 then
    return ago(d, 'day', 'yesterday')
  end
  if d < 30 then
    return ago(math.floor(d / 7), 'week', 'last week')
  end
  if d < 365 then
    return ago(math.floor(d / 30), 'month', 'last month')
  end
  return ago(math.floor(d / 365), 'year', 'last year')
end

-- short_folder writes a folder under home as ~/...
function M.short_folder(folder, home)
  folder = tostring(folder or '')
  if type(home) == 'string' and home ~= '' and home ~= '/' then
    home = home:gsub('/$', '')
    if folder == home then
      return '~'
    end
    if folder:sub(1, #home + 1) == home .. '/' then
      return '~' .. folder:sub(#home + 1)
    end
  end
  return folder
end

-- inside reports whether folder is root or inside it (paths compared as written).
function M.inside(folder, root)
  if type(folder) ~= 'string' or type(root) ~= 'string' or root == '' then
    return false
  end
  root = root:gsub('/$', '')
  return folder == root or root == '' or folder:sub(1, #root + 1) == root .. '/'
end

-- title returns a session's title on one line ("(no text)" when empty): it is the person's own
-- first message.
function M.title(s)
  local t = tostring(type(s) == 'table' and s.title or ''):gsub('%s+', ' '):gsub('^ ', ''):gsub(' $', '')
  if t == '' then
    return '(no text)'
  end
  return t
end

-- format_item is one session of session/list as a line of vim.ui.select:
--   title | folder | 3 hours ago, 4 messages[, the current session][, another folder ...]
-- opts: now (seconds since the epoch), home (shown as ~), current (the current session's
-- id), workspace (pid's workspace folder: a session of another folder cannot be loaded).
function M.format_item(s, opts)
  opts = opts or {}
  local n = tonumber(s.messageCount) or 0
  local parts = {
    string.format('%s, %d message%s', M.relative_time(s.updatedAt, opts.now), n, n == 1 and '' or 's'),
  }
  if opts.current ~= nil and s.sessionId == opts.current then
    table.insert(parts, 'the current session')
  end
  if opts.workspace ~= nil and not M.inside(s.cwd, opts.workspace) then
    table.insert(parts, 'another folder: :cd there and :PidStop to resume it')
  end
  return string.format('%s | %s | %s', M.title(s), M.short_folder(s.cwd, opts.home), table.concat(parts, ', '))
end

-- load_error_text says in words why session/load failed (err: the JSON-RPC error {code, message})
-- and what to do. folder is the session's folder when known, workspace pid's.
function M.load_error_text(err, id, folder, workspace)
  local code = type(err) == 'table' and err.code or nil
  local said = type(err) == 'table' and tostring(err.message) or tostring(err)
  if code == -32803 and (said:find('another pid', 1, true) or said:find('in use', 1, true)) then
    return string.format('the session %s is open in another pid (another Neovim or editor, or a pid still running): close it there, or quit that editor, then :PidSessions again. pid says: %s', id, said)
  end
  if code == -32602 and said:find('outside the workspace folders', 1, true) then
    return string.format("the session %s worked in %s, not in pid's workspace folder %s: :cd there and :PidStop (pid starts there next time), then :PidSessions again. pid says: %s",
      id, folder or 'another folder', workspace or '(unknown)', said)
  end
  if code == -32602 and (said:find('unknown session', 1, true) or said:find('no saved session', 1, true)) then
    return string.format('pid has no saved session %s any more (deleted since the list was made?): pick another one. pid says: %s', id, said)
  end
  return string.format('pid could not load the session %s: %s', id, said)
end

-- size_text says a file's size the way the chat does: "740 B", "1.2 KB", "40 KB", "1.5 MB".
local function size_text(n)
  n = tonumber(n) or 0
  if n < 1000 then
    return string.format('%d B', n)
  elseif n < 9950 then
    return string.format('%.1f KB', n / 1000)
  elseif n < 999500 then
    return string.format('%d KB', math.floor(n / 1000 + 0.5))
  end
  return string.format('%.1f MB', n / 1e6)
end

-- instructions_line says which instruction files (AGENTS.md, CLAUDE.md) the model gets, from
-- the instructions of a session/new or session/load result ({path, bytes, truncated}, in the
-- order the model reads them): "[instructions] AGENTS.md (1.2 KB), sub/CLAUDE.md (40 KB, cut to
-- 32 KiB)"; nil when there is none. A path inside one of bases (folders: the first that holds
-- it wins) is said relative to it, any other with ~ for the home folder.
function M.instructions_line(list, bases)
  if type(list) ~= 'table' or #list == 0 then
    return nil
  end
  local parts = {}
  for _, f in ipairs(list) do
    if type(f) == 'table' and type(f.path) == 'string' then
      local shown = nil
      for _, b in ipairs(bases or {}) do
        if type(b) == 'string' and b ~= '' then
          local dir = b:gsub('/+$', '') .. '/'
          if dir ~= '/' and f.path:sub(1, #dir) == dir and #f.path > #dir then
            shown = f.path:sub(#dir + 1)
            break
          end
        end
      end
      shown = shown or vim.fn.fnamemodify(f.path, ':~')
      table.insert(parts, string.format('%s (%s%s)', shown, size_text(f.bytes), f.truncated == true and ', cut to 32 KiB' or ''))
    end
  end
  if #parts == 0 then
    return nil
  end
  return '[instructions] ' .. table.concat(parts, ', ')
end

return M
