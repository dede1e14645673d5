package io.kvtier.admin.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import io.kvtier.engine.operations.EvictRequest;
import io.kvtier.engine.operations.MarkRequest;
import io.kvtier.engine.operations.MigrateRequest;
import io.kvtier.engine.operations.MigrationMethod;
import io.kvtier.engine.operations.Retention;
import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.PageKey;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeSet;

/**
 * The admin API's JSON: one strict mapper (unknown fields, duplicate fields, trailing data and coercions
 * between strings, numbers and booleans refused), and the checks that turn a bound body into an engine
 * request. Every refusal is a {@link RequestException} (400) naming the field as the body spells it, with
 * an index for an array's element ({@code keys[2]}).
 */
public final class Json
{
    /** The default {@code limit} of a sampling migration or a coldest-first eviction. */
    public static final int DEFAULT_LIMIT = 1000;

    private static final ObjectMapper MAPPER = JsonMapper.builder()
        .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .withCoercionConfig(LogicalType.Textual, config -> config
            .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
        .withCoercionConfig(LogicalType.Boolean, config -> config.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail))
        .build();

    private Json()
    {
    }

    /**
     * @param value an answer record
     * @return it as JSON
     */
    public static byte[] write(final Object value)
    {
        try
        {
            return MAPPER.writeValueAsBytes(value);
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalStateException("cannot write " + value.getClass().getSimpleName() + " as JSON", ex);
        }
    }

    /**
     * Binds a body, refusing what is not a JSON object of the type's fields with their types.
     *
     * @param body the request's body
     * @param type the body's record
     * @param <T>  its type
     * @return the bound body
     * @throws RequestException (400) naming the field that was wrong
     */
    public static <T> T read(final byte[] body, final Class<T> type)
    {
        final JsonNode tree = tree(body);
        if (!tree.isObject())
        {
            throw new RequestException(400, null, "the request body must be a JSON object, got " + shape(tree));
        }
        try
        {
            return MAPPER.treeToValue(tree, type);
        }
        catch (final UnrecognizedPropertyException ex)
        {
            final String field = path(ex.getPath());
            final Collection<Object> known = ex.getKnownPropertyIds() == null ? List.of() : ex.getKnownPropertyIds();
            throw new RequestException(400, field, "unknown field " + Namespaces.quoted(field) + "; the fields are "
                + String.join(", ", new TreeSet<>(known.stream().map(String::valueOf).toList())));
        }
        catch (final MismatchedInputException ex)
        {
            final String field = path(ex.getPath());
            throw new RequestException(400, field, field + ": expected " + expected(ex.getTargetType()) + ", got " + shape(at(tree, ex.getPath())));
        }
        catch (final JsonProcessingException ex)
        {
            // A number out of range of its field's type is the parser's error, not the binding's: the parser knows where it was.
            final String field = ex instanceof JsonMappingException mapping ? path(mapping.getPath())
                : ex.getProcessor() instanceof JsonParser parser ? path(parser.getParsingContext()) : "";
            throw new RequestException(400, field.isEmpty() ? null : field, (field.isEmpty() ? "" : field + ": ") + ex.getOriginalMessage());
        }
    }

    private static JsonNode tree(final byte[] body)
    {
        try
        {
            final JsonNode tree = MAPPER.readTree(body);
            if (tree == null || tree.isMissingNode())
            {
                throw new RequestException(400, null, "the request body is empty: expected a JSON object (docs/admin-api.md)");
            }
            return tree;
        }
        catch (final StreamReadException ex)
        {
            // A field named twice is the one syntax error that belongs to a field.
            final String message = ex.getOriginalMessage();
            final String field = message != null && message.startsWith("Duplicate field") && ex.getProcessor() != null
                ? path(ex.getProcessor().getParsingContext()) : "";
            // A nested field is named by its path, which the parser's message (the bare name) does not give.
            throw new RequestException(400, field.isEmpty() ? null : field, (field.isEmpty() ? "" : field + ": ") + "malformed JSON"
                + (ex.getLocation() == null ? "" : " at line " + ex.getLocation().getLineNr() + ", column " + ex.getLocation().getColumnNr())
                + ": " + message);
        }
        catch (final IOException ex)
        {
            throw new RequestException(400, null, "malformed JSON: " + ex.getMessage());
        }
    }

