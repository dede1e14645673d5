/**
 * What the Java side needs to run kvtier's Python package ({@code clients/python}) in processes of its own: which
 * python3 to start. {@code kvtier demo --engine} and {@code kvtier bench adapters} (cli) and the engine's adapter
 * tests start the same interpreter.
 */
package io.kvtier.client.python;
