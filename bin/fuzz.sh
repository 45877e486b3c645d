#!/usr/bin/env sh
# The property tests (`*.fuzz.test.ts`) for longer than `npm test` runs them: FUZZ_RUNS runs each
# (default 2,000) under FUZZ_SEED (default: a fresh one, printed so a failure can be replayed).
set -eu
FUZZ_RUNS=${FUZZ_RUNS:-2000}
FUZZ_SEED=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "fuzz: FUZZ_RUNS=$FUZZ_RUNS FUZZ_SEED=$FUZZ_SEED"
export FUZZ_RUNS FUZZ_SEED
exec npx vitest run --testTimeout=0 "$@" .fuzz.test
