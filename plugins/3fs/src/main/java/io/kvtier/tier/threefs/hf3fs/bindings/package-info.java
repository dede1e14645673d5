/**
 * Bindings of the 3FS USRBIO subset kvtier uses, in the shape jextract generates from
 * plugins/3fs/include/hf3fs_usrbio.h: {@code hf3fs_usrbio_h} holds the functions, each looked up on first use
 * in the library {@link io.kvtier.tier.threefs.hf3fs.Hf3fsLibrary} bound, and the constants; one class per
 * struct. Mind the return conventions the header lists: {@code hf3fs_reg_fd} returns a positive errno on
 * failure where the others return {@code -errno}.
 */
package io.kvtier.tier.threefs.hf3fs.bindings;
