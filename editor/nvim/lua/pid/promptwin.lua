-- The prompt window under the chat (pid://prompt, a 'prompt' buffer): Enter sends the line, the
-- window keeps only the new empty prompt line (what was sent shows in the chat).

local view = require('pid.view')

-- The active conversation's prompt buffer's state (its fields are documented in state.lua).
local conversations = require('pid.state')
local state = conversations.chat

local M = {}

local function valid(buf)
  return buf ~= nil and vim.api.nvim_buf_is_valid(buf)
end

-- prompt_bufnr returns the prompt buffer (a 'prompt' buffer: Enter in insert mode sends the
-- line to on_submit(text)).
function M.prompt_bufnr(on_submit)
  if valid(state.prompt_buf) then
    return state.prompt_buf
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'prompt'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, view.prompt_buf_name())
  vim.fn.prompt_setprompt(buf, 'pid> ')
  -- What is typed here goes to this buffer's conversation, whichever is active.
  on_submit = conversations.bind(on_submit)
  vim.fn.prompt_setcallback(buf, function(text)
    -- Keep only the new, empty prompt line: what was sent shows in the chat.
    vim.schedule(function()
      if valid(buf) then
        local n = vim.api.nvim_buf_line_count(buf)
        if n > 1 then
          vim.api.nvim_buf_set_lines(buf, 0, n - 1, false, {})
        end
        vim.bo[buf].modified = false -- nothing here is ever saved: no [+]
      end
    end)
    if text ~= nil and not text:match('^%s*$') then
      on_submit(text)
    end
  end)
  state.prompt_buf = buf
  return buf
end

-- open_prompt shows the chat and, under it, the prompt window, and puts the cursor there in
-- insert mode.
function M.open_prompt(open_cmd, on_submit)
  local chat = view.show(open_cmd)
  local pbuf = M.prompt_bufnr(on_submit)
  local pwin = nil
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == pbuf then
      pwin = win
    end
  end
  if pwin == nil then
    if chat then
      vim.api.nvim_set_current_win(chat)
    end
    vim.cmd('belowright 3split')
    pwin = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(pwin, pbuf)
    vim.wo[pwin].number = false
    vim.wo[pwin].relativenumber = false
    vim.wo[pwin].winfixheight = true
    M.keep(pwin)
  end
  vim.api.nvim_set_current_win(pwin)
  vim.bo[pbuf].modified = false
  vim.cmd('startinsert!')
  return pwin
end

-- keep keeps the prompt window for its prompt: a buffer opened there (:e, a jump) goes to the
-- window the person came from (or one split above) and the prompt comes back, with a word why.
-- The same on every version: 0.10's 'winfixbuf' would refuse :e there with E1513 instead, an
-- error where the person only wanted to open a file.
function M.keep(pwin)
  vim.w[pwin].pid_prompt = vim.api.nvim_win_get_buf(pwin)
  local group = vim.api.nvim_create_augroup('pid_prompt_win_' .. pwin, { clear = true })
  vim.api.nvim_create_autocmd('BufWinEnter', {
    group = group,
    callback = function(ev)
      if not vim.api.nvim_win_is_valid(pwin) then
        pcall(vim.api.nvim_del_augroup_by_id, group)
        return
      end
      if vim.api.nvim_win_get_buf(pwin) ~= ev.buf then
        return -- another window
      end
      if conversations.of_buf(ev.buf) ~= nil then
        vim.w[pwin].pid_prompt = ev.buf -- a conversation's prompt (:PidNew! puts the next one's here)
        return
      end
      local prompt_buf = vim.w[pwin].pid_prompt
      if prompt_buf == nil or not vim.api.nvim_buf_is_valid(prompt_buf) then
        return
      end
      vim.schedule(function()
        if not vim.api.nvim_win_is_valid(pwin) or vim.api.nvim_win_get_buf(pwin) ~= ev.buf then
          return
        end
        local back = vim.fn.win_getid(vim.fn.winnr('#'))
        if back == 0 or back == pwin or conversations.of_buf(vim.api.nvim_win_get_buf(back)) ~= nil then
          vim.api.nvim_set_current_win(pwin)
          vim.cmd('aboveleft split')
          back = vim.api.nvim_get_current_win()
        end
        vim.api.nvim_win_set_buf(back, ev.buf)
        vim.api.nvim_win_set_buf(pwin, prompt_buf)
        vim.api.nvim_set_current_win(back)
        vim.notify('pid: the prompt window keeps its prompt: ' .. vim.fn.bufname(ev.buf) .. ' opened in another window', vim.log.levels.INFO)
      end)
    end,
  })
end

return M
