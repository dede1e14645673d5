/**
 * Bindings of the CUDA runtime subset kvtier uses, in the shape jextract generates
 * (native/jextract-cuda.sh, from the project's own declarations in native/include/cuda/cudart.h, or
 * from the toolkit's headers where installed): {@code cudart_h} holds the functions,
 * each looked up on first use, and the constants; one class per struct. Code outside the
 * {@code cuda} front should not call them: the front finds the library, reports device discovery
 * and turns error codes into exceptions.
 */
package io.kvtier.nativeaccess.cuda.bindings;
