#!/bin/sh
# Builds the fake 3FS USRBIO library for the Maven build (native/pom.xml), a test fixture the 3FS tier's
# tests load through the real FFM binding. A missing gcc or make skips it with a message naming what to
# install; the 3FS tier's USRBIO tests then skip too, naming this script. Never fails the build for that.
set -e
cd "$(dirname "$0")"
missing=""
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
if [ -n "$missing" ]; then
    echo "[hf3fs-fake] SKIPPED: the fake USRBIO library is not built (not found:$missing); install with: apt-get install gcc make"
    exit 0
fi
make -s all
echo "[hf3fs-fake] built $(pwd)/build/libhf3fs_api_shared.so (test fixture, not 3FS)"
