#!/usr/bin/env bash
# The README's test command: installs what the tests need (scripts/setup-tests.sh), then
# runs every test. Tests build in the release profile, so they reuse what
# `cargo build --release` (the README's first command) already compiled.
#
#   bash scripts/test.sh                            every test; a missing stack fails its tests
#   UFO_BATCH_SKIP_TESTS=desktop bash scripts/test.sh   skip (and do not install) a stack's tests
#   bash scripts/test.sh -- some_test_name          arguments after the script go to cargo test
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-tests.sh || exit $?

record=target/tmp/skipped-tests.txt
mkdir -p target/tmp
rm -f "$record"
# Most tests wait on processes, apps and sockets rather than compute: four at once on
# two cores took the integration tests from 223 s to 148 s here (RUST_TEST_THREADS
# overrides it).
echo "== cargo test --release (the release build's dependencies are reused; about 3 min to compile the tests, 2.5 min to run them on 2 cores)"
# Every test binary runs, whatever failed before it (--no-fail-fast); which failed is
# said at the end.
log=target/tmp/test-output.txt
RUST_TEST_THREADS=${RUST_TEST_THREADS:-4} cargo test --release --no-fail-fast "$@" 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
failed=$(sed -n 's/^error: test failed, to rerun pass `\(.*\)`$/\1/p' "$log" | sort -u | paste -sd ' ')
if [ "$code" -ne 0 ] && [ -n "$failed" ]; then
  echo "test binaries that failed: $failed"
fi

if [ -s "$record" ]; then
  count=$(wc -l <"$record")
  stacks=$(cut -f1 "$record" | sort | uniq -c | awk '{printf "%s%s (%d)", sep, $2, $1; sep=", "}')
  echo "skipped on request (UFO_BATCH_SKIP_TESTS=${UFO_BATCH_SKIP_TESTS:-}): $count tests whose stack is not installed: $stacks"
fi
exit "$code"
