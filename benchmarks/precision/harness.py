"""Measure bertlint's precision on a corpus of real scripts and notebooks, against judgments made by hand.

    python benchmarks/precision/harness.py                       # lint /work/corpus, write the review table, print precision
    python benchmarks/precision/harness.py --set community       # the same for the community corpus (/work/corpus-community)
    python benchmarks/precision/harness.py --findings F.json     # reuse a previous lint's findings (no re-lint)
    python benchmarks/precision/harness.py --add-pending         # append the unjudged findings to the judgments file, verdict empty
    python benchmarks/precision/harness.py --write               # also write src/bertlint/data/precision.json
    python benchmarks/precision/harness.py --set trigger_evidence_b --partial   # a corpus only partly on disk

The lint is bertlint's own entry point (`python -m bertlint --format json --no-cache --isolated
--preview --select BL`, every rule on) run with this checkout's `src/` first on the path. The
review table (Markdown, default `CORPUS/review.md`, outside the repository: it quotes the corpus)
shows each finding with its code, place, message, verdict if judged, and the source around it.

The judgments file (`judgments.csv`: code, path, cell, line, source, verdict, reason) holds one
verdict per finding: `right` (the finding points at a real problem a user would want to know about,
as its message states it) or `wrong` (with the reason). `source` is a short hash of the finding's
line, stripped, so that no corpus code is committed. A judgment matches a finding by code, path and
that hash (the nearest line when several do), so it survives lines moving; failing that, by code,
path, cell and line (the line's text changed). Findings no judgment matches are *unjudged*; judgments
no finding matches are *stale* (the rule stopped firing there, or the corpus changed): both are listed.

There are several corpora, each with its recipe and judgments file (corpus.py's `CORPORA`): `official`
(the libraries' own examples, judgments.csv), `community` (users' fine-tuning code,
community_judgments.csv) and the trigger corpora (files found by the syntax a rule examines:
`trigger.json` and every `trigger_*.json`, each with `STEM_judgments.csv` and /work/corpus-STEM); `--set` picks one. precision.json keeps each corpus's figures per code and
their sum: `--write` replaces the linted corpus's figures and keeps the other's, so after a rule
change run it once per corpus.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from corpus import CORPORA, recipe_repos  # noqa: E402  (the corpus.py beside this file)

PRECISION_JSON = REPO / "src" / "bertlint" / "data" / "precision.json"
FIELDS = ("code", "path", "cell", "line", "source", "verdict", "reason")
VERDICTS = ("right", "wrong")
CONTEXT = 4  # lines shown either side of a finding in the review table


@dataclass
class Finding:
    code: str
    severity: str
    path: str  # relative to the corpus, posix
    cell: int | None
    line: int
    column: int
    message: str
    text: str = ""  # the finding's source line, stripped
    context: list[tuple[int, str]] = field(default_factory=list)

    @property
    def source(self) -> str:
        return source_hash(self.text)

    @property
    def place(self) -> str:
        return f"{self.path}:" + (f"cell {self.cell}:" if self.cell is not None else "") + f"{self.line}:{self.column}"


@dataclass
class Judgment:
    code: str
    path: str
    cell: int | None
    line: int
    source: str
    verdict: str  # "right", "wrong", or "" (not judged yet)
    reason: str
    row: dict = field(default_factory=dict, repr=False)


def source_hash(text: str) -> str:
    """What a judgment keeps of the judged line: a short hash of its stripped text."""
    return hashlib.sha1(text.strip().encode("utf-8")).hexdigest()[:12]


# --------------------------------------------------------------------------- lint


def lint(corpus: Path, jobs: int | None = None) -> list[dict]:
    """Every finding of every rule on `corpus`, through bertlint's command line (json)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "bertlint", "check", "--format", "json", "--no-cache", "--isolated",
               "--preview", "--select", "BL", "--exit-zero", str(corpus)]
    if jobs:
        command[4:4] = ["--jobs", str(jobs)]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SystemExit(f"bertlint failed ({result.returncode}):\n{result.stderr[-3000:]}")
    if result.stderr.strip():
        print(result.stderr.strip(), file=sys.stderr)  # internal errors, unreadable files: worth seeing
    return json.loads(result.stdout or "[]")


def source_lines(file: Path, cell: int | None) -> list[str]:
    """The lines a finding's line numbers count: the file's, or its notebook cell's (1-based among all cells)."""
    text = file.read_text(encoding="utf-8", errors="replace")
    if cell is not None:
        source = json.loads(text)["cells"][cell - 1]["source"]
        text = "".join(source) if isinstance(source, list) else source
    return text.splitlines()


