package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One oracle tool: JSON in, JSON out. A tool is found by its simple class name in this
 * package (see {@link Main}), so adding a tool never edits a shared registry.
 */
public interface Tool {
    JsonNode run(JsonNode input) throws Exception;
}
