package io.kvtier.engine.operations;

/**
 * Whether the engine is live (its thread runs) and ready (it takes requests, and no tier is out of
 * service), with the reason when it is not.
 *
 * @param live   whether the engine thread runs
 * @param ready  whether the engine takes requests with every tier in service
 * @param reason why it is not live or not ready, or {@code null}
 */
public record Health(boolean live, boolean ready, String reason)
{
}
