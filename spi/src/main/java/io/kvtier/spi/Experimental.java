package io.kvtier.spi;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks SPI that may still change incompatibly before the date given by {@link #eta()}.
 * Everything else in this package keeps source and binary compatibility.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.FIELD, ElementType.CONSTRUCTOR})
public @interface Experimental
{
    /** The date, as {@code uuuu-MM-dd}, by which the API is expected to be stable. */
    String eta();
}
