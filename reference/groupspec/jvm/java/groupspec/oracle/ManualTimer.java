package groupspec.oracle;

import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorTimer;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A timer keyed as the runtime's: scheduling a key again replaces its timer. Nothing fires
 * by itself: the driver advancing the clock takes the due ones out of {@link #byKey} and
 * runs them. */
final class ManualTimer implements CoordinatorTimer<Void, CoordinatorRecord> {
    /** A scheduled timer: what the runtime's EventBasedCoordinatorTimer holds per key. */
    static final class Scheduled {
        final String key;
        final long deadline;
        final long seq;
        final CoordinatorTimer.TimeoutOperation<Void, CoordinatorRecord> op;

        Scheduled(String key, long deadline, long seq, CoordinatorTimer.TimeoutOperation<Void, CoordinatorRecord> op) {
            this.key = key;
            this.deadline = deadline;
            this.seq = seq;
            this.op = op;
        }
    }

    final ManualClock time;
    final Map<String, Scheduled> byKey = new HashMap<>();
    long seq;

    ManualTimer(ManualClock time) {
        this.time = time;
    }

    @Override
    public void schedule(String key, long delay, TimeUnit unit, boolean retry, TimeoutOperation<Void, CoordinatorRecord> operation) {
        byKey.put(key, new Scheduled(key, time.milliseconds() + unit.toMillis(delay), seq++, operation));
    }

    @Override
    public void schedule(String key, long delay, TimeUnit unit, boolean retry, long retryBackoff,
                         TimeoutOperation<Void, CoordinatorRecord> operation) {
        schedule(key, delay, unit, retry, operation);
    }

    @Override
    public void scheduleIfAbsent(String key, long delay, TimeUnit unit, boolean retry,
                                 TimeoutOperation<Void, CoordinatorRecord> operation) {
        if (!byKey.containsKey(key)) {
            schedule(key, delay, unit, retry, operation);
        }
    }

    @Override
    public void cancel(String key) {
        byKey.remove(key);
    }
}
