"""Draw the blind audit sample of stop 27 (issue 22, "Judge strictly"): how far our own judgments can be trusted.

    python benchmarks/precision/audit_sample.py > /tmp/audit_s27_sample.csv          # the sample, verdicts hidden
    python benchmarks/precision/audit_sample.py --messages > /tmp/audit_s27_blind.txt  # plus a fresh lint's message
    python benchmarks/precision/audit_sample.py --compare audit_s27.csv                # afterwards: agreement with the judgments

The second audit (after stop 27's mechanisms: BL401 on, BL201/BL203 off) drew with
    python benchmarks/precision/audit_sample.py --seed 28 --total 60 --measured BL101,BL401 --exclude audit_s27.csv --messages

The third (stop 28, the default set = the exact rules only) drew with
    python benchmarks/precision/audit_sample.py --seed 29 --total 180 --exclude audit_s27.csv --exclude audit_s27b.csv

The fourth (stop 29, the default set = the exact rules and BL401; only the corpora rebuilt on that machine) drew with
    python benchmarks/precision/audit_sample.py --seed 30 --total 60 --set official --set community \
        --set trigger_evidence_r --set trigger_evidence_w --set trigger_evidence_x \
        --exclude audit_s27.csv --exclude audit_s27b.csv --exclude audit_s28a.csv --exclude audit_s28b.csv \
        --exclude audit_s28c.csv --exclude audit_s28d.csv --messages

The sixth (stop 31, BL101 at the bar after every corpus was linted again) drew with
    python benchmarks/precision/audit_sample.py --seed 32 --total 40 --measured BL101 --exclude audit_s27.csv \
        --exclude audit_s27b.csv --exclude audit_s28a.csv --exclude audit_s28b.csv --exclude audit_s28c.csv \
        --exclude audit_s28d.csv --exclude audit_s29.csv --exclude audit_s30.csv --messages

The population: every judged row (verdict right or wrong) of every `*judgments.csv` beside this file
whose code is on by default (`bertlint rules --format json`: `"preview": false`). Strata: each
default rule that is measured rather than exact (`precision.json`'s `exact` empty: BL101, BL201, BL203
at stop 27) gives `PER_MEASURED` rows drawn uniformly; the rest of the `TOTAL` rows are drawn
uniformly from the pooled rows of the exact (API-drift and parser) rules. Rows are put in a fixed
order (set, path, cell, line, code) before drawing, and one `random.Random(SEED)` draws the strata
in code order, so the sample is the same on every run of the same judgments. The named extra (`EXTRA`)
is left out of the population and listed after the 80.

Nothing printed shows a verdict or a reason: the auditor judges from the file and the fresh finding.
`--messages` lints each sampled file with this checkout's bertlint (every rule on, `--isolated`) and
prints the finding of the row's code nearest the row's line, with its help. `--compare AUDIT` (only after
the audit's verdicts are written) prints the agreement of AUDIT's verdicts with the judgments files, per code,
and every row where they differ with both reasons.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from corpus import CORPORA  # noqa: E402

SEED = 27
TOTAL = 80
PER_MEASURED = 15
EXTRA = [("trigger_evidence_d", "BL201", "960758653.py")]
FIELDS = ("code", "path", "cell", "line", "set")


def bertlint(*args: str, cwd: Path | None = None) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.run([sys.executable, "-m", "bertlint", *args], capture_output=True, text=True, env=env, cwd=cwd).stdout


def default_codes() -> tuple[set[str], set[str]]:
    """(measured default codes, exact default codes)."""
    rules = json.loads(bertlint("rules", "--format", "json"))
    exact = json.loads((REPO / "src" / "bertlint" / "data" / "precision.json").read_text())["rules"]
    on = {r["code"] for r in rules if not r["preview"]}
    measured = {c for c in on if not exact.get(c, {}).get("exact")}
    return measured, on - measured


def population(codes: set[str], sets: set[str] | None = None) -> list[dict]:
    """The judged rows of `codes`, of every corpus or of the corpora named in `sets`."""
    rows = []
    for corpus in CORPORA.values():
        if not corpus.judgments.exists() or (sets is not None and corpus.name not in sets):
            continue
        with corpus.judgments.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                if row["code"] in codes and row["verdict"].strip():
                    rows.append({"code": row["code"], "path": row["path"], "cell": row["cell"], "line": row["line"],
                                 "set": corpus.name})
    rows.sort(key=lambda r: (r["set"], r["path"], int(r["cell"] or 0), int(r["line"]), r["code"]))
    return rows


def draw(seed: int = SEED, total: int = TOTAL, measured_codes: set[str] | None = None,
         exclude: list[dict] = (), sets: set[str] | None = None) -> tuple[list[dict], list[dict]]:
    """The sample and the named extras; `measured_codes` overrides the measured default rules, `exclude` drops rows,
    `sets` keeps only those corpora's rows."""
    measured, exact = default_codes()
    if measured_codes is not None:
        measured = measured_codes
    gone = {tuple(r[k] for k in FIELDS) for r in exclude}
    rows = [r for r in population(measured | exact, sets) if tuple(r[k] for k in FIELDS) not in gone]
    extra = [r for r in rows if (r["set"], r["code"], r["path"]) in EXTRA] if seed == SEED else []
    rows = [r for r in rows if r not in extra]
    rng = random.Random(seed)
    sample = []
    for code in sorted(measured):
        stratum = [r for r in rows if r["code"] == code]
        sample += rng.sample(stratum, min(PER_MEASURED, len(stratum)))
    sample += rng.sample([r for r in rows if r["code"] in exact], total - len(sample))
    return sample, extra


