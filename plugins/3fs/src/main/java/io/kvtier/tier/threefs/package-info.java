/**
 * The 3FS tier ({@code type = 3fs}): page files on a 3FS mount, moved by the USRBIO API through FFM, with the
 * POSIX tier on the same layout where the USRBIO library is absent. See docs/plugins/3fs.md.
 */
package io.kvtier.tier.threefs;
