-- inliner's language server in Neovim 0.8+ (vim.lsp.start); 0.7 needs inliner-0.7.lua.
vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    local marker = vim.fs.find({ "pyproject.toml", "setup.py", ".git" }, {
      upward = true,
      path = vim.fs.dirname(vim.api.nvim_buf_get_name(args.buf)),
    })[1]
    vim.lsp.start({
      name = "inliner",
      cmd = { "python", "-m", "inliner.lsp" },
      root_dir = marker and vim.fs.dirname(marker) or vim.fn.getcwd(),
    })
  end,
})