def fresh_finding(row: dict) -> str:
    """The finding of the row's code nearest its line, from a fresh lint of the file in its corpus, run from the
    corpus folder so that the project root, and so the pins found, are the harness's (stop 29: run from elsewhere,
    the root was the file's own folder and a repository's requirements.txt above it went unseen)."""
    folder = CORPORA[row["set"]].folder
    raw = json.loads(bertlint("check", "--format", "json", "--no-cache", "--isolated", "--preview", "--select", "BL",
                              "--exit-zero", str(folder / row["path"]), cwd=folder) or "[]")
    cell = int(row["cell"]) if row["cell"] else None
    hits = [f for f in raw if f["code"] == row["code"] and f.get("cell") == cell]
    if not hits:
        return "  (no finding of this code in a fresh lint)"
    f = min(hits, key=lambda f: abs(f["line"] - int(row["line"])))
    keys = [k for k in ("help", "fix", "url") if f.get(k)]
    extra = "".join(f"\n  {k}: {f[k] if not isinstance(f[k], dict) else json.dumps(f[k])[:300]}" for k in keys)
    return f"  fresh {f['line']}:{f['column']} {f['message']}{extra}"


def judgment_of(row: dict) -> dict:
    """The judgments-file row the sampled row was drawn from."""
    with CORPORA[row["set"]].judgments.open(newline="", encoding="utf-8") as handle:
        return next(j for j in csv.DictReader(handle)
                    if all(j[k] == row[k] for k in ("code", "path", "cell", "line")))


def compare(audit: Path) -> None:
    with audit.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    agree: dict[str, list[int]] = {}
    for row in rows:
        ours = judgment_of(row)
        same = ours["verdict"] == row["verdict"]
        agree.setdefault(row["code"], []).append(same)
        if not same:
            print(f"DIFFER {row['code']} {row['set']} {row['path']}{':' + row['cell'] if row['cell'] else ''}:{row['line']}\n"
                  f"  judgments: {ours['verdict']}: {ours['reason']}\n  audit:     {row['verdict']}: {row['reason']}")
    for code, marks in sorted(agree.items()):
        print(f"{code}: {sum(marks)}/{len(marks)} agree")
    total = [m for marks in agree.values() for m in marks]
    print(f"all: {sum(total)}/{len(total)} agree")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", action="store_true", help="lint each sampled file and print the finding")
    parser.add_argument("--compare", type=Path, help="the audit's verdicts (beside this file): print the agreement")
    parser.add_argument("--seed", type=int, default=SEED, help="the draw's seed (the named extra only with 27)")
    parser.add_argument("--total", type=int, default=TOTAL, help="rows in all strata together")
    parser.add_argument("--measured", help="comma-separated measured default rules (default: from precision.json)")
    parser.add_argument("--exclude", type=Path, action="append", default=[],
                        help="an earlier audit's csv (beside this file): its rows are not drawn; repeatable")
    parser.add_argument("--set", dest="sets", action="append", choices=sorted(CORPORA),
                        help="draw only from this corpus's judged rows; repeatable (default: every corpus)")
    args = parser.parse_args(argv)
    if args.compare:
        compare(args.compare if args.compare.is_absolute() else HERE / args.compare)
        return 0
    exclude = []
    for path in args.exclude:
        with (path if path.is_absolute() else HERE / path).open(newline="", encoding="utf-8") as f:
            exclude.extend(csv.DictReader(f))
    measured = set(args.measured.split(",")) if args.measured else None
    sample, extra = draw(args.seed, args.total, measured, exclude, set(args.sets) if args.sets else None)
    rows = [*sample, *extra]
    if not args.messages:
        writer = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return 0
    for n, row in enumerate(rows, start=1):
        name = "extra" if n > len(sample) else n
        print(f"[{name}] {row['code']} {row['set']} {CORPORA[row['set']].folder / row['path']}"
              f"{' cell ' + row['cell'] if row['cell'] else ''} line {row['line']}")
        print(fresh_finding(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
