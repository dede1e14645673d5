/**
 * The HTTP admin API over a running engine's operations: {@link io.kvtier.admin.AdminServer}, started
 * from the engine's {@code admin.*} settings by {@link io.kvtier.admin.AdminSettings} (docs/admin-api.md).
 */
package io.kvtier.admin;
