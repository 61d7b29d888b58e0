#!/usr/bin/env bash
# Runs every test with the CPU slowed: all of it pinned to one core that a busy loop also competes for.
# A test that passes here and at full speed does not depend on the machine's speed (issue 13).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v taskset >/dev/null || { echo "test:slowed needs taskset (util-linux)"; exit 2; }
taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
trap 'kill "$hog" 2>/dev/null || true' EXIT
npm run build:cli
taskset -c 0 npx vitest run --project '!integration*'
taskset -c 0 npx vitest run --project 'integration*'
