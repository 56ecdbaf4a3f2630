#!/usr/bin/env bash
# Installs Fashion-MNIST (Debian's package dataset-fashion-mnist: the four
# IDX files of the original distribution, gzip-compressed, ~30 MB) when it is
# missing, and prints the directory that holds them, for
#
#   fedtopo train --dataset fashion-mnist ...            # this directory
#   fedtopo train --dataset mnist:"$(scripts/fashion-mnist.sh)" ...
#
# Installing needs root (apt-get); without root a missing package is an
# error that says what to run. FEDTOPO_FASHION_MNIST=DIR points at another
# copy (the same four files, uncompressed or .gz) and skips the install.
set -euo pipefail
DIR="${FEDTOPO_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}"
FILES="train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte"

complete() {
  for f in $FILES; do
    [ -f "$DIR/$f" ] || [ -f "$DIR/$f.gz" ] || return 1
  done
}

if ! complete; then
  if [ -n "${FEDTOPO_FASHION_MNIST:-}" ]; then
    echo "fashion-mnist.sh: FEDTOPO_FASHION_MNIST=$DIR lacks some of: $FILES (.gz or not)" >&2
    exit 1
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "fashion-mnist.sh: $DIR is missing; as root run: apt-get install dataset-fashion-mnist" >&2
    exit 1
  fi
  echo "fashion-mnist.sh: installing Debian's dataset-fashion-mnist (~30 MB)" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Wait for a dpkg lock held by another apt-get instead of failing at once.
  apt-get -o DPkg::Lock::Timeout=600 install -y -q dataset-fashion-mnist >&2 ||
    { apt-get -o DPkg::Lock::Timeout=600 update -q >&2 &&
      apt-get -o DPkg::Lock::Timeout=600 install -y -q dataset-fashion-mnist >&2; }
  complete || { echo "fashion-mnist.sh: $DIR still incomplete after the install" >&2; exit 1; }
fi
echo "$DIR"
