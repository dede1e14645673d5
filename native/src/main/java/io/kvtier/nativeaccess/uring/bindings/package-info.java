/**
 * io_uring bindings in the shape jextract generates, made from {@code native/include/io_uring_ffm.h}
 * (the project's own declarations of the io_uring ABI, {@code native/include/linux/io_uring.h}, plus
 * the libc calls around it): one header class, {@link io.kvtier.nativeaccess.uring.bindings.io_uring_h},
 * and one class per struct. {@code native/jextract.sh} regenerates them where jextract is installed,
 * from those declarations or from the system's own header; {@code UringAbiTest} checks every layout
 * and constant against the C compiler, with both headers. Use them through
 * {@code io.kvtier.nativeaccess.uring.Uring}, not directly.
 */
package io.kvtier.nativeaccess.uring.bindings;
