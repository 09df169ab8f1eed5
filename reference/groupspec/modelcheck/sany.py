"""SANY, TLA+'s syntactic and semantic analyser (inside the TLC jar): does a module parse?"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from groupspec.modelcheck.install import java_executable, tlc_jar

#: How SANY reports problems (its exit status alone does not tell, in every version).
_ERROR = re.compile(r"\*\*\* ?(Parse |Lexical )?[Ee]rror|Fatal errors|Semantic errors|Unknown operator")


@dataclass(frozen=True)
class ParseResult:
    module: str
    ok: bool
    output: str


def parse_module(directory: Path, module: str) -> ParseResult:
    """Run SANY on ``directory/module.tla`` (and the modules it extends)."""
    with tempfile.TemporaryDirectory(prefix="groupspec-sany-") as tmp:
        proc = subprocess.run(
            [java_executable(), f"-Djava.io.tmpdir={tmp}", "-cp", str(tlc_jar()),
             "tla2sany.SANY", f"{module}.tla"],
            cwd=directory,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
    output = proc.stdout + proc.stderr
    failed = proc.returncode != 0 or bool(_ERROR.search(output))
    return ParseResult(module, not failed, output)
