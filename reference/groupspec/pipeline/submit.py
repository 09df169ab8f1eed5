"""Entry point for spark-submit: ``spark-submit [options] submit.py sweep CONFIG --out DIR``.

The arguments are those of ``groupspec pipeline``; the session is the one spark-submit made
(its ``--master``), so ``--master`` is not needed here.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # Run as a script, this file's folder heads sys.path; its modules are not top-level ones.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    from groupspec.cli.main import main

    sys.exit(main(["pipeline", *sys.argv[1:]]))
