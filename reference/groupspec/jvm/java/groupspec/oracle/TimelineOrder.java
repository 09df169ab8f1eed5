package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

/**
 * The iteration order of Kafka's TimelineHashMap (server-common) after a sequence of puts
 * and removes, as the consumer group's members map holds them:
 * {"ops": [["put", key] | ["remove", key], ...], "expected": n} -> [key, ...]
 * (the map is created with expected size n; ModernGroup uses 0).
 */
public final class TimelineOrder implements Tool {
    @Override
    public JsonNode run(JsonNode input) {
        SnapshotRegistry registry = new SnapshotRegistry(new LogContext());
        TimelineHashMap<String, Integer> map =
            new TimelineHashMap<>(registry, input.path("expected").asInt(0));
        int n = 0;
        for (JsonNode op : input.path("ops")) {
            String key = op.get(1).asText();
            if ("put".equals(op.get(0).asText())) {
                map.put(key, n++);
            } else {
                map.remove(key);
            }
        }
        ArrayNode result = JsonNodeFactory.instance.arrayNode();
        map.keySet().forEach(result::add);
        return result;
    }
}
