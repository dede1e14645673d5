/**
 * io_uring bindings in the shape jextract generates, made from {@code native/include/io_uring_ffm.h}
 * (a trimmed copy of the uapi {@code linux/io_uring.h} plus the libc calls around it): one header
 * class, {@link io.kvtier.nativeaccess.uring.bindings.io_uring_h}, and one class per struct.
 * {@code native/jextract.sh} regenerates them where jextract is installed; {@code UringAbiTest}
 * checks every layout and constant against the C compiler. Use them through
 * {@code io.kvtier.nativeaccess.uring.Uring}, not directly.
 */
package io.kvtier.nativeaccess.uring.bindings;
