-- Files as the editor has them: pid's fs/read_text_file and fs/write_text_file requests
-- (declared in initialize), answered from loaded buffers, so the agent sees unsaved changes and
-- its edits land in the buffer (then written: buffer and file agree, no W11/W12 later); files
-- not loaded in a buffer are read and written on disk. A buffer whose file changed on disk
-- since Neovim read or wrote it is never answered as if it were the file: without unsaved
-- changes it is reloaded first, with unsaved changes the request fails and says why; a write
-- never overwrites a change on disk, never stops on Neovim's "changed since reading it"
-- question, and succeeds only when the buffer and the file hold what pid sent. And reload:
-- after a tool ran, loaded buffers whose file changed on disk (a bash command edited it) are
-- reloaded without the W11 question; one with unsaved changes is left alone and said in the
-- chat. Everything here runs on the main loop.

local M = {}

local uv = vim.uv or vim.loop

-- norm returns path absolute, with symbolic links resolved when it exists.
local function norm(path)
  local abs = vim.fn.fnamemodify(path, ':p')
  local real = uv.fs_realpath(abs)
  return real or abs
end
M.norm = norm

-- buffer returns the loaded buffer of a file (path absolute), or nil.
function M.buffer(path)
  local want = norm(path)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= '' and norm(name) == want then
        return b
      end
    end
  end
  return nil
end

-- has_eol reports whether writing buf ends the file with a newline.
local function has_eol(buf)
  return not vim.bo[buf].binary and (vim.bo[buf].eol or vim.bo[buf].fixeol)
end

-- buffer_text returns a loaded buffer's text as :write would write it.
function M.buffer_text(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, '\n')
  if has_eol(buf) and not (#lines == 1 and lines[1] == '') then
    text = text .. '\n'
  end
  return text
end

local function read_disk(path)
  local f = io.open(path, 'rb')
  if f == nil then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

-- Stamps. Neovim notices a change on disk by the file's time, and ignores a difference of a
-- second or less; a file changed within that second would be taken for the one in the buffer,
-- and a write would overwrite it (or stop on "WARNING: The file has been changed since reading
-- it!!!"). So the plugin keeps its own stamp of each buffer's file (size, inode, mtime and ctime
-- to the nanosecond), taken when Neovim read or wrote the file: a stamp that differs from the
-- file's now means the disk changed since. stamps[buf] is such a stamp, false (there was no
-- file), or {changed = true, told = stamp or false or nil}: the disk changed and the buffer was
-- not reloaded (it has unsaved changes), and the chat was told so for that state of the file
-- (told: its stamp then). A buffer loaded before the plugin has none until pid first asks for
-- its file (Neovim's own check decides then). The stamps are kept in state.lua.
local stamps = require('pid.state').stamps

-- stamp_of returns path's stamp now, false when there is no file.
local function stamp_of(path)
  local st = uv.fs_stat(path)
  if st == nil then
    return false
  end
  return { size = st.size, ino = st.ino, dev = st.dev, msec = st.mtime.sec, mnsec = st.mtime.nsec, csec = st.ctime.sec, cnsec = st.ctime.nsec }
end

-- same_stamp reports whether two stamps (or falses) describe the same file state.
local function same_stamp(a, b)
  if type(a) ~= 'table' or type(b) ~= 'table' then
    return a == b
  end
  return a.size == b.size and a.ino == b.ino and a.dev == b.dev and a.msec == b.msec and a.mnsec == b.mnsec
    and a.csec == b.csec and a.cnsec == b.cnsec
end

-- file_buffer reports whether buf is a loaded buffer of a file (not a scratch or special one).
local function file_buffer(buf)
  return vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' and vim.api.nvim_buf_get_name(buf) ~= ''
end

local stamp_group = vim.api.nvim_create_augroup('PidFileStamps', { clear = true })
-- Neovim has just read or written the whole file: buffer and file agree.
vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufWritePost', 'BufFilePost' }, {
  group = stamp_group,
  callback = function(ev)
    if file_buffer(ev.buf) then
      stamps[ev.buf] = stamp_of(vim.api.nvim_buf_get_name(ev.buf))
    else
      stamps[ev.buf] = nil
    end
  end,
})
vim.api.nvim_create_autocmd({ 'BufUnload', 'BufWipeout' }, {
  group = stamp_group,
  callback = function(ev)
    stamps[ev.buf] = nil
  end,
})