    /**
     * @param body a bound {@code POST /v1/migrate} body
     * @return the engine's request
     * @throws RequestException (400) naming the field that was wrong
     */
    public static MigrateRequest migrate(final Bodies.Migrate body)
    {
        final String source = required(body.source(), "source");
        final String target = required(body.target(), "target");
        final List<PageKey> keys = keys(body.keys());
        if (!keys.isEmpty())
        {
            samplingOnly("namespace", body.namespace());
            samplingOnly("min_age", body.minAge());
            samplingOnly("fraction", body.fraction());
        }
        final long namespace = body.namespace() == null ? 0 : Namespaces.tag(body.namespace(), "namespace");
        final Duration minAge = body.minAge() == null ? Duration.ZERO : duration(body.minAge(), "min_age", false);
        final double fraction = body.fraction() == null ? 1.0 : body.fraction();
        if (!(fraction > 0 && fraction <= 1))
        {
            throw new RequestException(400, "fraction", "fraction: expected a number above 0 and at most 1, got " + fraction);
        }
        final int limit = limit(body.limit(), keys);
        final MigrationMethod method;
        try
        {
            method = body.method() == null ? MigrationMethod.COPY : MigrationMethod.parse(body.method());
        }
        catch (final IllegalArgumentException ex)
        {
            throw new RequestException(400, "method", "method: " + ex.getMessage() + ", got " + Namespaces.quoted(body.method()));
        }
        final Retention retention;
        try
        {
            retention = body.retention() == null ? Retention.MOVE : Retention.parse(body.retention());
        }
        catch (final IllegalArgumentException ex)
        {
            throw new RequestException(400, "retention", "retention: " + ex.getMessage() + ", got " + Namespaces.quoted(body.retention()));
        }
        return new MigrateRequest(source, target, keys, namespace, minAge, fraction, limit, method, retention, Boolean.TRUE.equals(body.dryRun()));
    }

    /**
     * @param body a bound {@code POST /v1/evict} body
     * @return the engine's request
     * @throws RequestException (400) naming the field that was wrong
     */
    public static EvictRequest evict(final Bodies.Evict body)
    {
        final String tier = required(body.tier(), "tier");
        final List<PageKey> keys = keys(body.keys());
        if (!keys.isEmpty())
        {
            samplingOnly("namespace", body.namespace());
        }
        final long namespace = body.namespace() == null ? 0 : Namespaces.tag(body.namespace(), "namespace");
        return new EvictRequest(tier, keys, namespace, limit(body.limit(), keys), Boolean.TRUE.equals(body.dryRun()));
    }

    /**
     * @param body a bound {@code POST /v1/marks} body
     * @return the engine's request
     * @throws RequestException (400) naming the field that was wrong
     */
    public static MarkRequest mark(final Bodies.Mark body)
    {
        final String tier = required(body.tier(), "tier");
        final List<PageKey> keys = keys(body.keys());
        if (keys.isEmpty() == (body.namespace() == null))
        {
            throw new RequestException(400, keys.isEmpty() ? "keys" : "namespace",
                "a mark names either pages (keys) or a whole namespace (namespace): give exactly one of them");
        }
        final long namespace = body.namespace() == null ? 0 : Namespaces.tag(body.namespace(), "namespace");
        final Duration ttl = duration(required(body.ttl(), "ttl"), "ttl", true);
        return new MarkRequest(tier, keys, namespace, ttl);
    }

    /**
     * @param text  a path segment naming a migration or a mark
     * @param field what it names, for the error
     * @return the id
     * @throws RequestException (400) when it is not a whole number from 0 in ASCII digits
     */
    public static long id(final String text, final String field)
    {
        // ASCII digits only: Long.parseLong also takes a sign ("+7", "-0") and other scripts' digits ("\u0667" is 7).
        if (!text.isEmpty() && text.chars().allMatch(c -> c >= '0' && c <= '9'))
        {
            try
            {
                return Long.parseLong(text);
            }
            catch (final NumberFormatException ex)
            {
                // beyond a long: refused below
            }
        }
        throw new RequestException(400, field, field + ": expected a whole number from 0, got " + Namespaces.quoted(text));
    }

