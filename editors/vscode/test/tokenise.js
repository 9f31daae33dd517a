// `npm run tokenise`: loads the extension's package.json and TextMate grammar as VS Code does
// (vscode-textmate + vscode-oniguruma) and tokenises every file given.
const fs = require('fs');
const path = require('path');
const tm = require('vscode-textmate');
const onig = require('vscode-oniguruma');
const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
const g = pkg.contributes.grammars[0];
const wasm = fs.readFileSync(path.join(path.dirname(require.resolve('vscode-oniguruma')), 'onig.wasm')).buffer;
onig.loadWASM(wasm).then(() => {
  const registry = new tm.Registry({
    onigLib: Promise.resolve({ createOnigScanner: s => new onig.OnigScanner(s), createOnigString: s => new onig.OnigString(s) }),
    loadGrammar: async scope => scope === g.scopeName
      ? tm.parseRawGrammar(fs.readFileSync(path.join(__dirname, '..', g.path), 'utf8'), g.path) : null,
  });
  return registry.loadGrammar(g.scopeName);
}).then(grammar => {
  let files = 0, lines = 0, tokens = 0, bare = 0, kw = 0;
  for (const f of process.argv.slice(2)) {
    let stack = tm.INITIAL;
    for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
      const r = grammar.tokenizeLine(line, stack);
      stack = r.ruleStack;
      lines++; tokens += r.tokens.length;
      for (const t of r.tokens) {
        const text = line.slice(t.startIndex, t.endIndex);
        if (t.scopes.length === 1 && text.trim() !== '') bare++;
        if (t.scopes.some(s => s.startsWith('keyword'))) kw++;
      }
    }
    files++;
  }
  console.log(JSON.stringify({ files, lines, tokens, keyword_tokens: kw, non_blank_tokens_with_no_scope: bare }));
}).catch(e => { console.error(e); process.exit(1); });
