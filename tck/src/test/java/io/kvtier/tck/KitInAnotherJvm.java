package io.kvtier.tck;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;

/**
 * The main class {@link ContractKitSelfTest.KitRun#inAnotherJvm} starts: runs contract tests of one kit
 * class and prints how many it found and, one line each, which failed and why, then exits, taking
 * with it any thread the broken tier left spinning.
 */
final class KitInAnotherJvm
{
    /** Starts the line giving the number of tests found. */
    static final String FOUND = "found";
    /** Starts each line naming a failed contract test and its message. */
    static final String FAILED = "failed";

    private KitInAnotherJvm()
    {
    }

    /**
     * @param args the kit class, then the contract tests to run
     * @throws ClassNotFoundException when the kit class is not on the class path
     */
    public static void main(final String[] args) throws ClassNotFoundException
    {
        final ContractKitSelfTest.KitRun run = ContractKitSelfTest.KitRun.of(Class.forName(args[0]), Set.of(Arrays.copyOfRange(args, 1, args.length)));
        System.out.println(FOUND + "\t" + run.found());
        for (final Map.Entry<String, String> failure : run.failures().entrySet())
        {
            System.out.println(FAILED + "\t" + failure.getKey() + "\t" + failure.getValue().replace('\n', ' ').replace('\t', ' '));
        }
        System.out.flush();
        System.exit(0);
    }
}
