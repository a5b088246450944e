// Minimal VS Code client for the inliner language server (python -m inliner.lsp).
// All behaviour lives in the server; this file only starts it for Python files.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function serverOptions() {
  const config = vscode.workspace.getConfiguration("inliner");
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  const expand = (part) => (folder ? part.split("${workspaceFolder}").join(folder.uri.fsPath) : part);
  const [command, ...args] = config.get("command", ["python", "-m", "inliner.lsp"]).map(expand);
  // TransportKind.stdio appends --stdio, which the server accepts.
  return { command, args, transport: TransportKind.stdio, options: folder ? { cwd: folder.uri.fsPath } : {} };
}

async function start(context) {
  client = new LanguageClient("inliner", "inliner", serverOptions(), {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
    ],
  });
  await client.start();
}

async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("inliner.restartServer", async () => {
      if (client) {
        await client.stop();
      }
      await start(context);
    }),
  );
  await start(context);
}

async function deactivate() {
  if (client) {
    await client.stop();
  }
}

module.exports = { activate, deactivate };
