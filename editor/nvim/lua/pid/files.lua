-- Files as the editor has them: pid's fs/read_text_file and fs/write_text_file requests
-- (declared in initialize), answered from loaded buffers, so the agent sees unsaved changes
-- and its edits land in the buffer (then written: buffer and file agree, no W11/W12 later);
-- files not loaded in a buffer are read and written on disk. And reload: after a tool ran,
-- loaded buffers whose file changed on disk (a bash command edited it) are reloaded without
-- the W11 question; one with unsaved changes is left alone and said in the chat.
-- Everything here runs on the main loop.

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

-- text returns a file's text as the editor has it: the loaded buffer's, else the disk's; nil
-- when neither exists.
function M.text(path)
  local b = M.buffer(path)
  if b ~= nil then
    return M.buffer_text(b)
  end
  return read_disk(path)
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

-- read answers fs/read_text_file {path, line?, limit?}: {content} or an error.
function M.read(params)
  if type(params) ~= 'table' or type(params.path) ~= 'string' or params.path == '' then
    return nil, { code = -32602, message = 'fs/read_text_file needs a path' }
  end
  local text = M.text(params.path)
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

-- write answers fs/write_text_file {path, content}: the loaded buffer gets the text and is
-- written; a file in no loaded buffer is written on disk (folders made). Returns true, or nil
-- and an error.
function M.write(params)
  if type(params) ~= 'table' or type(params.path) ~= 'string' or params.path == '' or type(params.content) ~= 'string' then
    return nil, { code = -32602, message = 'fs/write_text_file needs a path and a content' }
  end
  local b = M.buffer(params.path)
  if b ~= nil then
    local ok, err = pcall(function()
      local was = vim.bo[b].modifiable
      vim.bo[b].modifiable = true
      set_buffer_text(b, params.content)
      vim.bo[b].modifiable = was
      -- write! : the file may have changed since it was read; the buffer now holds what pid
      -- decided on, so no "changed since reading" question.
      vim.api.nvim_buf_call(b, function()
        vim.cmd('silent keepalt keepjumps write!')
      end)
    end)
    if not ok then
      return nil, { code = -32603, message = 'Neovim could not write the buffer of ' .. params.path .. ': ' .. tostring(err) }
    end
    return true
  end
  vim.fn.mkdir(vim.fn.fnamemodify(params.path, ':h'), 'p')
  local f, err = io.open(params.path, 'wb')
  if f == nil then
    return nil, { code = -32603, message = 'Neovim could not write ' .. params.path .. ': ' .. tostring(err) }
  end
  f:write(params.content)
  f:close()
  return true
end

-- reload checks every loaded file buffer against its file (checktime) without Neovim's W11
-- and W12 questions: a buffer without unsaved changes whose file changed is reloaded; one with
-- unsaved changes is left as it is and on_conflict(path) is called (the person decides: :e!
-- takes the disk's text, :w! keeps theirs). It returns the paths reloaded.
function M.reload(on_conflict)
  local reloaded = {}
  local group = vim.api.nvim_create_augroup('PidReload', { clear = true })
  vim.api.nvim_create_autocmd('FileChangedShell', {
    group = group,
    callback = function(ev)
      local reason = vim.v.fcs_reason
      local buf = ev.buf
      if reason == 'deleted' then
        vim.v.fcs_choice = ''
      elseif buf and vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].modified or reason == 'conflict' then
        vim.v.fcs_choice = ''
        if on_conflict then
          local f = ev.file
          vim.schedule(function()
            on_conflict(f)
          end)
        end
      else
        vim.v.fcs_choice = 'reload'
        table.insert(reloaded, ev.file)
      end
    end,
  })
  -- One buffer at a time: :checktime without an argument postpones the check while Neovim is
  -- busy (a wait, typeahead), :checktime N checks buffer N now.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and vim.api.nvim_buf_get_name(b) ~= '' then
      pcall(vim.cmd, 'silent! checktime ' .. b)
    end
  end
  pcall(vim.api.nvim_del_augroup_by_id, group)
  return reloaded
end

return M
