#!/usr/bin/env bash
# Installs the packages locked in package-lock.json into node_modules with
# `npm ci`, unless they are installed already: a copy of the lock that was
# installed is kept in node_modules/.installed-lock.json, so a re-run needs
# no network. One home for the install, so that scripts/setup-deps.sh and
# tools/check_julia_syntax.sh (hence the test) install the same way.
# Says on stderr when it installs. Exit status: 0 when the packages are
# installed (now or before); 77 when they are not and npm is not installed
# (the message names the command to run); npm's status when npm ci fails.
# Usage: install.sh [--check]   --check: install nothing; 0 when installed, 1 when not
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if cmp -s "$here/package-lock.json" "$here/node_modules/.installed-lock.json"; then
  exit 0
fi
[[ "${1:-}" == --check ]] && exit 1
# .npmrc says ignore-scripts too; the flags repeat it for an npm that is
# pointed at another config.
npm_ci=(npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
cmd="(cd $here && ${npm_ci[*]})"
if ! command -v npm >/dev/null 2>&1; then
  echo "julia-syntax: the locked packages are not installed in $here/node_modules, and npm" \
       "is not installed to install them. Install node and npm (Debian: apt-get install" \
       "nodejs npm, or scripts/setup-deps.sh), then run: $cmd" >&2
  exit 77
fi
echo "julia-syntax: installing the locked packages (tree-sitter-julia, web-tree-sitter): $cmd" >&2
(cd "$here" && "${npm_ci[@]}" >&2)
cp "$here/package-lock.json" "$here/node_modules/.installed-lock.json"
