package io.kvtier.tck;
