#!/usr/bin/env bash
# The README's test command: installs what the tests need (scripts/setup-tests.sh), then
# runs every test. Tests build in the release profile, so they reuse what
# `cargo build --release` (the README's first command) already compiled.
#
#   bash scripts/test.sh                            every test; a missing stack fails its tests
#   UFO_BATCH_SKIP_TESTS=desktop bash scripts/test.sh   skip (and do not install) a stack's tests
#   bash scripts/test.sh -- some_test_name          arguments after the script go to cargo test
#
# A skipped test is never counted as passed: the tests that need a skipped stack are
# marked ignored when they are compiled (build.rs), so cargo's totals count them as
# ignored, and the last lines here say how many and why. UFO's and OSWorld's code that
# cannot be had (no local copy, no network to GitHub) skips their tests the same way,
# said in one line; UFO_BATCH_REQUIRE_STACKS=1 makes that an error instead.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-tests.sh || exit $?

skip=${UFO_BATCH_SKIP_TESTS:-}
unobtainable=target/tmp/unobtainable-stacks.txt
if [ -s "$unobtainable" ]; then
  missing=$(paste -sd, "$unobtainable")
  echo "== skipping the tests that need $missing: their code could not be had (see the lines above)"
  skip=${skip:+$skip,}$missing
fi
export UFO_BATCH_SKIP_TESTS=$skip
# Most tests wait on processes, apps and sockets rather than compute: four at once on
# two cores took the integration tests from 223 s to 148 s here (RUST_TEST_THREADS
# overrides it).
echo "== cargo test --release (the release build's dependencies are reused; about 4½ min to compile the tests, 3½ min to run them on 2 cores)"
# Every test binary runs, whatever failed before it (--no-fail-fast); which failed is
# said at the end.
log=target/tmp/test-output.txt
RUST_TEST_THREADS=${RUST_TEST_THREADS:-4} cargo test --release --no-fail-fast "$@" 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
failed=$(sed -n 's/^error: test failed, to rerun pass `\(.*\)`$/\1/p' "$log" | sort -u | paste -sd ' ')
if [ "$code" -ne 0 ] && [ -n "$failed" ]; then
  echo "test binaries that failed: $failed"
fi

# cargo's totals, summed over the test binaries: "test result: ok. 10 passed; 0 failed; 2 ignored; ..."
totals=$(sed -n 's/^test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' "$log" \
  | awk '{p+=$1; f+=$2; i+=$3} END {printf "%d %d %d", p, f, i}')
read -r passed failed_count ignored <<<"$totals"
# A test binary killed by a signal prints no totals: say so, so the line is not read as all.
binaries=$(grep -cE '^ +(Running|Doc-tests) ' "$log" || true)
reported=$(grep -c '^test result: ' "$log" || true)
if [ "$reported" -lt "$binaries" ]; then
  echo "warning: $((binaries - reported)) of $binaries test binaries ended without their totals (killed or crashed: see above); their tests are not in the counts below"
fi
echo "tests: $passed passed, $failed_count failed, $ignored ignored (not run)${skip:+; skipped stacks: $skip}"
printf '%s\n' "$ignored" >target/tmp/ignored-tests.txt
exit "$code"
