-- Drives headless Neovim through a plan of user steps and records what the editor saw.
--
-- Run by tests/surfaces/test_editor_neovim.py after a user configuration
-- (editors/neovim/inliner-0.7.lua, or inliner.lua on 0.8+) is loaded: `nvim --headless -u NONE ... -c 'luafile <config>'
-- -c 'luafile <this file>'`. The plan (JSON, path in $INLINER_NVIM_PLAN) lists steps:
--   {"do": "open", "file": path}                  :edit the file (its FileType autocmd attaches the server)
--   {"do": "diagnostics"}                         wait for the diagnostics of the buffer's current version
--                                                 (recorded with the text they are about)
--   {"do": "type", "line": n, "keys": keys}       cursor on line n (1-based), then type keys as a user
--   {"do": "action", "line": n, "title": t|nil}   vim.lsp.buf.code_action() there, choose title t in the menu
--   {"do": "write"}                               :write
-- Every wait is bounded by the plan's timeout_ms: a step that times out is recorded as the
-- error and ends the run. The record (JSON) goes to the plan's "result" path; Neovim then
-- exits with status 0, or 1 after an error (the test's last -c command exits with 2 if this
-- file itself fails).

local plan = vim.json.decode(table.concat(vim.fn.readfile(os.getenv("INLINER_NVIM_PLAN")), "\n"))
local timeout = plan.timeout_ms
local records = {}

-- What the server published, per buffer: the versions seen (the handler also updates vim.diagnostic).
local published = {}
local publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  publish(err, result, ctx, config)
  local bufnr = vim.uri_to_bufnr(result.uri)
  published[bufnr] = published[bufnr] or {}
  published[bufnr][result.version or -1] = true
end

-- Messages the editor would show (e.g. "No code actions available").
local notices = {}
vim.notify = function(message)
  table.insert(notices, message)
end

local function wait_for(what, condition)
  if not vim.wait(timeout, condition, 20) then
    error(string.format("timed out after %d ms waiting for %s", timeout, what), 0)
  end
end

local function buffer_text()
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, true), "\n") .. "\n"
end

local function version()
  return vim.lsp.util.buf_versions[vim.api.nvim_get_current_buf()]
end

-- The clients attached to a buffer (vim.lsp.get_clients from 0.10; buf_get_clients before).
local function clients_of(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
end

local function all_clients()
  return vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
end

local step = {}

function step.open(s)
  vim.cmd("edit " .. vim.fn.fnameescape(s.file))
  local bufnr = vim.api.nvim_get_current_buf()
  wait_for("the language server to attach", function()
    return #clients_of(bufnr) > 0 and version() ~= nil
  end)
  local clients = {}
  for _, client in ipairs(clients_of(bufnr)) do
    table.insert(clients, {
      id = client.id,
      name = client.name,
      root_dir = client.config.root_dir,
      offset_encoding = client.offset_encoding,
    })
  end
  return { filetype = vim.bo.filetype, clients = clients }
end

function step.diagnostics()
  local bufnr = vim.api.nvim_get_current_buf()
  local current = version()
  wait_for("diagnostics of version " .. current, function()
    return published[bufnr] ~= nil and published[bufnr][current] == true
  end)
  local seen = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(seen, {
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      severity = vim.diagnostic.severity[d.severity],
      code = d.code,
      source = d.source,
      message = d.message,
    })
  end
  table.sort(seen, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  return { version = current, text = buffer_text(), diagnostics = seen }
end

function step.type(s)
  vim.api.nvim_win_set_cursor(0, { s.line, 0 })
  local before = version()
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(s.keys, true, false, true), "xt", false)
  wait_for("the typed text to reach the server", function()
    return version() ~= before
  end)
  return { version = version(), text = buffer_text() }
end

function step.action(s)
  vim.api.nvim_win_set_cursor(0, { s.line, 0 })
  local offered, chose, lazy = nil, nil, nil
  local notified = #notices
  local tick = vim.api.nvim_buf_get_changedtick(0)
  vim.ui.select = function(items, opts, on_choice)
    offered = {}
    for _, item in ipairs(items) do
      local action = item.action or item[2] -- {action = ...} from 0.10, {client_id, action} before
      table.insert(offered, action.title)
      if action.title == s.title then
        chose, lazy = item, action.edit == nil
      end
    end
    on_choice(chose)
  end
  vim.lsp.buf.code_action()
  wait_for("the code action menu", function()
    return offered ~= nil or #notices > notified
  end)
  if chose then
    wait_for("the edit of " .. s.title, function()
      return vim.api.nvim_buf_get_changedtick(0) ~= tick
    end)
  end
  return {
    offered = offered or {},
    notices = vim.list_slice(notices, notified + 1),
    chosen = chose ~= nil,
    resolved_by_editor = lazy,
    text = buffer_text(),
  }
end

function step.write()
  vim.cmd("write")
  return { file = vim.api.nvim_buf_get_name(0) }
end

local function run()
  for index, s in ipairs(plan.steps) do
    local ok, record = pcall(step[s["do"]], s)
    if not ok then
      table.insert(records, { step = index, error = tostring(record) })
      return false
    end
    record.step = index
    table.insert(records, record)
  end
  return true
end

local ok = run()
vim.lsp.stop_client(all_clients())
vim.wait(timeout, function()
  return #all_clients() == 0
end, 20)
vim.fn.writefile({ vim.json.encode({ ok = ok, steps = records, notices = notices }) }, plan.result)
vim.cmd(ok and "qall!" or "cquit 1")
