/*
 * What kvtier's io_uring bindings (io.kvtier.nativeaccess.uring.bindings) are generated from, by
 * native/jextract.sh: the trimmed uapi header next to this file, plus the libc declarations the
 * front needs around it. io_uring has no libc wrappers, so its three system calls go through
 * syscall(2) with the numbers from <sys/syscall.h>.
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
#include "linux/io_uring.h"

#endif