    private static String required(final String value, final String field)
    {
        if (value == null || value.isBlank())
        {
            throw new RequestException(400, field, "missing field " + field);
        }
        return value;
    }

    private static void samplingOnly(final String field, final Object value)
    {
        if (value != null)
        {
            throw new RequestException(400, field, field + " belongs to the sampling rule and cannot be given with explicit keys");
        }
    }

    private static List<PageKey> keys(final List<String> texts)
    {
        if (texts == null)
        {
            return List.of();
        }
        final List<PageKey> keys = new ArrayList<>(texts.size());
        for (int i = 0; i < texts.size(); i++)
        {
            final String text = texts.get(i);
            try
            {
                // Hex digits only: PageKey.fromHex parses with Long.parseUnsignedLong, which also takes a leading '+'.
                if (text == null || !text.chars().allMatch(HexFormat::isHexDigit))
                {
                    throw new IllegalArgumentException("not hex");
                }
                keys.add(PageKey.fromHex(text));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new RequestException(400, "keys[" + i + "]", "keys[" + i + "]: expected a page key of " + PageKey.HEX_LENGTH
                    + " hex digits, got " + Namespaces.quoted(text));
            }
        }
        return keys;
    }

    private static int limit(final Integer limit, final List<PageKey> keys)
    {
        if (limit == null)
        {
            return keys.isEmpty() ? DEFAULT_LIMIT : keys.size();
        }
        if (limit < 1)
        {
            throw new RequestException(400, "limit", "limit: expected a whole number of at least 1, got " + limit);
        }
        return limit;
    }

    private static Duration duration(final String text, final String field, final boolean positive)
    {
        final Duration duration;
        try
        {
            duration = ConfigValues.parseDuration(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new RequestException(400, field, field + ": expected " + ConfigValues.DURATION_SYNTAX + ", got " + Namespaces.quoted(text));
        }
        if (positive ? duration.isNegative() || duration.isZero() : duration.isNegative())
        {
            throw new RequestException(400, field, field + ": expected a duration " + (positive ? "above zero" : "of zero or more")
                + ", got " + Namespaces.quoted(text));
        }
        return duration;
    }

    private static String expected(final Class<?> type)
    {
        if (type == null)
        {
            return "another type";
        }
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class)
        {
            return "a whole number";
        }
        if (type == Double.class || type == double.class)
        {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class)
        {
            return "true or false";
        }
        if (type == String.class)
        {
            return "a string";
        }
        if (List.class.isAssignableFrom(type))
        {
            return "an array of strings";
        }
        return "a JSON object";
    }

    private static JsonNode at(final JsonNode tree, final List<JsonMappingException.Reference> references)
    {
        JsonNode node = tree;
        for (final JsonMappingException.Reference reference : references)
        {
            node = reference.getFieldName() != null ? node.path(reference.getFieldName()) : node.path(reference.getIndex());
        }
        return node;
    }

    private static String shape(final JsonNode node)
    {
        return switch (node.getNodeType())
        {
            case OBJECT, POJO -> "an object";
            case ARRAY -> "an array";
            case STRING, BINARY -> "a string";
            case NUMBER -> node.isIntegralNumber() ? "a whole number" : "a fractional number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            case MISSING -> "nothing";
        };
    }

    private static String path(final List<JsonMappingException.Reference> references)
    {
        final StringBuilder path = new StringBuilder();
        for (final JsonMappingException.Reference reference : references)
        {
            if (reference.getFieldName() != null)
            {
                path.append(path.isEmpty() ? "" : ".").append(reference.getFieldName());
            }
            else if (reference.getIndex() >= 0)
            {
                path.append('[').append(reference.getIndex()).append(']');
            }
        }
        return path.toString();
    }

    private static String path(final JsonStreamContext context)
    {
        final List<String> parts = new ArrayList<>();
        for (JsonStreamContext at = context; at != null && !at.inRoot(); at = at.getParent())
        {
            if (at.inArray())
            {
                parts.addFirst("[" + Math.max(0, at.getCurrentIndex()) + "]");
            }
            else if (at.getCurrentName() != null)
            {
                parts.addFirst((at.getParent() != null && at.getParent().inRoot() ? "" : ".") + at.getCurrentName());
            }
        }
        return String.join("", parts);
    }
}
