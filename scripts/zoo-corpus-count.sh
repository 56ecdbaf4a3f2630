#!/usr/bin/env bash
# How many Topology Zoo files `fedtopo compare FILE` handles with default flags.
#
# Runs `fedtopo compare FILE` (no other option) on every .gml file of the
# corpus and prints, for each failure, the file and the first line of the
# error; then one summary line:
#   compared N of T files; F failed; L node(s) lost; I isolated router(s) left out and named
# "Lost" nodes are routers of the file missing from the silos compare timed
# (the `(N silos)` header against the file's `node [` entries) and not named
# in a note as isolated (routers without any link are left out by default,
# `--isolated-routers`): default flags must lose none, and any file that
# loses nodes is listed.
#
# Usage: scripts/zoo-corpus-count.sh [--bin PATH] [--dir DIR] [--quiet]
#   --bin PATH: the fedtopo binary (default target/debug/fedtopo, built with
#     `cargo build --bin fedtopo` when missing);
#   --dir DIR: the corpus (default $FEDTOPO_SHARED/underlays/topology-zoo,
#     else ../shared/underlays/topology-zoo beside the repository);
#   --quiet: only the summary line.
# Exits 0 whatever the count (it measures, it does not judge).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BIN=
DIR=
QUIET=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) shift; BIN=$1 ;;
    --dir) shift; DIR=$1 ;;
    --quiet) QUIET=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ -z "$DIR" ]; then
  DIR=${FEDTOPO_SHARED:-$ROOT/../shared}/underlays/topology-zoo
fi
if [ ! -d "$DIR" ]; then
  echo "error: $DIR not found (set FEDTOPO_SHARED or pass --dir)" >&2
  exit 1
fi
if [ -z "$BIN" ]; then
  BIN=$ROOT/target/debug/fedtopo
  [ -x "$BIN" ] || cargo build --quiet --bin fedtopo
fi

ERR=$(mktemp "${TMPDIR:-/tmp}/zoo-count.XXXXXX")
trap 'rm -f "$ERR"' EXIT

total=0
ok=0
failed=0
lost=0
isolated=0
for f in "$DIR"/*.gml; do
  total=$((total + 1))
  name=$(basename "$f")
  if out=$("$BIN" compare "$f" 2>"$ERR"); then
    ok=$((ok + 1))
    silos=$(printf '%s\n' "$out" | sed -n '1s/.*(\([0-9]*\) silos).*/\1/p')
    nodes=$(grep -c '^[[:space:]]*node[[:space:]]*\[' "$f" || true)
    # Routers without any link are left out by default, each named in a note.
    named=$( (grep -o 'no link in the file (isolated router' "$ERR" || true) | wc -l)
    isolated=$((isolated + named))
    if [ -n "$silos" ] && [ "$((silos + named))" != "$nodes" ]; then
      lost=$((lost + nodes - silos - named))
      echo "LOST  $name: $silos of $nodes node(s) timed, $named named as isolated"
    fi
  else
    failed=$((failed + 1))
    if [ "$QUIET" = 0 ]; then
      reason=$(head -n 1 "$ERR" | sed "s|$DIR/||" | cut -c 1-220)
      echo "FAIL  $name: $reason"
    fi
  fi
done
echo "compared $ok of $total files; $failed failed; $lost node(s) lost; $isolated isolated router(s) left out and named"
