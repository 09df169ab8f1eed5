package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The groupspec JVM oracle: runs Apache Kafka's own classes (from the real jars) on inputs
 * sent by the Python side, one JSON request per line on stdin, one JSON answer per line on
 * stdout: {"tool": NAME, "input": {...}} -> {"ok": true, "output": ...} or
 * {"ok": false, "error": "..."}. One process serves many requests, so a property test
 * pays the JVM start once.
 */
public final class Main {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, Tool> TOOLS = new HashMap<>();

    private Main() {
    }

    private static Tool tool(String name) throws ReflectiveOperationException {
        Tool found = TOOLS.get(name);
        if (found == null) {
            if (!name.matches("[A-Z][A-Za-z0-9]*")) {
                throw new IllegalArgumentException("bad tool name: " + name);
            }
            Class<?> cls = Class.forName("groupspec.oracle." + name);
            found = (Tool) cls.getDeclaredConstructor().newInstance();
            TOOLS.put(name, found);
        }
        return found;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        // Answers own stdout; anything else printing there (Kafka's loggers, whose default
        // console appender writes to System.out) goes to stderr instead.
        PrintWriter out = new PrintWriter(System.out, false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer = JSON.createObjectNode();
            try {
                JsonNode request = JSON.readTree(line);
                JsonNode output = tool(request.path("tool").asText()).run(request.path("input"));
                answer.put("ok", true);
                answer.set("output", output);
            } catch (Throwable e) {
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                answer.put("ok", false);
                answer.put("error", e.toString());
                answer.put("trace", trace.toString());
            }
            out.println(JSON.writeValueAsString(answer));
            out.flush();
        }
    }
}
