-- inliner's language server in Neovim 0.7 (Debian 12's `neovim`); 0.8+ can use inliner.lua.
-- One server per project root (the nearest directory holding a marker), attached to every
-- Python buffer under it.
local markers = { "pyproject.toml", "setup.py", ".git" }
local clients = {} -- root directory -> client id

local function root_dir(path)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return vim.fn.getcwd()
    end
    dir = parent
  end
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    local root = root_dir(vim.api.nvim_buf_get_name(args.buf))
    local id = clients[root]
    if not id or vim.lsp.client_is_stopped(id) then
      id = vim.lsp.start_client({
        name = "inliner",
        cmd = { "python", "-m", "inliner.lsp" },
        root_dir = root,
      })
      clients[root] = id
    end
    if id then
      vim.lsp.buf_attach_client(args.buf, id)
    end
  end,
})
