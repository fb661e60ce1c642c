"""Compare the probe verdicts two runs of the verify tests wrote (tests/conftest.py's record_verdicts): one on the
machine's own CPU kernels, one on ATEN_CPU_CAPABILITY=default. Exit 1, naming each difference, unless they agree."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def verdicts(folder: Path) -> dict[tuple, set[str]]:
    """(file name, line, code, from a cached checkpoint) -> the statuses seen."""
    out: dict[tuple, set[str]] = {}
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            name, row, code, status, cached = json.loads(line)
            out.setdefault((name, row, code, cached), set()).add(status)
    return out


def main(native: str, reference: str) -> int:
    mine, theirs = verdicts(Path(native)), verdicts(Path(reference))
    if not mine or not theirs:
        print(f"ci: no probe verdicts recorded ({len(mine)} native, {len(theirs)} reference)", file=sys.stderr)
        return 1
    differ = sorted(key for key in mine.keys() | theirs.keys() if mine.get(key) != theirs.get(key))
    for key in differ:
        print(f"ci: {key[0]}:{key[1]} {key[2]}: {sorted(mine.get(key, []))} on this CPU's kernels, "
              f"{sorted(theirs.get(key, []))} on ATEN_CPU_CAPABILITY=default", file=sys.stderr)
    print(f"ci: {len(mine)} probe verdicts, {len(differ)} differ between the CPU kernels")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
