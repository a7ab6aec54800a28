-- pid.nvim's commands, available before setup() (with the default options: `pid` on PATH).
-- require("pid").setup{...} configures the plugin; it creates the same commands.
if vim.g.loaded_pid then
  return
end
vim.g.loaded_pid = true

if vim.fn.has('nvim-0.7') ~= 1 then
  vim.api.nvim_echo({ { 'pid.nvim needs Neovim 0.7 or later', 'WarningMsg' } }, true, {})
  return
end

require('pid').create_commands()
