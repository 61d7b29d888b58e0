#!/usr/bin/env bash
# npm test: the CLI build, the static checks side by side (lint, typecheck, knip), the tests, then the integration
# tests on their own. Each phase says when it starts and how long it took; a failed check prints its output.
set -euo pipefail
cd "$(dirname "$0")/.."
t_all=$SECONDS

phase() {
  local name=$1 t0=$SECONDS
  shift
  echo "== $name"
  "$@"
  echo "== $name: $((SECONDS - t0)) s"
}

# `npm run lint` and `npm run typecheck` take about as long as each other, on one core each; `npm run knip` (dead
# exports, files and dependencies) is a few seconds beside them.
static_checks() {
  local dir name pids=() names=(lint typecheck knip) failed=0
  dir=$(mktemp -d)
  for name in "${names[@]}"; do
    npm run -s "$name" >"$dir/$name" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      echo "   ${names[$i]}: ok"
    else
      echo "   ${names[$i]}: FAILED"
      cat "$dir/${names[$i]}"
      failed=1
    fi
  done
  rm -rf "$dir"
  return "$failed"
}

phase build:cli npm run -s build:cli
phase 'lint, typecheck and knip' static_checks
phase tests npx vitest run --project '!integration*'
phase integration npm run -s test:integration
echo "== npm test: $((SECONDS - t_all)) s"