-- neovim_check runs Neovim's own check of buf's file (checktime) without its questions, and
-- returns 'changed', 'deleted', or nil when Neovim sees no change. Only for a buffer the plugin
-- has no stamp of.
local function neovim_check(buf)
  local found = nil
  local group = vim.api.nvim_create_augroup('PidCheck', { clear = true })
  vim.api.nvim_create_autocmd('FileChangedShell', {
    group = group,
    callback = function(ev)
      vim.v.fcs_choice = ''
      if ev.buf == buf then
        found = vim.v.fcs_reason == 'deleted' and 'deleted' or 'changed'
      end
    end,
  })
  pcall(vim.cmd, 'silent! checktime ' .. buf)
  pcall(vim.api.nvim_del_augroup_by_id, group)
  return found
end

-- disk_state returns how buf's file on disk compares with what the buffer was read from or
-- last wrote: 'same', 'changed' or 'deleted'; and, for a change with unsaved changes in the
-- buffer, whether the chat was told of it already.
local function disk_state(buf)
  local now = stamp_of(vim.api.nvim_buf_get_name(buf))
  local was = stamps[buf]
  if was == nil then
    local found = neovim_check(buf)
    if found == nil then
      stamps[buf] = now
      return 'same', false
    end
    stamps[buf] = { changed = true }
    return found, false
  end
  if type(was) == 'table' and was.changed then
    local told = was.told ~= nil and same_stamp(was.told, now)
    return now == false and 'deleted' or 'changed', told
  end
  if same_stamp(was, now) then
    return 'same', false
  end
  return now == false and 'deleted' or 'changed', false
end

-- mark_conflict records that the chat was told that buf's file changed on disk while the
-- buffer had unsaved changes (until Neovim reads or writes the file again).
local function mark_conflict(buf)
  stamps[buf] = { changed = true, told = stamp_of(vim.api.nvim_buf_get_name(buf)) }
end

-- reload_buffer reloads an unmodified buffer from its file (:edit! in the buffer, without the
-- W11 question; the reload can be undone with u), unless the buffer holds the file's bytes
-- already. It returns nil, or an error in words.
local function reload_buffer(buf)
  local path = vim.api.nvim_buf_get_name(buf)
  if M.buffer_text(buf) == read_disk(path) then
    -- Only the file's times or mode changed (pid's rewind sets the mode after writing through
    -- the buffer): nothing to read, and no reload to add to the undo history.
    stamps[buf] = stamp_of(path)
    return nil
  end
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd('silent keepalt keepjumps edit!')
  end)
  if not ok then
    return 'Neovim could not reload its buffer of ' .. vim.api.nvim_buf_get_name(buf) .. ': ' .. tostring(err)
  end
  stamps[buf] = stamp_of(vim.api.nvim_buf_get_name(buf))
  return nil
end

-- sync makes buf (a loaded buffer of path) hold what the file on disk holds when the two may
-- differ: a buffer without unsaved changes whose file changed on disk is reloaded. It returns
-- nil when the buffer is the file as the editor has it (its unsaved changes over what is on
-- disk), or an error for pid (the file changed on disk under unsaved changes, or was deleted)
-- after calling on_conflict(path, state) ('changed' or 'deleted') once per such change.
local function sync(buf, path, on_conflict)
  local state, told = disk_state(buf)
  if state == 'same' then
    return nil
  end
  if state == 'changed' and not vim.bo[buf].modified then
    local err = reload_buffer(buf)
    if err ~= nil then
      return { code = -32603, message = err }
    end
    return nil
  end
  if vim.bo[buf].modified and not told then
    mark_conflict(buf)
    if on_conflict then
      on_conflict(path, state)
    end
  end
  if state == 'deleted' then
    return { code = -32603, message = string.format('%s was deleted on disk; Neovim still has its old text in a buffer%s. Ask the person whether to keep the file (:w in Neovim) before using it again.',
      path, vim.bo[buf].modified and ' with unsaved changes' or '') }
  end
  return { code = -32603, message = string.format('%s changed on disk while its buffer in Neovim has unsaved changes: there are two versions and the person has not chosen one; nothing was read or written. Ask the person to choose (:e! in Neovim takes the version on disk, :w! keeps the buffer), then read it again.',
    path) }
