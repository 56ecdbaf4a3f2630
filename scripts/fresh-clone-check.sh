#!/usr/bin/env bash
# A newcomer's first commands in a fresh clone, with nothing beside it.
#
# Clones the committed HEAD of this repository into a temporary folder
# outside it (so no `shared/` is found beside it or above it), unsets
# FEDTOPO_SHARED and FEDTOPO_REQUIRE_SHARED, builds fedtopo there and runs:
#   1. the README's main job, `fedtopo compare`: its stdout must equal the
#      README's "Example output" block (the block's `note:` line is stderr);
#   2. the paper reproduction, `fedtopo run experiments/throughput-tables/
#      experiment.toml` into a scratch folder: results.csv and results.md
#      must equal the committed ones;
#   3. `fedtopo reproduce matcha-tables` with its default underlays (the
#      shipped copies), in the quick form of its --help example;
#   4. the tests that used to need `../shared`, through `cargo test`:
#      paper_tables (Tables 3, 6, 7 and 10), cli_friction (every --help
#      example, `reproduce matcha-tables` and `run experiments/...`
#      included) and zz_skipped_summary, whose one line must say which
#      tests skipped and why (the Topology Zoo tests of the library).
#
# Cost: the build reuses the dependencies already compiled in this
# checkout's target/debug (hard links, no copy), so only the fedtopo crate
# and the three test binaries are compiled in the clone. Measured on the
# 2-core machine: see docs/building.md ("CI and the fresh-clone check"). `--cold` builds
# everything in the clone from nothing (add ~10 min).
#
# Usage: scripts/fresh-clone-check.sh [--cold] [--keep]
# The dev profile (opt-level 2) stands in for the README's `--release`: same
# code, and its dependencies are the ones `cargo test` has built.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
COLD=0
KEEP=0
for a in "$@"; do
  case "$a" in
    --cold) COLD=1 ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fedtopo-fresh-clone.XXXXXX")
if [ "$KEEP" = 1 ]; then echo "scratch: $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi
CLONE=$TMP/fedtopo
git clone --quiet "$ROOT" "$CLONE"
echo "cloned $(git -C "$CLONE" rev-parse --short HEAD) into $CLONE"
for d in "$TMP" /tmp /; do
  if [ -d "$d/shared/underlays" ]; then
    echo "error: $d/shared/underlays exists: the clone would find it" >&2
    exit 1
  fi
done
if [ "$COLD" = 0 ] && [ -d "$ROOT/target/debug/deps" ]; then
  mkdir -p "$CLONE/target/debug"
  for sub in deps build .fingerprint; do
    [ -d "$ROOT/target/debug/$sub" ] && cp -al "$ROOT/target/debug/$sub" "$CLONE/target/debug/$sub"
  done
fi
cd "$CLONE"
unset FEDTOPO_SHARED FEDTOPO_REQUIRE_SHARED CARGO_TARGET_DIR

FAILED=0
step() { printf '== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; FAILED=$((FAILED + 1)); }

start=$SECONDS
step "cargo build --locked --bin fedtopo"
cargo build --locked --quiet --bin fedtopo
BIN=$CLONE/target/debug/fedtopo
echo "   built in $((SECONDS - start)) s"

step "fedtopo compare (README: Example output)"
"$BIN" compare >"$TMP/compare.out" 2>"$TMP/compare.err"
# The README's block between "cargo run --release -- compare` prints" and
# the closing fence, without its stderr `note:` line.
awk '/^`cargo run --release -- compare` prints/ {f = 1} f && /^```text/ {b = 1; next} b && /^```/ {exit} b' README.md \
  | grep -v '^note: ' >"$TMP/compare.want"
if [ ! -s "$TMP/compare.want" ]; then
  fail "README: no Example output block found"
elif ! diff -u "$TMP/compare.want" "$TMP/compare.out"; then
  fail "fedtopo compare differs from the README's Example output"
fi

step "fedtopo run experiments/throughput-tables/experiment.toml"
t=$SECONDS
if "$BIN" run experiments/throughput-tables/experiment.toml --out "$TMP/tt" >"$TMP/tt.out" 2>"$TMP/tt.err"; then
  for f in results.csv results.md; do
    diff -u "experiments/throughput-tables/$f" "$TMP/tt/$f" || fail "throughput-tables/$f differs"
  done
else
  cat "$TMP/tt.err" >&2
  fail "fedtopo run experiments/throughput-tables/experiment.toml"
fi
echo "   $((SECONDS - t)) s"

step "fedtopo reproduce matcha-tables --seeds 2 --matcha-rounds 200"
t=$SECONDS
if ! "$BIN" reproduce matcha-tables --seeds 2 --matcha-rounds 200 --out "$TMP/matcha" >/dev/null 2>"$TMP/matcha.err"; then
  cat "$TMP/matcha.err" >&2
  fail "fedtopo reproduce matcha-tables"
elif [ "$(tail -n +2 "$TMP/matcha/results.csv" | wc -l)" != 30 ]; then
  fail "reproduce matcha-tables: expected 30 rows"
fi
echo "   $((SECONDS - t)) s"

step "cargo test --test paper_tables --test cli_friction --test zz_skipped_summary"
t=$SECONDS
if ! cargo test --locked --test paper_tables --test cli_friction --test zz_skipped_summary \
  >"$TMP/test.out" 2>&1; then
  cat "$TMP/test.out" >&2
  fail "cargo test in the fresh clone"
fi
grep '^test result:' "$TMP/test.out" || true
summary=$(grep '^skipped tests:' "$TMP/test.out" || true)
echo "   ${summary:-no skipped-tests line}"
[ -n "$summary" ] || fail "no 'skipped tests:' line at the end of the test run"
echo "   $((SECONDS - t)) s"

echo "fresh clone: ${SECONDS} s in all; $FAILED failed"
[ "$FAILED" = 0 ]
