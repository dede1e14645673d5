/**
 * JMH benchmarks of the engine's steady-state paths, each beside a baseline measured in the same run.
 * Build with {@code ./mvnw -DskipTests package}, run with
 * {@code java --enable-native-access=ALL-UNNAMED -jar bench/target/benchmarks.jar -prof gc}; the
 * figures and exact commands are in {@code docs/PERFORMANCE.md}.
 */
package io.kvtier.bench.jmh;