def findings_of(raw: list[dict], corpus: Path) -> list[Finding]:
    out, lines_of = [], {}
    for item in raw:
        file = Path(item["path"])
        rel = Path(os.path.relpath(file, corpus)).as_posix()
        cell = item.get("cell")
        key = (file, cell)
        if key not in lines_of:
            try:
                lines_of[key] = source_lines(file, cell)
            except (OSError, ValueError, KeyError, IndexError):
                lines_of[key] = []
        lines = lines_of[key]
        line = item["line"]
        low, high = max(1, line - CONTEXT), min(len(lines), line + CONTEXT)
        out.append(Finding(
            item["code"], item["severity"], rel, cell, line, item["column"], item["message"],
            lines[line - 1].strip() if 0 < line <= len(lines) else "",
            [(n, lines[n - 1]) for n in range(low, high + 1)],
        ))
    out.sort(key=lambda f: (f.path, f.cell or 0, f.line, f.column, f.code))
    return out


# --------------------------------------------------------------------------- judgments


def read_judgments(path: Path) -> list[Judgment]:
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    out = []
    for number, row in enumerate(rows, start=2):
        verdict = row["verdict"].strip().lower()
        if verdict not in (*VERDICTS, ""):
            raise SystemExit(f"{path}:{number}: verdict {row['verdict']!r}; expected right, wrong or empty")
        if verdict == "wrong" and not row["reason"].strip():
            raise SystemExit(f"{path}:{number}: a wrong verdict needs its reason")
        out.append(Judgment(row["code"], row["path"], int(row["cell"]) if row["cell"] else None, int(row["line"]),
                            row["source"], verdict, row["reason"].strip(), row))
    return out


def write_judgments(path: Path, judgments: list[Judgment]) -> None:
    judgments = sorted(judgments, key=lambda j: (j.path, j.cell or 0, j.line, j.code))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, FIELDS, lineterminator="\n")
        writer.writeheader()
        for j in judgments:
            writer.writerow({"code": j.code, "path": j.path, "cell": "" if j.cell is None else j.cell, "line": j.line,
                             "source": j.source, "verdict": j.verdict, "reason": j.reason})


