package groupspec.oracle;

import org.apache.kafka.common.utils.Time;

import java.util.concurrent.TimeUnit;

/** The shard's clock: moves only by {@link #sleep}. */
final class ManualClock implements Time {
    private long now;

    @Override
    public long milliseconds() {
        return now;
    }

    @Override
    public long nanoseconds() {
        return TimeUnit.MILLISECONDS.toNanos(now);
    }

    @Override
    public void sleep(long ms) {
        now += ms;
    }

    @Override
    public void waitObject(Object obj, java.util.function.Supplier<Boolean> condition, long deadlineMs) {
        throw new UnsupportedOperationException("nothing waits on the manual clock");
    }
}
