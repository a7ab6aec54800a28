-- What a tool call would do, for its approval's float (approval.lua): the diff of a write or
-- an edit against the file as the editor has it (unsaved changes included; the edit's
-- replacements applied here as pid would), the whole command of a bash call, every argument
-- of other tools.

local M = {}

-- short_json returns v as JSON on one line, cut to limit characters.
function M.short_json(v, limit)
  local ok, s = pcall(vim.json.encode, v)
  if not ok then
    s = vim.inspect(v, { newline = ' ', indent = '' })
  end
  if #s > limit and vim.fn.strchars(s) > limit then
    s = vim.fn.strcharpart(s, 0, limit) .. '...'
  end
  return s
end

local short_json = M.short_json

local diff_fn = (vim.text and vim.text.diff) or vim.diff

-- unified returns the unified diff of old and new text as lines, with --- and +++ headers
-- naming path; {} when they are equal.
function M.unified(path, old, new)
  local ok, d = pcall(diff_fn, old, new, { result_type = 'unified', ctxlen = 3 })
  if not ok or type(d) ~= 'string' or d == '' then
    return {}
  end
  local out = { '--- ' .. path, '+++ ' .. path .. ' (proposed)' }
  vim.list_extend(out, vim.split(d:gsub('\n$', ''), '\n', { plain = true }))
  return out
end

-- apply_edits applies the edit tool's replacements to text as pid would (each oldText once,
-- plainly); nil and why when one does not match exactly once.
function M.apply_edits(text, edits)
  for i, e in ipairs(edits) do
    if type(e) ~= 'table' or type(e.oldText) ~= 'string' or type(e.newText) ~= 'string' or e.oldText == '' then
      return nil, string.format('edit %d is malformed', i)
    end
    local s, f = text:find(e.oldText, 1, true)
    if s == nil then
      return nil, string.format('edit %d: its old text is not in the file as the editor has it', i)
    end
    if text:find(e.oldText, f + 1, true) then
      return nil, string.format('edit %d: its old text occurs more than once', i)
    end
    text = text:sub(1, s - 1) .. e.newText .. text:sub(f + 1)
  end
  return text
end

-- proposal returns the lines that show what a call would do and a filetype for them:
-- read(path) -> text or nil gives a file's current text (the buffer's when loaded);
-- resolve(path) -> absolute path.
function M.proposal(name, args, read, resolve)
  args = type(args) == 'table' and args or {}
  if (name == 'write' or name == 'edit') and type(args.path) == 'string' then
    local abs = resolve(args.path)
    local old = read(abs)
    local new, why
    if name == 'write' then
      new = type(args.content) == 'string' and args.content or ''
    else
      new, why = M.apply_edits(old or '', type(args.edits) == 'table' and args.edits or {})
    end
    if new ~= nil then
      local d = M.unified(args.path, old or '', new)
      if old == nil then
        table.insert(d, 1, '(a new file)')
      end
      if #d == 0 then
        d = { '(no change to ' .. args.path .. ')' }
      end
      return d, 'diff'
    end
    local out = { string.format('%s: %s; the replacements asked for:', args.path, why) }
    for _, e in ipairs(args.edits or {}) do
      if type(e) == 'table' then
        for _, l in ipairs(vim.split(tostring(e.oldText), '\n', { plain = true })) do
          table.insert(out, '-' .. l)
        end
        for _, l in ipairs(vim.split(tostring(e.newText), '\n', { plain = true })) do
          table.insert(out, '+' .. l)
        end
      end
    end
    return out, 'diff'
  end
  if name == 'bash' and type(args.command) == 'string' then
    local out = { '$ ' .. vim.split(args.command, '\n', { plain = true })[1] }
    local rest = vim.split(args.command, '\n', { plain = true })
    for i = 2, #rest do
      table.insert(out, '  ' .. rest[i])
    end
    if args.timeout ~= nil then
      table.insert(out, string.format('(timeout %ss)', tostring(args.timeout)))
    end
    return out, nil
  end
  local out = {}
  local keys = vim.tbl_keys(args)
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = args[k]
    local s = type(v) == 'string' and v or short_json(v, 100000)
    local ls = vim.split(s, '\n', { plain = true })
    table.insert(out, tostring(k) .. ': ' .. ls[1])
    for i = 2, #ls do
      table.insert(out, '  ' .. ls[i])
    end
  end
  if #out == 0 then
    out = { '(no arguments)' }
  end
  return out, nil
end

return M
