#!/usr/bin/env bash
# Proof that a change inside the runner changed nothing a user sees: runs the same
# inputs with two builds (OLD and NEW: paths to `ufo-batch`, each with its
# `ufo-batch-jail` beside it) and compares every file they wrote, byte for byte, once
# what differs from run to run by nature (times, durations, the runner's own CPU and
# memory, pids) is masked. Prints the files that differ, with their diff; exits 1 when
# one does.
#
#   bash scripts/same-outputs.sh OLD/ufo-batch NEW/ufo-batch [WORK_DIR]
#   DESKTOP=1 bash scripts/same-outputs.sh ...   also the desktop samples (examples/desktop;
#                                                their screenshots are not compared: a
#                                                caret blinks)
#
# The inputs: the README's main job (`plans/`, two samples meant to fail), a batch of
# tasks that end every other way (invalid file, failed setup, failed checks, timeout,
# `files` that cannot be written, a plan step that fails), and
# `report`, `compare` and `validate` over what they wrote.
set -uo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1")
new=$(realpath "$2")
work=${3:-target/tmp/same-outputs}
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")

# The odd tasks, written once, read by both builds.
odd="$work/odd"
mkdir -p "$odd"
cat >"$odd/invalid.json" <<'EOF'
{"request": "r", "actions": "not a list"}
EOF
cat >"$odd/setup_fails.json" <<'EOF'
{"request": "r", "setup": [{"action": "read_file", "parameters": {"path": "missing.txt"}}],
 "actions": [{"action": "execute_command", "parameters": {"command": "true"}}]}
EOF
cat >"$odd/check_fails.json" <<'EOF'
{"request": "r", "actions": [{"action": "execute_command", "parameters": {"command": "echo hi > a.txt"}}],
 "evaluate": [{"type": "file_contains", "path": "a.txt", "pattern": "bye"}]}
EOF
cat >"$odd/step_fails.json" <<'EOF'
{"request": "r", "actions": [{"action": "execute_command", "parameters": {"command": "ls no-such-file"}}]}
EOF
cat >"$odd/times_out.json" <<'EOF'
{"request": "r", "timeout": 2, "actions": [{"action": "execute_command", "parameters": {"command": "sleep 30"}}]}
EOF
cat >"$odd/bad_files.json" <<'EOF'
{"request": "r", "files": {"a": "x", "a/b": "y"}, "actions": [{"action": "execute_command", "parameters": {"command": "true"}}]}
EOF
cat >"$odd/passes.json" <<'EOF'
{"request": "r", "files": {"in.txt": "3\n1\n2\n"},
 "actions": [{"action": "execute_command", "parameters": {"command": "sort in.txt > out.txt"}}],
 "evaluate": [{"type": "file_contains", "path": "out.txt", "pattern": "1\n2\n3"}]}
EOF

run_all() { # BIN OUT: every input, into OUT (the same path for both builds)
  local bin=$1 out=$2
  rm -rf "$out"
  mkdir -p "$out"
  (
    cd "$work"
    "$bin" run "$OLDPWD/plans/" --out "$out" --name plans --progress lines --jobs 1 >"$out/plans.stdout" 2>"$out/plans.stderr"
    echo "exit $?" >>"$out/plans.stdout"
    "$bin" run odd --out "$out" --name odd --progress lines --jobs 1 --retries 1 >"$out/odd.stdout" 2>"$out/odd.stderr"
    echo "exit $?" >>"$out/odd.stdout"
    if [ "${DESKTOP:-0}" = 1 ]; then
      "$bin" run "$OLDPWD/examples/desktop/" --out "$out" --name desktop --progress lines --jobs 1 >"$out/desktop.stdout" 2>"$out/desktop.stderr"
      echo "exit $?" >>"$out/desktop.stdout"
    fi
    "$bin" validate odd >"$out/validate.stdout" 2>"$out/validate.stderr"
    echo "exit $?" >>"$out/validate.stdout"
    "$bin" report "$out/plans" >"$out/report.stdout" 2>"$out/report.stderr"
    echo "exit $?" >>"$out/report.stdout"
    "$bin" compare "$out/plans" "$out/odd" --out "$out/compare.md" >"$out/compare.stdout" 2>"$out/compare.stderr"
    echo "exit $?" >>"$out/compare.stdout"
  )
}

# What differs between two runs of one build: times and durations, the runner's own
# usage, process ids, temporary names.
mask() {
  sed -E \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z| UTC)?/TIME/g' \
    -e 's/(\\?"[a-z_]*(duration|_s|cpu|rss_kb|syncs|seconds|elapsed)[a-z_]*\\?": *)[0-9.e+-]+/\1N/g' \
    -e 's/[0-9]+(\.[0-9]+)? ?(ms|s)\b/N s/g' \
    -e 's/(pid|process) [0-9]+/\1 N/g' \
    -e 's/ time="[0-9.]+"/ time="N"/g' \
    -e 's/(dbus-daemon|mousepad|soffice[a-z.]*)(\[|:)[0-9]+/\1\2N/g' \
    -e 's/\.deleting-[0-9]+-[0-9]+/.deleting-N/g' \
    -e 's/(\["[^"]*","[a-z]+",[0-9]+,\[[^]]*\],)[0-9.]+,/\1N,/g' \
    "$1" | if [[ "$1" == *.csv ]]; then sed -E 's/^(([^,]*,){7})[0-9.]+,/\1N,/'; else cat; fi
}

run_all "$old" "$work/out"
mv "$work/out" "$work/old"
run_all "$new" "$work/out"
mv "$work/out" "$work/new"

differ=0
compared=0
while IFS= read -r -d '' file; do
  rel=${file#"$work/old/"}
  other="$work/new/$rel"
  compared=$((compared + 1))
  if [ ! -e "$other" ]; then
    echo "== only in OLD: $rel"
    differ=1
    continue
  fi
  case "$rel" in
  .*.lock) continue ;; # the runner's pid
  desktop/*.png) ;;
  # The apps' own files (their profile and log, the documents they saved, which hold
  # their own times): what the checks read of them is in status.json, compared.
  desktop/*/desktop/* | desktop/*/desktop.log | desktop/*/workspace/*) ;;
  *.png) cmp -s "$file" "$other" || { echo "== differs (image): $rel"; differ=1; } ;;
  *)
    if ! diff -q <(mask "$file" | sed "s#$work/old#WORK#g") <(mask "$other" | sed "s#$work/new#WORK#g") >/dev/null; then
      echo "== differs: $rel"
      diff <(mask "$file" | sed "s#$work/old#WORK#g") <(mask "$other" | sed "s#$work/new#WORK#g") | head -20
      differ=1
    fi
    ;;
  esac
done < <(find "$work/old" -type f -print0 | sort -z)
while IFS= read -r -d '' file; do
  rel=${file#"$work/new/"}
  [ -e "$work/old/$rel" ] || { echo "== only in NEW: $rel"; differ=1; }
done < <(find "$work/new" -type f -print0 | sort -z)
echo "compared $compared files"
exit $differ
