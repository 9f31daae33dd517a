// The Muster extension: starts `muster lsp` for .muster files and for
// situation files (situations/*.toml), whose odds it shows as code lenses.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration('muster').get('server.path') || 'muster';
  const server = { command, args: ['lsp'] };
  client = new LanguageClient('muster', 'Muster', server, {
    documentSelector: [
      { scheme: 'file', language: 'muster' },
      { scheme: 'file', pattern: '**/situations/*.toml' },
    ],
  });
  client.start();
  context.subscriptions.push(client);
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
