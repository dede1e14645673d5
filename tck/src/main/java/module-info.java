/**
 * The conformance kit: the contract tests a tier plugin runs by extending one class. Its API carries
 * JUnit and AssertJ types, so a plugin's tests read them through this module.
 */
module io.kvtier.tck
{
    requires transitive io.kvtier.spi;
    requires transitive org.junit.jupiter.api;
    requires transitive org.assertj.core;

    // AbstractStorageTierContractTest and its helpers: every plugin's contract test (ours and third parties').
    exports io.kvtier.tck;
    // JUnit discovers and runs the kit's test methods by reflection.
    opens io.kvtier.tck to org.junit.platform.commons;
}
