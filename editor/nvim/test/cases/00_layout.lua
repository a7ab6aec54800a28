-- The plugin's layout as README.md describes it, read from its source: each module says at its
-- top what it does and stays under 500 lines, and the state is in state.lua alone, each field
-- documented: no other module keeps a variable or a table of its own that its functions
-- change. It starts no pid.

return function(t)
  local say, check = t.say, t.check

  local dir = vim.fn.fnamemodify(vim.api.nvim_get_runtime_file('lua/pid/init.lua', false)[1], ':h')
  local paths = vim.fn.glob(dir .. '/*.lua', false, true)
  table.sort(paths)
  check(#paths >= 10, 'the modules of %s: %s', dir, vim.inspect(paths))

  -- assigned_in reports whether line (inside a function: indented) changes the variable
  -- name: assigns it, a field or an element of it, or inserts into or removes from it.
  local function assigned_in(line, name, whole)
    if line:match('^%s+table%.insert%(' .. name .. '[,%)]') or line:match('^%s+table%.remove%(' .. name .. '[,%)]') then
      return true
    end
    local lhs = line:match('^%s+([^=(]-)%s*=[^=]')
    if lhs == nil then
      return false
    end
    for target in (lhs .. ','):gmatch('%s*([^,]-)%s*,') do
      if (whole and target == name) or target:match('^' .. name .. '[%.%[]') then
        return true
      end
    end
    return false
  end

  local kept = {} -- module-level state outside state.lua: "file: name (line n)"
  for _, path in ipairs(paths) do
    local name = vim.fn.fnamemodify(path, ':t')
    local lines = vim.fn.readfile(path)
    check(#lines <= 500, '%s has %d lines (at most 500: split it by job)', name, #lines)
    check(lines[1] ~= nil and lines[1]:match('^%-%- %S'), '%s does not say at its top what it does: %q', name, tostring(lines[1]))
    if name ~= 'state.lua' then
      -- The module's variables (top-level locals), but its own table M and aliases of
      -- state.lua's tables (which is where state belongs).
      local aliases = { state = true }
      local vars = {}
      for n, l in ipairs(lines) do
        local names, init = l:match('^local ([%w_, ]+)%s*=%s*(.*)$')
        if names == nil then
          names = l:match('^local ([%w_, ]+)%s*$')
          init = ''
        end
        if names ~= nil and not l:match('^local function') then
          local alias = init:match("^require%('pid%.state'%)") or aliases[init:match('^([%w_]+)%.') or '']
          for v in names:gmatch('[%w_]+') do
            if alias then
              aliases[v] = true
            elseif v ~= 'M' then
              vars[v] = n
            end
          end
        end
      end
      for v, at in pairs(vars) do
        for _, l in ipairs(lines) do
          if assigned_in(l, v, true) then
            table.insert(kept, string.format('%s: %s (line %d)', name, v, at))
            break
          end
        end
      end
    end
  end
  table.sort(kept)
  check(#kept == 0, 'state kept outside state.lua (a module-level variable its functions change): %s', table.concat(kept, '; '))

  -- Each field of state.lua's tables is documented: a comment on its line or just above it.
  local lines = vim.fn.readfile(dir .. '/state.lua')
  local undocumented, fields = {}, 0
  local inside = false
  for n, l in ipairs(lines) do
    -- The tables of state.lua: M.NAME = {, M.S = setmetatable({ (the process's), and CONV
    -- (a conversation's fields of S).
    if (l:match('^M%.[%w_]+ = {$') or l:match('^M%.[%w_]+ = setmetatable%({$') or l == 'local CONV = {') and not l:match('^M%.defaults') then
      inside = true
    elseif l:match('^}') then
      inside = false
    elseif inside then
      local field = l:match('^  ([%w_]+) = ')
      if field ~= nil then
        fields = fields + 1
        if not (l:find('--', 1, true) or (lines[n - 1] or ''):match('^%s*%-%-')) then
          table.insert(undocumented, field)
        end
      end
    end
  end
  check(fields >= 30, 'state.lua holds %d fields: the parser missed them', fields)
  check(#undocumented == 0, 'fields of state.lua without a comment: %s', table.concat(undocumented, ', '))
  say('ok - layout: %d modules under 500 lines, each saying what it does; the state (%d fields, each documented) in state.lua alone', #paths, fields)
end
