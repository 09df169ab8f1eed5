package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A tool driving one shard ({@link ManualShardRuntime}): {"action": "reset", ...} makes a
 * fresh one at time 0 (the tool reads the rest of the input), {"action": "op", "op": {...}}
 * runs one step on it.
 */
abstract class ShardTool implements Tool {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ManualShardRuntime state;

    /** A fresh shard for a "reset" input. */
    abstract ManualShardRuntime reset(JsonNode input) throws ReflectiveOperationException;

    @Override
    public final JsonNode run(JsonNode input) throws Exception {
        String action = input.path("action").asText();
        switch (action) {
            case "reset":
                if (state != null) {
                    state.close();
                }
                state = reset(input);
                return JSON.createObjectNode();
            case "op":
                if (state == null) {
                    throw new IllegalStateException("no shard: send a reset first");
                }
                return state.step(input.path("op"));
            default:
                throw new IllegalArgumentException("unknown action: " + action);
        }
    }
}
