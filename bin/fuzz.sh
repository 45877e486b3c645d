#!/usr/bin/env sh
# The property tests (every test file using test/support/Fuzz.ts's parameters) for longer than
# `npm test` runs them: FUZZ_RUNS runs each (default 2,000) under FUZZ_SEED (default: a fresh one,
# printed so a failure can be replayed with the same FUZZ_SEED).
set -eu
cd "$(dirname "$0")/.."
FUZZ_RUNS=${FUZZ_RUNS:-2000}
FUZZ_SEED=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "fuzz: FUZZ_RUNS=$FUZZ_RUNS FUZZ_SEED=$FUZZ_SEED"
export FUZZ_RUNS FUZZ_SEED
# shellcheck disable=SC2046 # one argument per file
exec npx vitest run --testTimeout=0 "$@" $(grep -rl --include='*.test.ts' 'support/Fuzz.js' test | sort)
