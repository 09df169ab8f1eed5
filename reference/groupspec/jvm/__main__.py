"""``python -m groupspec.jvm build``: compile the JVM oracle (ci/setup.d/40-jvm-oracle.sh)."""

from __future__ import annotations

import sys

from groupspec.jvm.build import JvmBuildError, build


def main(argv: list[str]) -> int:
    if argv != ["build"]:
        print("usage: python -m groupspec.jvm build", file=sys.stderr)
        return 2
    try:
        print(f"jvm oracle: {build(fetch=True)}")
    except JvmBuildError as e:
        print(f"error: jvm oracle: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
