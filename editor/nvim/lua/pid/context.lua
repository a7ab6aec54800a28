-- What goes with a prompt besides its text: a buffer's selected lines (a resource block), its
-- diagnostics (a text block), files named with @path (resource links); and where the relative
-- paths of the current session start from.

local state = require('pid.state')

local S = state.S

local M = {}

-- session_dir returns the folder relative paths of a session's tools start from.
function M.session_dir()
  return (S.session_override or {}).cwd or (state.config.session or {}).cwd or S.workspace or vim.fn.getcwd()
end

-- resolve returns path absolute: as it is when it is, else under session_dir.
function M.resolve(path)
  if path:sub(1, 1) == '/' then
    return path
  end
  return M.session_dir() .. '/' .. path
end

-- buffer_uri returns the file:// URI of buffer buf's file (or an untitled: name) and how the
-- chat names it.
local function buffer_uri(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' then
    return 'untitled:' .. buf, '[No Name]'
  end
  local abs = vim.fn.fnamemodify(name, ':p')
  return vim.uri_from_fname(abs), vim.fn.fnamemodify(abs, ':~:.')
end

-- selection returns a resource block with lines first..last (1-based) of buffer buf, the
-- range in the URI's fragment, and how the chat names it.
function M.selection(buf, first, last)
  local lines = vim.api.nvim_buf_get_lines(buf, first - 1, last, false)
  local uri, shown = buffer_uri(buf)
  local frag = first == last and string.format('#L%d', first) or string.format('#L%d-L%d', first, last)
  local block = { type = 'resource', resource = { uri = uri .. frag, text = table.concat(lines, '\n') .. '\n' } }
  local ft = vim.bo[buf].filetype
  if ft ~= nil and ft ~= '' then
    block.resource.mimeType = 'text/x-' .. ft
  end
  local label = first == last and string.format('%s line %d', shown, first) or string.format('%s lines %d-%d', shown, first, last)
  return block, label
end

-- mentions returns a resource_link block for each @path in text that names a readable file
-- (relative to the session's folder, or absolute), once each, and how the chat names them.
function M.mentions(text)
  local blocks, labels, seen = {}, {}, {}
  for word in tostring(text):gmatch('@([^%s]+)') do
    local p = word:gsub('[,;:!?%)%]\'"]+$', ''):gsub('%.$', '')
    if p ~= '' and not seen[p] then
      seen[p] = true
      local abs = M.resolve(p)
      if vim.fn.filereadable(abs) == 1 then
        table.insert(blocks, { type = 'resource_link', uri = vim.uri_from_fname(vim.fn.fnamemodify(abs, ':p')), name = p })
        table.insert(labels, '@' .. p)
      end
    end
  end
  return blocks, labels
end

-- diagnostics returns a text block with buffer buf's diagnostics (vim.diagnostic), one a
-- line as path:line:col: severity: message, and how the chat names it.
function M.diagnostics(buf)
  local _, shown = buffer_uri(buf)
  local list = vim.diagnostic.get(buf)
  table.sort(list, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  local lines = { string.format('Diagnostics Neovim shows for %s (%d):', shown, #list) }
  for _, d in ipairs(list) do
    local sev = vim.diagnostic.severity[d.severity] or tostring(d.severity)
    table.insert(lines, string.format('%s:%d:%d: %s: %s%s', shown, d.lnum + 1, d.col + 1, tostring(sev):lower(),
      tostring(d.message):gsub('\n', ' '), d.source and (' [' .. tostring(d.source) .. ']') or ''))
  end
  return { type = 'text', text = table.concat(lines, '\n') }, string.format('diagnostics of %s (%d)', shown, #list)
end

return M
