/**
 * The admin API's JSON: the bodies it takes, the answers it gives, and the strict mapping between them and
 * the engine's operations. Internal to the admin module.
 */
package io.kvtier.admin.json;
