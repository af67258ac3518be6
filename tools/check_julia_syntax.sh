#!/usr/bin/env bash
# Parses every .jl file under bindings/julia (or the paths given) with
# tree-sitter-julia; fails on any syntax error, printing file:line:col.
# Needs node and the pinned packages of tools/julia-syntax: when they are not
# installed it installs them first (tools/julia-syntax/install.sh: npm ci, as
# scripts/setup-deps.sh does), saying so; without npm to do that it exits 77
# with the command to run. See tools/julia-syntax/check_julia_syntax.js.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v node >/dev/null 2>&1; then
  echo "check_julia_syntax: node is not installed (Debian: apt-get install nodejs npm;" \
       "scripts/setup-deps.sh installs it)" >&2
  exit 2
fi
"$here/julia-syntax/install.sh"
paths=0
for a in "$@"; do
  [[ "$a" == --* ]] || paths=$((paths + 1))
done
if ((paths == 0)); then
  # the whole Julia tree, with paths printed relative to the repository root
  cd "$here/.."
  exec node tools/julia-syntax/check_julia_syntax.js "$@" bindings/julia
fi
exec node "$here/julia-syntax/check_julia_syntax.js" "$@"