end

-- slice returns lines line.. (1-based) of text, at most limit of them (fs/read_text_file's
-- line and limit).
local function slice(text, line, limit)
  if line == nil and limit == nil then
    return text
  end
  local lines = vim.split(text, '\n', { plain = true })
  local from = math.max(1, tonumber(line) or 1)
  local to = #lines
  if limit ~= nil then
    to = math.min(to, from + tonumber(limit) - 1)
  end
  return table.concat(vim.list_slice(lines, from, to), '\n')
end

-- text returns a file's text as the editor has it: the loaded buffer's, else the disk's; nil
-- when neither exists. A buffer without unsaved changes whose file changed on disk is reloaded
-- first (the approval float shows a diff against the file as it is).
function M.text(path)
  local b = M.buffer(path)
  if b ~= nil then
    if not vim.bo[b].modified and disk_state(b) == 'changed' then
      reload_buffer(b)
    end
    return M.buffer_text(b)
  end
  return read_disk(path)
end

-- read answers fs/read_text_file {path, line?, limit?}: {content} or an error. A loaded
-- buffer's text is answered once the buffer is known to be the file (see sync);
-- on_conflict(path, state), when given, is called when the file changed on disk (or was
-- deleted) under unsaved changes.
function M.read(params, on_conflict)
  if type(params) ~= 'table' or type(params.path) ~= 'string' or params.path == '' then
    return nil, { code = -32602, message = 'fs/read_text_file needs a path' }
  end
  local b = M.buffer(params.path)
  local text
  if b ~= nil then
    local err = sync(b, params.path, on_conflict)
    if err ~= nil then
      return nil, err
    end
    text = M.buffer_text(b)
  else
    text = read_disk(params.path)
  end
  if text == nil then
    return nil, { code = -32603, message = params.path .. ' does not exist (no buffer, no file)' }
  end
  return { content = slice(text, params.line, params.limit) }
end

-- set_buffer_text makes buf hold text, changing only the lines that differ (the cursor, marks
-- and undo history of the rest stay).
local function set_buffer_text(buf, text)
  local eol = text:sub(-1) == '\n'
  local body = eol and text:sub(1, -2) or text
  local new = vim.split(body, '\n', { plain = true })
  local old = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local diff_fn = (vim.text and vim.text.diff) or vim.diff
  local ok, hunks = pcall(diff_fn, table.concat(old, '\n') .. '\n', table.concat(new, '\n') .. '\n', { result_type = 'indices' })
  if not ok or type(hunks) ~= 'table' then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, new)
  else
    -- Bottom up, so that earlier hunks' line numbers stay right.
    for i = #hunks, 1, -1 do
      local sa, ca, sb, cb = (table.unpack or unpack)(hunks[i])
      local first = ca == 0 and sa or sa - 1
      vim.api.nvim_buf_set_lines(buf, first, first + ca, false, vim.list_slice(new, sb, sb + cb - 1))
    end
  end
  vim.bo[buf].fixeol = eol
  vim.bo[buf].eol = eol
end

-- wrote_as_sent reports whether buf, just written, and its file hold text: the buffer always;
-- the file's bytes when Neovim writes the buffer's text as it is (unix line ends, UTF-8, no
-- BOM).
local function wrote_as_sent(buf, path, text)
  if vim.bo[buf].modified or M.buffer_text(buf) ~= text then
    return false
  end
  local fenc = vim.bo[buf].fileencoding
  if vim.bo[buf].fileformat ~= 'unix' or (fenc ~= '' and fenc ~= 'utf-8') or vim.bo[buf].bomb then
    return true
  end
  return read_disk(path) == text
