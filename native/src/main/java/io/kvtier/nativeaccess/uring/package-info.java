/**
 * The {@link io.kvtier.nativeaccess.uring.Uring} front: io_uring rings driven from Java over FFM
 * system calls (no liburing, no JNI), batches of file reads and writes run to completion with short
 * transfers carried on, fixed buffers and files, and {@code statx} O_DIRECT alignment.
 * {@link io.kvtier.nativeaccess.uring.Uring#availability()} says when io_uring cannot be used, why,
 * and what would enable it, so callers fall back to plain system calls.
 */
package io.kvtier.nativeaccess.uring;
