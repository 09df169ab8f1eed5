package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.protocol.Errors;

/** Every error of kafka-clients' Errors enum: {} -> {NAME: code, ...}. */
public final class KafkaErrors implements Tool {
    @Override
    public JsonNode run(JsonNode input) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        for (Errors e : Errors.values()) {
            out.put(e.name(), e.code());
        }
        return out;
    }
}
