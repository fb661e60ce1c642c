"""Recall and precision of bertlint on the scripted corpus in `recall/`.

Each `recall/NAME.py` is a short training script written in the styles real scripts use (helpers, config
objects, Dataset classes, wrappers, notebooks without imports); `recall/NAME.expected` lists the findings a
careful reviewer expects, one `LINE CODE` a line (empty for a clean twin). A finding counts as right when its
line and code are expected; recall = right / expected, precision = right / found.

    python benchmarks/recall.py            # with the bertlint on PYTHONPATH
    python benchmarks/recall.py --show     # also each miss and each unexpected finding
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent / "recall"


def main() -> int:
    show = "--show" in sys.argv
    out = subprocess.run(
        [sys.executable, "-m", "bertlint", "check", "--no-cache", "--isolated", "--select", "BL", "--preview", "--output-format", "json", "--exit-zero", str(HERE)],
        capture_output=True, text=True, check=True,
    ).stdout
    found: dict[str, set[tuple[int, str]]] = {}
    for finding in json.loads(out):
        found.setdefault(Path(finding["path"]).stem, set()).add((finding["line"], finding["code"]))
    right = expected_total = found_total = 0
    for script in sorted(HERE.glob("*.py")):
        lines = script.with_suffix(".expected").read_text().split("\n")
        expected = {(int(line), code) for line, code in (row.split() for row in lines if row.strip())}
        got = found.get(script.stem, set())
        right += len(expected & got)
        expected_total += len(expected)
        found_total += len(got)
        if show:
            for line, code in sorted(expected - got):
                print(f"miss        {script.name}:{line} {code}")
            for line, code in sorted(got - expected):
                print(f"unexpected  {script.name}:{line} {code}")
    print(f"{len(list(HERE.glob('*.py')))} scripts, {expected_total} expected findings, {found_total} found, {right} right")
    print(f"recall {right / expected_total:.2f}  precision {right / found_total if found_total else 1:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
