#!/bin/sh
# Installs the Debian packages a Mooncake Store build (libmooncake_store.so, mooncake_master) links, so the
# Mooncake tier can load it and its tests can run. Idempotent and quick when nothing is missing.
#
# Which install: the real one $KVTIER_MOONCAKE_HOME names. With none named there is nothing to do: the
# tests run against the project's own Mooncake test double (plugins/mooncake/fake), which needs only gcc
# and make.
#
# Needs root or password-less sudo for apt-get; otherwise prints the command to run and exits 1.
# The package list matches io.kvtier.tier.mooncake.MooncakeRuntime.DEBIAN_PACKAGES.
#
# Usage: plugins/mooncake/scripts/install-runtime.sh
set -eu

packages="libgoogle-glog0v6 libgflags2.2 libjsoncpp25 libyaml-cpp0.7 libxxhash0 libnuma1 liburing2 libibverbs1 libcurl4 libzstd1 libunwind8"

home=${KVTIER_MOONCAKE_HOME:-}

if [ -z "$home" ]; then
    echo "mooncake runtime: KVTIER_MOONCAKE_HOME names no real Mooncake install; the tests use the project's test double, nothing to install"
    exit 0
fi
if [ ! -f "$home/lib/libmooncake_store.so" ]; then
    echo "mooncake runtime: no Mooncake install at $home (KVTIER_MOONCAKE_HOME: it should hold lib/libmooncake_store.so and bin/mooncake_master); nothing to install"
    exit 0
fi

missing() {
    for f in "$home/lib/libmooncake_store.so" "$home/bin/mooncake_master"; do
        [ -f "$f" ] && ldd "$f" 2>/dev/null | grep 'not found' || true
    done
}

if [ -z "$(missing)" ]; then
    echo "mooncake runtime: every library of $home is present"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    run=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    run="sudo -n"
else
    echo "mooncake runtime: missing libraries and no root or password-less sudo; as root run:" >&2
    echo "  apt-get update && apt-get install -y $packages" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "mooncake runtime: not a Debian-like system (no apt-get); install the equivalents of: $packages" >&2
    missing >&2
    exit 1
fi

echo "mooncake runtime: installing $packages"
# shellcheck disable=SC2086
$run env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null

still=$(missing)
if [ -n "$still" ]; then
    echo "mooncake runtime: still missing after the install:" >&2
    echo "$still" >&2
    exit 1
fi
echo "mooncake runtime: installed"
