/**
 * The {@link io.kvtier.nativeaccess.libc.LibC} front: file I/O system calls that take native
 * pointers, so page I/O goes straight between a pool slice and the kernel with no heap buffer and
 * no allocation.
 */
package io.kvtier.nativeaccess.libc;
