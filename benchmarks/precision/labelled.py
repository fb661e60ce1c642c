"""Recall on the labels each trigger corpus was given before its first lint (`*_labels.csv`): of the sites labelled
with the bug, how many does a rule of that code find in that file?

    python benchmarks/precision/labelled.py FINDINGS_DIR [--misses]

FINDINGS_DIR holds each corpus's findings as `harness.py --save-findings DIR/SET.json` writes them (every rule on).
A labelled site counts as found when the file has a finding of the label's code: for the rules that report a call
(BL201-BL204: a forward, a tokenizer call) near the label's line where it gives one (within 3 lines), for the rules
that report a run (BL301, BL401, BL501, BL502: one per training run, anchored where the run is configured) anywhere in
the file; as absent when the file is not on disk (a code-index file not read
again). The labels came in three shapes: `path,line,code,has_bug,why`; `path,line,has_bug,why` (the corpus's one
rule, from its recipe's `rule` fields); and BL301's rate tables (`file,...,bl301_bug,...`). Negative labels where a
finding fires are counted too (each one a finding judged wrong, or a label the judging later revised).
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEAR = 3
PER_CALL = frozenset({"BL201", "BL202", "BL203", "BL204"})  # the rules whose finding sits at the labelled call


def _rule(corpus: str) -> str | None:
    recipe = json.loads((HERE / f"{corpus}.json").read_text())
    found = Counter(entry.get("rule") for entry in recipe.get("files", ()) if isinstance(entry, dict))
    return found.most_common(1)[0][0] if found else None


def labels() -> list[dict]:
    rows = []
    for path in sorted(HERE.glob("trigger*_labels.csv")):
        corpus = path.name[: -len("_labels.csv")]
        default = _rule(corpus)
        for row in csv.DictReader(path.open(encoding="utf-8")):
            if "bl301_bug" in row:
                code, file, verdict = "BL301", row["file"], row["bl301_bug"]
            else:
                code, file, verdict = row.get("code") or default, row["path"], row["has_bug"]
            line = (row.get("line") or "").strip()
            rows.append({"corpus": corpus, "code": code, "path": file, "line": int(line) if line.isdigit() else None,
                         "bug": verdict.strip().lower().startswith("yes"), "why": (row.get("why") or row.get("note") or "")})
    return rows


def measure(findings_dir: Path) -> tuple[dict[str, Counter], list[dict]]:
    fired: dict[tuple, list[int]] = defaultdict(list)
    for corpus in {row["corpus"] for row in labels()}:
        saved = findings_dir / f"{corpus}.json"
        for finding in json.loads(saved.read_text()) if saved.exists() else ():
            relative = finding["path"].split(f"/corpus-{corpus}/", 1)[-1]
            fired[(corpus, relative, finding["code"])].append(finding["line"])
    counts: dict[str, Counter] = defaultdict(Counter)
    misses = []
    for row in labels():
        lines = fired.get((row["corpus"], row["path"], row["code"]), [])
        on_disk = Path(f"/work/corpus-{row['corpus']}/{row['path']}").exists()
        if not on_disk:
            counts[row["code"]]["absent"] += 1
        elif row["bug"]:
            near = row["line"] is not None and row["code"] in PER_CALL
            found = any(abs(line - row["line"]) <= NEAR for line in lines) if near else bool(lines)
            counts[row["code"]]["found" if found else "missed"] += 1
            if not found:
                misses.append(row)
        elif lines:
            counts[row["code"]]["fired on a negative label"] += 1
    return counts, misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("findings", type=Path)
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    counts, misses = measure(args.findings)
    columns = ("found", "missed", "absent", "fired on a negative label")
    print("| code | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    for code in sorted(counts):
        print(f"| {code} | " + " | ".join(str(counts[code][c]) for c in columns) + " |")
    print("| all | " + " | ".join(str(sum(c[k] for c in counts.values())) for k in columns) + " |")
    if args.misses:
        for row in misses:
            print(f"{row['corpus']} {row['code']} {row['path']}:{row['line'] or ''}  {row['why'][:140]}")


if __name__ == "__main__":
    main()
