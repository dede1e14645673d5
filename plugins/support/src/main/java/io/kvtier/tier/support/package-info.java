/**
 * What the L3 tiers share, so a tier writes only what it does per key or per batch:
 * {@link io.kvtier.tier.support.TierWorkers} (worker threads, an urgent lane, the submit, complete and
 * close protocol), the file layout of tiers that keep a page per file ({@link io.kvtier.tier.support.PathLayout},
 * {@link io.kvtier.tier.support.StartupScan}, {@link io.kvtier.tier.support.Capacity}), errno names, a
 * rate-limited error log and typed settings ({@link io.kvtier.tier.support.TierSetting}). Depends on the
 * SPI only, so a plugin built outside kvtier may use it too.
 */
package io.kvtier.tier.support;
