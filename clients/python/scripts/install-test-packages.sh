#!/bin/sh
# Installs what the engine adapters' tests need beyond python3: Debian's python3-torch (torch 1.13 with numpy, for
# /usr/bin/python3), so that the tests hand the adapters real torch tensors where SGLang's, vLLM's and LMCache's
# contracts pass tensors. Without it those tests skip, naming this package. Idempotent and quick when it is there.
#
# Needs root or password-less sudo for apt-get; otherwise prints the command to run and exits 1.
#
# Usage: clients/python/scripts/install-test-packages.sh
set -eu

packages="python3-torch python3-numpy"

if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import torch, numpy" 2>/dev/null; then
    echo "adapter test packages: /usr/bin/python3 imports torch and numpy already"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    run=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    run="sudo -n"
else
    echo "adapter test packages: not root and no password-less sudo; run: sudo apt-get install -y --no-install-recommends $packages" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! $run apt-get install -y -q --no-install-recommends $packages; then
    # A new machine has no package lists yet.
    $run apt-get update -q
    # shellcheck disable=SC2086
    $run apt-get install -y -q --no-install-recommends $packages
fi
/usr/bin/python3 -c "import torch; print('adapter test packages: torch', torch.__version__, 'for /usr/bin/python3')"
