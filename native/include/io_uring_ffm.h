/*
 * What kvtier's io_uring bindings (io.kvtier.nativeaccess.uring.bindings) are generated from, by
 * native/jextract.sh: the io_uring declarations plus the libc declarations the front needs around
 * them. io_uring has no libc wrappers, so its three system calls go through syscall(2) with the
 * numbers from <sys/syscall.h>.
 *
 * The io_uring declarations are the project's own (linux/io_uring.h next to this file) unless
 * KVTIER_SYSTEM_HEADERS is defined, in which case they are the system's <linux/io_uring.h>
 * (jextract.sh --system-headers). UringAbiTest holds both to the same sizes, offsets and values.
 */
#ifndef KVTIER_IO_URING_FFM_H
#define KVTIER_IO_URING_FFM_H

#define _GNU_SOURCE
#include <sys/syscall.h>   /* __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register */
#include <unistd.h>        /* long syscall(long number, ...) */
#include <sys/mman.h>      /* mmap, munmap, PROT_*, MAP_* */
#include <sys/stat.h>      /* statx, struct statx, STATX_* (glibc takes struct statx from <linux/stat.h>) */
#include <fcntl.h>         /* AT_FDCWD, AT_EMPTY_PATH */
#include <sys/uio.h>       /* struct iovec */
#ifdef KVTIER_SYSTEM_HEADERS
#include <linux/io_uring.h>
#else
#include "linux/io_uring.h"
#endif

#endif
