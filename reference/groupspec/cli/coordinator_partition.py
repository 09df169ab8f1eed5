"""``groupspec coordinator-partition GROUP_ID...``: the __consumer_offsets partition of a group."""

from __future__ import annotations

import argparse
from typing import Any

from groupspec.cli.inputs import int_in
from groupspec.coordinator.find_coordinator import (
    OFFSETS_TOPIC_NUM_PARTITIONS,
    coordinator_partition,
    java_string_hash,
)

#: offsets.topic.num.partitions is an int (GroupCoordinatorConfig, a positive INT config)
MAX_OFFSETS_PARTITIONS = 2**31 - 1


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "coordinator-partition",
        help="print the __consumer_offsets partition that coordinates a group, as Kafka computes it",
        description=(
            "Print the __consumer_offsets partition whose leader is the group coordinator of "
            "each GROUP_ID: Utils.abs(groupId.hashCode()) %% offsets.topic.num.partitions."
        ),
    )
    p.add_argument("group_ids", nargs="+", metavar="GROUP_ID")
    p.add_argument(
        "--partitions",
        type=int_in(1, MAX_OFFSETS_PARTITIONS),
        default=OFFSETS_TOPIC_NUM_PARTITIONS,
        help="offsets.topic.num.partitions (default %(default)s)",
    )
    p.add_argument("--verbose", action="store_true", help="also print the Java hash code")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for gid in args.group_ids:
        part = coordinator_partition(gid, args.partitions)
        if args.verbose:
            print(f"{gid}\t{part}\thashCode={java_string_hash(gid)}")
        elif len(args.group_ids) > 1:
            print(f"{gid}\t{part}")
        else:
            print(part)
    return 0