def match(findings: list[Finding], judgments: list[Judgment]) -> tuple[dict[int, Judgment], list[Judgment]]:
    """Pair findings with judgments one to one: by (code, path, source hash), in order when the
    counts agree (lines that all moved), else nearest place first; then what is left by (code, path,
    cell, line). Returns {finding index: judgment} and the stale judgments."""
    paired: dict[int, Judgment] = {}
    free = set(range(len(judgments)))

    def position(cell, line):
        return (cell or 0) * 100_000 + line

    groups: dict[tuple, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for i, f in enumerate(findings):
        groups[(f.code, f.path, f.source)][0].append(i)
    for j, judgment in enumerate(judgments):
        groups[(judgment.code, judgment.path, judgment.source)][1].append(j)
    for mine, theirs in groups.values():
        mine.sort(key=lambda i: position(findings[i].cell, findings[i].line))
        theirs.sort(key=lambda j: position(judgments[j].cell, judgments[j].line))
        if len(mine) == len(theirs):  # the same lines, perhaps all moved: pair them in order
            pairs = list(zip(mine, theirs))
        else:  # some came or went: nearest first
            pairs = [(i, j) for _, i, j in sorted(
                (abs(position(findings[i].cell, findings[i].line) - position(judgments[j].cell, judgments[j].line)), i, j)
                for i in mine for j in theirs)]
        for i, j in pairs:
            if i not in paired and j in free:
                paired[i] = judgments[j]
                free.discard(j)
    by_line = {(judgments[j].code, judgments[j].path, judgments[j].cell, judgments[j].line): j for j in sorted(free, reverse=True)}
    for i, f in enumerate(findings):
        j = by_line.get((f.code, f.path, f.cell, f.line))
        if i not in paired and j is not None and j in free:
            paired[i] = judgments[j]
            free.discard(j)
    return paired, [judgments[j] for j in sorted(free)]


# --------------------------------------------------------------------------- precision


@dataclass
class Tally:
    judged: int = 0
    right: int = 0
    unjudged: int = 0

    def add(self, verdict: str) -> None:
        if verdict in VERDICTS:
            self.judged += 1
            self.right += verdict == "right"
        else:
            self.unjudged += 1

    @property
    def precision(self) -> float | None:
        return self.right / self.judged if self.judged else None


def tallies(findings: list[Finding], paired: dict[int, Judgment], absent: list[Judgment] = ()) -> tuple[dict[str, Tally], dict[str, Tally]]:
    """Per code, and the groups: all, errors only (the finding's own severity), outside BL6xx. `absent`: judgments of
    files not linted (`--partial`), counted by their verdicts (their severity is not known: in no error group)."""
    per_code: dict[str, Tally] = defaultdict(Tally)
    groups = {"all": Tally(), "errors": Tally(), "outside BL6xx": Tally(), "errors outside BL6xx": Tally()}
    for j in absent:
        per_code[j.code].add(j.verdict)
        groups["all"].add(j.verdict)
        if not j.code.startswith("BL6"):
            groups["outside BL6xx"].add(j.verdict)
    for i, f in enumerate(findings):
        verdict = paired[i].verdict if i in paired else ""
        per_code[f.code].add(verdict)
        groups["all"].add(verdict)
        if f.severity == "error":
            groups["errors"].add(verdict)
        if not f.code.startswith("BL6"):
            groups["outside BL6xx"].add(verdict)
            if f.severity == "error":
                groups["errors outside BL6xx"].add(verdict)
    return dict(sorted(per_code.items())), groups


def _pct(t: Tally) -> str:
    return "-" if t.precision is None else f"{t.precision:.3f}"


def report(per_code: dict[str, Tally], groups: dict[str, Tally], files: int) -> str:
    lines = [f"precision on {files} files", "", "| code | findings | judged | right | precision | unjudged |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for code, t in per_code.items():
        lines.append(f"| {code} | {t.judged + t.unjudged} | {t.judged} | {t.right} | {_pct(t)} | {t.unjudged} |")
    lines.append("")
    for name, t in groups.items():
        lines.append(f"| {name} | {t.judged + t.unjudged} | {t.judged} | {t.right} | {_pct(t)} | {t.unjudged} |")
    return "\n".join(lines)


def review_table(findings: list[Finding], paired: dict[int, Judgment], stale: list[Judgment]) -> str:
    """Markdown: the unjudged findings first, then the judged ones; each with its source around it."""
    judged = {i for i, j in paired.items() if j.verdict}
    order = sorted(range(len(findings)), key=lambda i: (i in judged, findings[i].code, i))
    out = ["# bertlint findings for review", "",
           f"{len(findings)} findings, {len(findings) - len(judged)} unjudged, {len(stale)} stale judgments", ""]
    for i in order:
        f = findings[i]
        j = paired.get(i)
        verdict = f"**{j.verdict or 'unjudged'}**" + (f": {j.reason}" if j.reason else "") if j else "**unjudged**"
        out += [f"## {f.code} {f.severity} `{f.place}` source={f.source}", "", f"{f.message}", "", f"verdict: {verdict}", "", "```python"]
        out += [f"{'>' if n == f.line else ' '}{n:5d}  {text}" for n, text in f.context]
        out += ["```", ""]
    if stale:
        out += ["# stale judgments", ""]
        out += [f"- {j.code} `{j.path}:{'' if j.cell is None else f'cell {j.cell}:'}{j.line}` {j.verdict} {j.reason}" for j in stale]
    return "\n".join(out) + "\n"


def precision_data(previous: dict, name: str, per_code: dict[str, Tally], exact: dict[str, str], recipe: dict,
                   files: int, date: str) -> dict:
    """The package's precision.json: every code (`exact`: code -> why it is exact by construction,
    empty when measured) with its judged findings per corpus and summed over the corpora. Corpus
    `name` gets this measurement (`per_code`, `recipe`, `files`); the other corpora keep what
    `previous` (the current precision.json) says of them."""
    corpora = {key: value for key, value in previous.get("corpora", {}).items() if key in CORPORA and key != name}
    corpora[name] = {"recipe": recipe["id"], "files": files, "date": date, "repos": recipe_repos(recipe)}
    corpora = {key: corpora[key] for key in CORPORA if key in corpora}
    rules = {}
    for code, reason in exact.items():
        old = previous.get("rules", {}).get(code, {}).get("corpora", {})
        t = per_code.get(code, Tally())
        parts = {key: ({"judged": t.judged, "right": t.right} if key == name else old.get(key, {"judged": 0, "right": 0}))
                 for key in corpora}
        judged, right = sum(p["judged"] for p in parts.values()), sum(p["right"] for p in parts.values())
        rules[code] = {"judged": judged, "right": right, "precision": round(right / judged, 4) if judged else None,
                       "exact": reason, "corpora": parts}
    combined = {"recipe": " + ".join(c["recipe"] for c in corpora.values()), "files": sum(c["files"] for c in corpora.values())}
    return {"corpus": combined, "corpora": corpora, "date": max(c["date"] for c in corpora.values()), "rules": rules}


def exact_reasons() -> dict[str, str]:
    """Every code of this checkout, with its rule's `exact` reason."""
    sys.path.insert(0, str(REPO / "src"))
    from bertlint.rules import all_codes, exact_reason

    return {code: exact_reason(code) for code in all_codes()}


def split_absent(judgments: list[Judgment], corpus: Path, partial: bool) -> tuple[list[Judgment], list[Judgment]]:
    """The judgments of files not in `corpus` (only with `--partial`), and the others."""
    on_disk = {path: (corpus / path).is_file() for path in {j.path for j in judgments}} if partial else {}
    return [j for j in judgments if not on_disk.get(j.path, True)], [j for j in judgments if on_disk.get(j.path, True)]


def corpus_files(corpus: Path) -> int:
    return sum(1 for p in corpus.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(CORPORA), default="official", help="which corpus (default official)")
    parser.add_argument("--corpus", type=Path, help="the corpus folder (default: the set's)")
    parser.add_argument("--judgments", type=Path, help="the judgments file (default: the set's)")
    parser.add_argument("--findings", type=Path, help="read the findings from this json (a previous lint) instead of linting")
    parser.add_argument("--save-findings", type=Path, help="also write the raw findings json here")
    parser.add_argument("--table", type=Path, help="where the review table goes (default CORPUS/review.md)")
    parser.add_argument("--add-pending", action="store_true", help="append the unjudged findings to the judgments file, verdict empty")
    parser.add_argument("--drop-stale", action="store_true", help="remove the stale judgments from the judgments file")
    parser.add_argument("--write", action="store_true", help=f"write the figures to {PRECISION_JSON.relative_to(REPO)}")
    parser.add_argument("--partial", action="store_true", help="the folder holds only some of the recipe's files (code-index"
                        " files read again where the session could): judgments of the files not in it keep their verdicts,"
                        " are counted, and are never stale; the figures are those files' last lint and this lint of the rest")
    parser.add_argument("--jobs", type=int)
    args = parser.parse_args(argv)

    chosen = CORPORA[args.set]
    corpus = (args.corpus or chosen.folder).resolve()
    args.judgments = args.judgments or chosen.judgments
    raw = json.loads(args.findings.read_text(encoding="utf-8")) if args.findings else lint(corpus, args.jobs)
    if args.save_findings:
        args.save_findings.write_text(json.dumps(raw), encoding="utf-8")
    findings = findings_of(raw, corpus)
    judgments = read_judgments(args.judgments)
    absent, present = split_absent(judgments, corpus, args.partial)
    paired, stale = match(findings, present)
    if args.add_pending or args.drop_stale:
        kept = [j for j in judgments if not (args.drop_stale and j in stale)]
        pending = [Judgment(f.code, f.path, f.cell, f.line, f.source, "", "") for i, f in enumerate(findings) if i not in paired] if args.add_pending else []
        # A matched judgment whose line moved takes the finding's place and text, so the next match is exact.
        for i, j in paired.items():
            j.line, j.cell, j.source = findings[i].line, findings[i].cell, findings[i].source
        write_judgments(args.judgments, kept + pending)
        judgments = read_judgments(args.judgments)
        absent, present = split_absent(judgments, corpus, args.partial)
        paired, stale = match(findings, present)
    table = args.table or corpus / "review.md"
    table.write_text(review_table(findings, paired, stale), encoding="utf-8")
    per_code, groups = tallies(findings, paired, absent)
    listed = chosen.load_recipe().get("files") if args.partial else None  # a trigger recipe lists its files
    files = len(listed) if listed else corpus_files(corpus)
    print(report(per_code, groups, files))
    if absent:
        print(f"\n{len(absent)} judgments of files not in {corpus} kept with their verdicts (--partial)")
    unjudged = len(findings) - sum(1 for j in paired.values() if j.verdict)
    print(f"\n{len(findings)} findings; {unjudged} unjudged; {len(stale)} stale judgments; review table: {table}")
    if args.write:
        previous = json.loads(PRECISION_JSON.read_text(encoding="utf-8")) if PRECISION_JSON.exists() else {}
        data = precision_data(previous, chosen.name, per_code, exact_reasons(), chosen.load_recipe(), files,
                              datetime.date.today().isoformat())
        PRECISION_JSON.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {PRECISION_JSON.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
