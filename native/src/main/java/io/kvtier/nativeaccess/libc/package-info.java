/**
 * The {@link io.kvtier.nativeaccess.libc.LibC} front: file I/O system calls that take native
 * pointers, so page I/O goes straight between a pool slice and the kernel with no heap buffer and
 * no allocation; and {@link io.kvtier.nativeaccess.libc.Futex}, sleeping and waking on a word of a
 * shared mapping across processes.
 */
package io.kvtier.nativeaccess.libc;
