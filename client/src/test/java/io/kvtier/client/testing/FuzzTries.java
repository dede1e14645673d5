package io.kvtier.client.testing;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Lets a long fuzzing run replace the modest tries a fuzz property runs in the build:
 * {@code -Dkvtier.fuzz.tries=N} gives every property of a class that adds this hook N tries
 * (docs/RELIABILITY.md). Without the property each keeps the tries its annotation names. One class for the fuzz tests
 * of every module: this module's test jar carries it to engine, admin and bench, which all depend on the client.
 */
public final class FuzzTries implements AroundPropertyHook
{
    /** The system property a long run sets. */
    static final String PROPERTY = "kvtier.fuzz.tries";

    /** Created by jqwik, once per property it wraps. */
    public FuzzTries()
    {
    }

    /** Added to a class, the hook reaches its properties: a hook applies to the element it annotates only, by default. */
    @Override
    public PropagationMode propagateTo()
    {
        return PropagationMode.ALL_DESCENDANTS;
    }

    /** Gives the property the tries of a long run, when one is asked for, before it runs. */
    @Override
    public PropertyExecutionResult aroundProperty(final PropertyLifecycleContext context, final PropertyExecutor property)
    {
        final Integer tries = Integer.getInteger(PROPERTY);
        // An example (a property without parameters) stays one run.
        if (tries != null && context.targetMethod().getParameterCount() > 0)
        {
            if (tries < 1)
            {
                throw new IllegalArgumentException(PROPERTY + " = " + tries + ": expected a number of tries of at least 1");
            }
            context.attributes().setTries(tries);
        }
        return property.execute();
    }
}
