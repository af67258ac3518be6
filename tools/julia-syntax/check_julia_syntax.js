#!/usr/bin/env node
// Parses Julia files with a real Julia grammar (tree-sitter-julia, through
// web-tree-sitter and the grammar's .wasm: no native addon, no Julia) and
// fails on any syntax error. There is no Julia runtime in CI, so this is what
// keeps the package's files parseable.
//
// Usage: node check_julia_syntax.js [--quiet] PATH...
//   PATH: a .jl file, or a folder searched recursively for *.jl
//   (node_modules and hidden folders are skipped).
// Every ERROR node (text the grammar could not place) and MISSING node (a
// token the parser had to invent, e.g. an unclosed parenthesis) is printed as
// file:line:col with the source line and a caret. Exit status: 0 when every
// file parses cleanly, 1 when some file has a problem, 2 when the inputs or
// the installation are unusable (no such path, no .jl file, npm ci not run).
//
// No allowlist: every file of the package parses today, and a construct the
// grammar cannot read is rewritten rather than excused.
'use strict';

const fs = require('fs');
const path = require('path');

function usage(msg) {
  process.stderr.write(`check_julia_syntax: ${msg}\n` +
                       'usage: check_julia_syntax.js [--quiet] PATH...\n');
  process.exit(2);
}

function loadDeps() {
  try {
    const Parser = require('web-tree-sitter');
    const wasm = require.resolve('tree-sitter-julia/tree-sitter-julia.wasm');
    const version = (name) => require(`${name}/package.json`).version;
    return { Parser, wasm, versions: `tree-sitter-julia ${version('tree-sitter-julia')}, ` +
                                     `web-tree-sitter ${version('web-tree-sitter')}` };
  } catch (e) {
    process.stderr.write(`check_julia_syntax: ${e.message}\n` +
                         `  install the pinned packages: ${path.join(__dirname, 'install.sh')}` +
                         ' (npm ci; tools/check_julia_syntax.sh and scripts/setup-deps.sh run it)\n');
    process.exit(2);
  }
}

function collect(p, out) {
  let st;
  try {
    st = fs.statSync(p);
  } catch (e) {
    usage(`${p}: no such file or folder`);
  }
  if (st.isDirectory()) {
    for (const name of fs.readdirSync(p).sort()) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const full = path.join(p, name);
      if (fs.statSync(full).isDirectory() || name.endsWith('.jl')) collect(full, out);
    }
  } else {
    out.push(p);
  }
}

// Every ERROR and MISSING node, outermost first. An ERROR's own subtree is
// still searched: a MISSING token inside it usually points at the real cause.
function problems(root) {
  const found = [];
  const walk = (n) => {
    if (n.isMissing) {
      found.push({ kind: 'MISSING', what: `\`${n.type}\``, pos: n.startPosition });
    } else if (n.isError) {
      found.push({ kind: 'ERROR', what: 'unexpected text', pos: n.startPosition });
    }
    if (n.hasError) {
      for (let i = 0; i < n.childCount; i++) walk(n.child(i));
    }
  };
  walk(root);
  return found;
}

async function main() {
  const args = process.argv.slice(2);
  const quiet = args.includes('--quiet');
  const paths = args.filter((a) => a !== '--quiet');
  if (paths.length === 0) usage('no path given');
  const files = [];
  for (const p of paths) collect(p, files);
  if (files.length === 0) usage(`no .jl file under ${paths.join(', ')}`);

  const { Parser, wasm, versions } = loadDeps();
  await Parser.init();
  const Julia = await Parser.Language.load(wasm);
  const parser = new Parser();
  parser.setLanguage(Julia);

  let count = 0;
  for (const file of files) {
    const src = fs.readFileSync(file, 'utf8');
    const tree = parser.parse(src);
    const lines = src.split('\n');
    const found = problems(tree.rootNode);
    tree.delete();
    for (const p of found) {
      // tree-sitter columns are bytes; for the caret, count characters.
      const line = lines[p.pos.row] ?? '';
      const col = Buffer.from(line, 'utf8').subarray(0, p.pos.column).toString('utf8').length;
      console.log(`${file}:${p.pos.row + 1}:${col + 1}: ${p.kind}: ${p.what}`);
      console.log(`    ${line}`);
      console.log(`    ${' '.repeat(col)}^`);
    }
    count += found.length;
    if (!quiet && found.length === 0) console.log(`ok   ${file}`);
  }
  console.log(`parsed ${files.length} .jl file(s) with ${versions}: ${count} problem(s)`);
  return count === 0 ? 0 : 1;
}

main().then((rc) => process.exit(rc), (e) => {
  process.stderr.write(`check_julia_syntax: ${e.stack || e}\n`);
  process.exit(2);
});
