"""``groupspec record``: record a client's group-protocol traffic against any broker.

Runs a TCP proxy on ``--listen`` that forwards to the broker at ``--upstream``; point the
client's bootstrap servers at the proxy. Every byte is forwarded unchanged except the
broker addresses in Metadata, FindCoordinator and DescribeCluster responses, which are
rewritten to the proxy's so that the client's later connections come through it too.
The group APIs' exchanges go to ``--out`` as a trace (format v1, JSON Lines).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from typing import IO, Any

from groupspec.cli.inputs import broker_config_arg, fail, output_file
from groupspec.recorder.proxy import Recorder, parse_address
from groupspec.trace.jsonl import TraceWriter


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "record",
        help="record a client's group-protocol traffic through a proxy, as a trace",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        epilog=(
            "examples:\n"
            "  groupspec broker start --kind kafka --port 9093 &\n"
            "  groupspec record --listen 127.0.0.1:9092 --upstream 127.0.0.1:9093 --out run.jsonl\n"
            "  # then run the client with bootstrap servers 127.0.0.1:9092; Ctrl-C stops recording\n"
            "\n"
            "See docs/recorder.md."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--listen", required=True, metavar="HOST:PORT",
                   help="where the proxy listens (port 0: any free port, printed on start)")
    p.add_argument("--upstream", required=True, metavar="HOST:PORT", help="the broker to forward to")
    p.add_argument("--out", required=True, metavar="FILE", help="trace file to write ('-': stdout)")
    p.add_argument("--advertise", metavar="HOST:PORT",
                   help="address written into rewritten responses (default: the listen address)")
    p.add_argument("--no-rewrite", action="store_true",
                   help="forward Metadata/FindCoordinator responses untouched too")
    p.add_argument("--cluster", metavar="NAME", help="cluster name for the trace header and events")
    p.add_argument("--note", help="free text for the trace header")
    p.add_argument("--broker-config", type=broker_config_arg, action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of the upstream broker, by Kafka's name, written into the trace header "
                        "for the validator (repeatable; the settings it models: groupspec validate --help)")
    p.add_argument("-q", "--quiet", action="store_true", help="no connection log on stderr")
    p.set_defaults(func=run)


async def _record(args: argparse.Namespace, out: IO[str]) -> int:
    listen = parse_address(args.listen)
    upstream = parse_address(args.upstream)
    writer = TraceWriter(
        out,
        source="recorder",
        cluster=args.cluster,
        note=args.note or f"recorded by groupspec record from {args.upstream}",
        broker_config={name: int(value) for name, value in args.broker_config},
    )
    writer.flush()

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    recorder = Recorder(
        upstream,
        writer,
        listen=listen,
        advertise=parse_address(args.advertise) if args.advertise else None,
        rewrite=not args.no_rewrite,
        cluster=args.cluster,
        log=log,
    )
    host, port = await recorder.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # (before the line that says Ctrl-C stops: a Ctrl-C right after it must stop cleanly)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(
        f"recording {host}:{port} -> {upstream[0]}:{upstream[1]} into {args.out}; Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await recorder.close()
    s = recorder.stats
    print(
        f"{s.connections} connections, {s.requests} requests, {s.exchanges} group exchanges, "
        f"{s.decode_errors} decode errors, {s.rewritten} responses rewritten",
        file=sys.stderr,
    )
    return 0


def run(args: argparse.Namespace) -> int:
    for option, value in (("--listen", args.listen), ("--upstream", args.upstream),
                          ("--advertise", args.advertise)):
        if value is None:
            continue
        try:
            parse_address(value)
        except ValueError as e:
            return fail(option, str(e))
    if args.out != "-":
        output_file(args.out, "--out")
    with contextlib.ExitStack() as stack:
        try:
            out: IO[str] = (
                sys.stdout if args.out == "-"
                else stack.enter_context(open(args.out, "w", encoding="utf-8"))
            )
        except OSError as e:
            return fail("--out", f"cannot write {args.out}: {e.strerror or e}")
        try:
            return asyncio.run(_record(args, out))
        except OSError as e:  # the listen address cannot be bound (in use, not local)
            return fail("--listen", f"cannot listen on {args.listen}: {e.strerror or e}")
