#!/bin/sh
# Regenerates the io_uring bindings (io.kvtier.nativeaccess.uring.bindings) from include/io_uring_ffm.h
# with jextract, into target/jextract, and shows how they differ from the committed classes.
#
#   native/jextract.sh                   generate and diff; changes nothing under src/
#   native/jextract.sh --apply           also copy the regenerated struct classes over the committed ones
#   native/jextract.sh --system-headers  generate from the system's <linux/io_uring.h> (linux-libc-dev)
#                                        instead of the project's own include/linux/io_uring.h
#                                        (combine with --apply as a second argument); that header
#                                        declares more than kvtier binds, so its struct classes show
#                                        the extra union members in the diff
#
# io_uring_h.java is never overwritten: jextract cannot emit errno capture (captureCallState) or bind
# io_uring_setup/enter/register, which have no libc symbol and go through syscall(2); those parts are
# hand-written there (marked "kvtier:"), so its diff is for review only.
#
# jextract is on no package registry this project builds from (not Maven Central, not apt): get a build
# for your JDK from https://jdk.java.net/jextract and put its bin/ on PATH, or set JEXTRACT=/path/to/jextract.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
jextract=${JEXTRACT:-jextract}
apply=
system=
for arg in "$@"; do
    case "$arg" in
        --apply) apply=1 ;;
        --system-headers)
            if [ ! -f /usr/include/linux/io_uring.h ]; then
                echo "jextract.sh: no /usr/include/linux/io_uring.h; install linux-libc-dev or drop --system-headers." >&2
                exit 2
            fi
            system=1 ;;
        *) echo "jextract.sh: unknown argument '$arg' (expected --apply or --system-headers)" >&2; exit 2 ;;
    esac
done
# The project's declarations are found through -I include; without it, <linux/io_uring.h> is the system's.
if [ -n "$system" ]; then
    set -- -D KVTIER_SYSTEM_HEADERS
else
    set -- -I "$here/include"
fi
if ! command -v "$jextract" >/dev/null 2>&1; then
    echo "jextract.sh: jextract is not installed (looked for '$jextract' on PATH)." >&2
    echo "jextract.sh: it is distributed only as prebuilt binaries at https://jdk.java.net/jextract, which no registry" >&2
    echo "jextract.sh: reachable from this build mirrors; install it there and re-run, or set JEXTRACT. Nothing was changed." >&2
    exit 2
fi

package=io.kvtier.nativeaccess.uring.bindings
committed="$here/src/main/java/$(echo "$package" | tr . /)"
out="$here/target/jextract"
rm -rf "$out"
mkdir -p "$out"

# The constants to bind are the ones the committed header class has: one getter per macro or enum constant.
constants=$(grep -o 'public static [a-z]* [A-Z_][A-Za-z0-9_]*()' "$committed/io_uring_h.java" \
    | sed 's/.* \([A-Za-z0-9_]*\)()/\1/' | grep -v '^C_' | sed 's/^/--include-constant /')

# shellcheck disable=SC2086 # $constants is a list of options
"$jextract" \
    --output "$out" \
    --target-package "$package" \
    --header-class-name io_uring_h \
    "$@" \
    --include-struct io_uring_params --include-struct io_sqring_offsets --include-struct io_cqring_offsets \
    --include-struct io_uring_sqe --include-struct io_uring_cqe --include-struct statx --include-struct iovec \
    --include-function syscall --include-function mmap --include-function munmap --include-function statx \
    $constants \
    "$here/include/io_uring_ffm.h"

generated="$out/$(echo "$package" | tr . /)"
status=0
diff -ru "$committed" "$generated" || status=1
if [ -n "$apply" ]; then
    for struct in io_uring_params io_sqring_offsets io_cqring_offsets io_uring_sqe io_uring_cqe statx iovec; do
        cp "$generated/$struct.java" "$committed/$struct.java"
    done
    echo "jextract.sh: struct classes copied; io_uring_h.java left as it is (see its diff above)"
    exit 0
fi
exit $status
