/**
 * Fronts for native capabilities reached through the FFM API. Each front ({@code LibC},
 * {@code Uring}, {@code Cuda}) finds its library once, and when the library, a symbol or
 * native access itself is missing it reports itself unavailable with the reason logged, so callers
 * fall back instead of failing class initialisation.
 */
package io.kvtier.nativeaccess;
