#!/bin/sh
# Builds and tests the C client (c/) and its Python binding (python/) for the Maven build (clients/pom.xml):
#   build.sh build   make the library, the C test program, the demo, chaos and bench clients in c/build
#   build.sh test    run the C test (no engine needed) and the Python binding's unit tests
# A missing tool skips its part with a message naming what to install; it never fails the build.
# Set KVTIER_SKIP_NATIVE_CLIENT=1 to skip everything.
set -e
cd "$(dirname "$0")"
if [ -n "$KVTIER_SKIP_NATIVE_CLIENT" ]; then
    echo "[kvtier-client] skipped: KVTIER_SKIP_NATIVE_CLIENT is set"
    exit 0
fi
missing=""
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
if [ -n "$missing" ]; then
    echo "[kvtier-client] SKIPPED: the C client is not built (not found:$missing); install with: apt-get install gcc make"
    exit 0
fi
case "$1" in
build)
    make -s -C c all
    echo "[kvtier-client] built $(pwd)/c/build/libkvtier_client.so, c/build/kvtier_demo_client, c/build/kvtier_chaos_client and c/build/kvtier_bench_client"
    ;;
test)
    make -s -C c all
    ./c/build/kvtier_client_test
    if command -v python3 >/dev/null 2>&1; then
        KVTIER_CLIENT_LIB="$(pwd)/c/build/libkvtier_client.so" python3 -m unittest discover -v -s python -p 'test_*.py'
    else
        echo "[kvtier-client] SKIPPED: the Python binding's tests need python3; install with: apt-get install python3"
    fi
    ;;
*)
    echo "usage: $0 build|test" >&2
    exit 2
    ;;
esac
