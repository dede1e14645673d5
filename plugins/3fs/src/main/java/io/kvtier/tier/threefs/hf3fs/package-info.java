/**
 * The 3FS USRBIO front: {@link io.kvtier.tier.threefs.hf3fs.Hf3fsLibrary} checks a candidate
 * {@code libhf3fs_api_shared.so} (loads, exports every bound function) and binds it for the process. The
 * bindings themselves are in {@code bindings}; the 3FS tier (plugins/3fs) is their only caller.
 */
package io.kvtier.tier.threefs.hf3fs;
