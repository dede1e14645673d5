/**
 * What an operator asks of a running engine and what it answers: the tiers' state, migrations, evictions,
 * marks and health ({@link io.kvtier.engine.operations.EngineOperations}). The admin API serves these
 * over HTTP; each call is carried out on the engine thread, so it sees and changes the engine's state as
 * every request does.
 */
package io.kvtier.engine.operations;
