package io.kvtier.tck;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.UniqueId;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.launcher.EngineFilter.includeEngines;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/**
 * Proves the kit catches what it claims to: runs it through the JUnit Platform launcher against
 * each deliberately broken tier of {@link BrokenTierContracts} and checks that the contract test
 * aimed at the fault fails, and against the reference tier, where nothing may fail.
 */
class ContractKitSelfTest
{
    static Stream<Arguments> brokenTiers()
    {
        return Stream.of(
            Arguments.of(BrokenTierContracts.FailsWholeBatchOnMissing.class, Set.of("shouldCompleteEachKeyOnItsOwnInAMixedBatch")),
            Arguments.of(BrokenTierContracts.WritesPastSlice.class, Set.of("shouldKeepReadsInsideTheirSlices", "shouldRoundTripRandomBytes")),
            Arguments.of(BrokenTierContracts.CompletesTwice.class, Set.of("shouldReportExactlyTheWrittenKeysAsExisting")),
            Arguments.of(BrokenTierContracts.ServesAfterClose.class, Set.of("shouldCompleteEveryKeyWithClosedAfterClose")),
            Arguments.of(BrokenTierContracts.AcceptsUnknownSettings.class, Set.of("shouldRejectAnUnknownSetting")),
            Arguments.of(BrokenTierContracts.VagueConfigErrors.class, Set.of("shouldRejectEachInvalidConfig")),
            Arguments.of(BrokenTierContracts.PartialRead.class, Set.of("shouldCompleteEachKeyOnItsOwnInAMixedBatch", "shouldKeepReadsInsideTheirSlices")),
            Arguments.of(BrokenTierContracts.ForgetsOnRestart.class, Set.of("shouldKeepObjectsAcrossInstances")),
            Arguments.of(BrokenTierContracts.EvictsSilently.class, Set.of("shouldEvictWithinCapacityAndReportEachRemoval")),
            Arguments.of(BrokenTierContracts.StaleUsage.class, Set.of("shouldReflectWritesAndRemovalsInUsage")),
            Arguments.of(BrokenTierContracts.DropsKeyOfLargeBatch.class, Set.of("shouldCompleteALargeBatch")),
            Arguments.of(BrokenTierContracts.TornOverwrite.class, Set.of("shouldNeverServeAPartialOverwrite")),
            Arguments.of(BrokenTierContracts.TouchesAfterCompletion.class, Set.of("shouldRemoveObjects")),
            Arguments.of(BrokenTierContracts.WritesAfterComplete.class, Set.of("shouldRoundTripRandomBytes")),
            Arguments.of(BrokenTierContracts.ThrowsOnEmptyBatch.class, Set.of("shouldAcceptAnEmptyBatch")),
            Arguments.of(BrokenTierContracts.DeclaresNoSpiVersion.class, Set.of("shouldDeclareTheSpiVersionItWasBuiltFor")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("brokenTiers")
    void shouldFailTheContractTestAimedAtEachFault(final Class<?> kit, final Set<String> expectedFailures)
    {
        final KitRun run = KitRun.of(kit);
        assertThat(run.summary.getTestsFoundCount()).as("tests the launcher found in %s", kit.getSimpleName())
            .isGreaterThanOrEqualTo(kitTestCount());
        assertThat(run.failures.keySet())
            .as("failing contract tests of %s (messages: %s)", kit.getSimpleName(), run.failures)
            .containsAll(expectedFailures);
    }

    @Test
    void shouldTagEveryBrokenTierSoThatNoTestFilterRunsIt()
    {
        for (final Class<?> nested : BrokenTierContracts.class.getDeclaredClasses())
        {
            if (AbstractStorageTierContractTest.class.isAssignableFrom(nested))
            {
                assertThat(BrokenTierContracts.BrokenContract.class).as("%s is a deliberately broken kit", nested.getSimpleName())
                    .isAssignableFrom(nested);
                assertThat(org.junit.platform.commons.support.AnnotationSupport.findAnnotation(nested, org.junit.jupiter.api.Tag.class))
                    .as("tag of %s", nested.getSimpleName()).hasValueSatisfying(tag -> assertThat(tag.value()).isEqualTo("deliberately-broken"));
            }
        }
    }

    @Test
    void shouldPassTheReferenceTierThroughTheSameLauncher()
    {
        final KitRun run = KitRun.of(ReferenceTierContractTest.class);
        assertThat(run.failures).as("failures of the reference tier").isEmpty();
        assertThat(run.summary.getTestsAbortedCount()).as("skipped capability tests of the reference tier").isZero();
        assertThat(run.summary.getTestsSucceededCount()).as("passing tests").isGreaterThanOrEqualTo(kitTestCount());
    }

    private static long kitTestCount()
    {
        return Arrays.stream(AbstractStorageTierContractTest.class.getDeclaredMethods())
            .filter(m -> Modifier.isPublic(m.getModifiers()))
            .filter(m -> m.isAnnotationPresent(Test.class) || m.isAnnotationPresent(TestFactory.class))
            .map(Method::getName)
            .count();
    }

    /** One launcher run of a kit class, with the names of the contract tests that failed. */
    private static final class KitRun implements TestExecutionListener
    {
        private final SummaryGeneratingListener summaryListener = new SummaryGeneratingListener();
        private final Map<String, String> failures = new ConcurrentHashMap<>();
        private TestExecutionSummary summary;

        static KitRun of(final Class<?> kit)
        {
            final KitRun run = new KitRun();
            final LauncherDiscoveryRequest discovery = request()
                .selectors(selectClass(kit))
                .filters(includeEngines("junit-jupiter"))
                .build();
            final Launcher launcher = LauncherFactory.create();
            launcher.execute(discovery, run.summaryListener, run);
            run.summary = run.summaryListener.getSummary();
            return run;
        }

        @Override
        public void executionFinished(final TestIdentifier test, final TestExecutionResult result)
        {
            if (result.getStatus() == TestExecutionResult.Status.FAILED)
            {
                final String message = result.getThrowable().map(t -> String.valueOf(t.getMessage())).orElse("");
                failures.merge(contractTestName(test), message, (a, b) -> a + " | " + b);
            }
        }

        private static String contractTestName(final TestIdentifier test)
        {
            if (test.getSource().orElse(null) instanceof org.junit.platform.engine.support.descriptor.MethodSource method)
            {
                return method.getMethodName();
            }
            // Dynamic tests carry no method source: name them after their @TestFactory method.
            final Map<String, String> segments = new TreeMap<>();
            for (final UniqueId.Segment segment : UniqueId.parse(test.getUniqueId()).getSegments())
            {
                segments.put(segment.getType(), segment.getValue());
            }
            final String method = segments.getOrDefault("test-factory", segments.getOrDefault("method", test.getDisplayName()));
            final int paren = method.indexOf('(');
            return paren < 0 ? method : method.substring(0, paren);
        }
    }
}