end

-- write answers fs/write_text_file {path, content}: the loaded buffer gets the text and is
-- written; a file in no loaded buffer is written on disk (folders made). Returns true, or nil
-- and an error. A buffer whose file changed on disk since Neovim read it is not written (the
-- change on disk stays; an unmodified buffer is reloaded to show it; on_conflict(path, state)
-- is called for a buffer with unsaved changes); true means the buffer and the file hold content.
function M.write(params, on_conflict)
  if type(params) ~= 'table' or type(params.path) ~= 'string' or params.path == '' or type(params.content) ~= 'string' then
    return nil, { code = -32602, message = 'fs/write_text_file needs a path and a content' }
  end
  local b = M.buffer(params.path)
  if b ~= nil then
    local state = disk_state(b)
    -- A deleted file whose buffer has nothing unsaved loses nothing when it is written again.
    if state ~= 'same' and not (state == 'deleted' and not vim.bo[b].modified) then
      local serr = sync(b, params.path, on_conflict)
      if serr ~= nil then
        return nil, serr
      end
      return nil, { code = -32603, message = string.format('%s changed on disk since it was read; nothing was written, the file was left as it is (Neovim reloaded its buffer): read it again before changing it.', params.path) }
    end
    local ok, err = pcall(function()
      local was = vim.bo[b].modifiable
      vim.bo[b].modifiable = true
      set_buffer_text(b, params.content)
      vim.bo[b].modifiable = was
      -- The file is as Neovim last read or wrote it (its stamp says so), so :write! cannot
      -- meet "changed since reading it"; ! writes a readonly buffer as pid was allowed to.
      vim.api.nvim_buf_call(b, function()
        vim.cmd('silent keepalt keepjumps write!')
      end)
    end)
    if not ok then
      return nil, { code = -32603, message = 'Neovim could not write the buffer of ' .. params.path .. ': ' .. tostring(err) }
    end
    if not wrote_as_sent(b, params.path, params.content) then
      local what = vim.bo[b].modified and 'Neovim did not write its buffer of ' .. params.path .. ' (it still has unsaved changes)'
        or params.path .. ' was written, but it does not hold the text sent (an autocommand of Neovim, e.g. a formatter on save, changed it)'
      return nil, { code = -32603, message = what .. ': read it again before changing it.' }
    end
    return true
  end
  vim.fn.mkdir(vim.fn.fnamemodify(params.path, ':h'), 'p')
  local f, err = io.open(params.path, 'wb')
  if f == nil then
    return nil, { code = -32603, message = 'Neovim could not write ' .. params.path .. ': ' .. tostring(err) }
  end
  local wok, werr = f:write(params.content)
  local cok, cerr = f:close()
  if not wok or not cok then
    return nil, { code = -32603, message = 'Neovim could not write ' .. params.path .. ': ' .. tostring(werr or cerr) .. ' (the file may be left cut short)' }
  end
  return true
end

-- reload checks every loaded file buffer against its file, without Neovim's W11 and W12
-- questions: a buffer without unsaved changes whose file changed is reloaded; one with unsaved
-- changes is left as it is and on_conflict(path, 'changed') is called, once per change (the
-- person decides: :e! takes the disk's text, :w! keeps theirs); a deleted file's buffer is
-- left as it is. It returns the paths reloaded.
function M.reload(on_conflict)
  local reloaded = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if file_buffer(b) then
      local state, told = disk_state(b)
      local path = vim.api.nvim_buf_get_name(b)
      if state == 'changed' and not vim.bo[b].modified then
        if reload_buffer(b) == nil then
          table.insert(reloaded, path)
        end
      elseif state == 'changed' and not told then
        mark_conflict(b)
        if on_conflict then
          vim.schedule(function()
            on_conflict(path, state)
          end)
        end
      end
    end
  end
  return reloaded
end

return M
