package io.kvtier.admin.json;

import java.util.HexFormat;

/**
 * Namespaces as the admin API names them: a root (32 hex digits, as {@code kvtier namespace} prints it),
 * whose tag is its first 8 bytes as a big-endian number (1 if those are all zero, docs/keys.md), or the
 * tag itself (16 hex digits, as {@code GET /v1/marks} answers it).
 */
public final class Namespaces
{
    private static final int ROOT_DIGITS = 32;
    private static final int TAG_DIGITS = 16;

    private Namespaces()
    {
    }

    /**
     * @param text  a root or a tag
     * @param field the field it came in, for the error
     * @return the tag, never 0
     * @throws RequestException (400) naming the field when the text is neither
     */
    public static long tag(final String text, final String field)
    {
        if (text == null || (text.length() != ROOT_DIGITS && text.length() != TAG_DIGITS) || !HexFormat.isHexDigit(text.codePointAt(0))
            || !text.chars().allMatch(HexFormat::isHexDigit))
        {
            throw new RequestException(400, field, field + ": expected a namespace root (32 hex digits, as kvtier namespace prints it)"
                + " or its tag (16 hex digits), got " + quoted(text));
        }
        final long high = Long.parseUnsignedLong(text, 0, TAG_DIGITS, 16);
        if (text.length() == TAG_DIGITS && high == 0)
        {
            throw new RequestException(400, field, field + ": a namespace tag is never 0 (0 means no namespace), got " + quoted(text));
        }
        return high == 0 ? 1 : high;
    }

    /**
     * @param tag a namespace tag
     * @return it as 16 lowercase hex digits
     */
    public static String tagText(final long tag)
    {
        return HexFormat.of().toHexDigits(tag);
    }

    static String quoted(final String text)
    {
        return text == null ? "null" : '"' + text + '"';
    }
}
