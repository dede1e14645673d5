package io.kvtier.bench.tier;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A JSON document as one map from dotted paths to scalar values ({@code jobs.0.read.bw_bytes} to
 * {@code "1234"}), so fio's nested report can be read with jackson-core's streaming parser alone.
 * {@code null} values map to {@code null}; empty objects and arrays leave no entry.
 */
public final class FlatJson
{
    private FlatJson()
    {
    }

    /**
     * @param json a JSON document (an object or an array at the top)
     * @return every scalar under its path, in document order
     * @throws IllegalArgumentException if the text is not valid JSON
     */
    public static Map<String, String> flatten(final String json)
    {
        final Map<String, String> values = new LinkedHashMap<>();
        // One frame per open container: its path, and for an array the next element's index (-1 for an object).
        final Deque<String> paths = new ArrayDeque<>();
        final Deque<int[]> indexes = new ArrayDeque<>();
        String field = null;
        try (JsonParser parser = new JsonFactory().createParser(json))
        {
            JsonToken token;
            while ((token = parser.nextToken()) != null)
            {
                switch (token)
                {
                    case FIELD_NAME -> field = parser.currentName();
                    case START_OBJECT, START_ARRAY ->
                    {
                        paths.push(indexes.isEmpty() ? "" : childPath(paths.peek(), indexes.peek(), field));
                        indexes.push(new int[] {token == JsonToken.START_ARRAY ? 0 : -1});
                    }
                    case END_OBJECT, END_ARRAY ->
                    {
                        paths.pop();
                        indexes.pop();
                    }
                    default ->
                    {
                        if (indexes.isEmpty())
                        {
                            throw new IllegalArgumentException("expected a JSON object or array, found a bare " + token);
                        }
                        values.put(childPath(paths.peek(), indexes.peek(), field), token == JsonToken.VALUE_NULL ? null : parser.getText());
                    }
                }
            }
            if (!indexes.isEmpty())
            {
                throw new IllegalArgumentException("the JSON document ends inside an object or array");
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("not valid JSON: " + ex.getMessage(), ex);
        }
        return values;
    }

    private static String childPath(final String parent, final int[] index, final String field)
    {
        final String name = index[0] >= 0 ? Integer.toString(index[0]++) : field;
        return parent.isEmpty() ? name : parent + "." + name;
    }
}
