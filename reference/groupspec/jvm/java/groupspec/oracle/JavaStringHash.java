package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.kafka.common.utils.Utils;

/**
 * Java's String.hashCode and Kafka's coordinator partition for each string:
 * {"strings": [...], "partitions": N} -> [{"hash": h, "partition": p}, ...]
 * (the partition is Utils.abs(hash) % N, as the group coordinator places a group).
 */
public final class JavaStringHash implements Tool {
    @Override
    public JsonNode run(JsonNode input) {
        int partitions = input.path("partitions").asInt(50);
        ArrayNode result = JsonNodeFactory.instance.arrayNode();
        for (JsonNode s : input.path("strings")) {
            int hash = s.asText().hashCode();
            result.addObject().put("hash", hash).put("partition", Utils.abs(hash) % partitions);
        }
        return result;
    }
}
