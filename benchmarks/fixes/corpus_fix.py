"""Apply every safe fix to a copy of a corpus and check what it did.

    python benchmarks/fixes/corpus_fix.py /work/corpus /work/corpus-community

Each corpus is copied to a scratch folder (the corpus itself is never touched) and linted as the precision harness
lints it (`--isolated --no-cache --preview --select BL`, every rule on), then `--fix` runs there with the same
options, and the copy is linted again. Printed per corpus, and written as JSON with `--out`:
- the fixes applied per code: safe-fixable findings before, less those left after;
- the changed files, and how many of them still compile (a script as a whole, unless it did not compile before
  either; a notebook cell by cell, each cell that compiled before);
- new findings: (path, code, message) after that were not there before (lines move, so they are not compared);
- safe fixes left: findings that still offer a safe fix after `--fix` (it should converge in one run).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
OPTIONS = ["--isolated", "--no-cache", "--preview", "--select", "BL", "--exit-zero"]


def bertlint(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "bertlint", "check", *OPTIONS, *args], capture_output=True, text=True, env=env)


def findings(folder: Path) -> list[dict]:
    done = bertlint("--format", "json", str(folder))
    if done.returncode:
        raise SystemExit(f"bertlint failed on {folder}: {done.stderr[-2000:]}")
    found = json.loads(done.stdout)
    for f in found:
        f["path"] = str(Path(f["path"]).resolve().relative_to(folder.resolve()))
    return found


def compiles(path: Path, before: Path) -> bool:
    """A script compiles, or did not compile before either (under this interpreter: a 3.12 f-string, a repeated
    keyword); a notebook's code cells that compiled before still do (magics never did)."""
    if path.suffix != ".ipynb":
        return _compiles(path.read_bytes()) or not _compiles(before.read_bytes())
    try:
        cells = [_cell_source(c) for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c.get("cell_type") == "code"]
        old = [_cell_source(c) for c in json.loads(before.read_text(encoding="utf-8"))["cells"] if c.get("cell_type") == "code"]
    except (ValueError, KeyError):
        return False
    return len(cells) == len(old) and all(_compiles(new) or not _compiles(was) for new, was in zip(cells, old))


def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _compiles(text: str | bytes) -> bool:
    try:
        compile(text, "<source>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def run(corpus: Path, scratch: Path) -> dict:
    copy = scratch / corpus.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(corpus, copy, symlinks=True)
    before = findings(copy)
    fixed = bertlint("--fix", str(copy))
    if fixed.returncode:
        raise SystemExit(f"bertlint --fix failed on {copy}: {fixed.stderr[-2000:]}")
    after = findings(copy)
    safe = lambda found: Counter(f["code"] for f in found if (f.get("fix") or {}).get("applicability") == "safe")  # noqa: E731
    safe_before, safe_after = safe(before), safe(after)
    applied = {code: safe_before[code] - safe_after[code] for code in sorted(safe_before)}
    changed = sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file() and not p.is_symlink()
                     and (corpus / p.relative_to(copy)).read_bytes() != p.read_bytes())
    broken = [p for p in changed if not compiles(copy / p, corpus / p)]
    uncompiled = [p for p in changed if p.endswith(".py") and not _compiles((corpus / p).read_bytes())]
    key = lambda f: (f["path"], f["code"], f["message"])  # noqa: E731
    new = Counter(map(key, after)) - Counter(map(key, before))
    return {
        "corpus": str(corpus), "findings_before": len(before), "findings_after": len(after),
        "fixes_applied": applied, "changed_files": len(changed), "changed_files_compiling": len(changed) - len(broken),
        "not_compiling": broken, "not_compiling_before_either": uncompiled, "new_findings": sorted(map(list, new.elements())),
        "safe_fixes_left": dict(safe_after),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "bertlint-fix-corpus")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results = [run(corpus, args.scratch) for corpus in args.corpora]
    for r in results:
        print(f"{r['corpus']}: {r['findings_before']} findings -> {r['findings_after']}; fixes applied "
              + ", ".join(f"{c} {n}" for c, n in r["fixes_applied"].items())
              + f"; {r['changed_files_compiling']} of {r['changed_files']} changed files compile; "
              f"{len(r['new_findings'])} new findings; safe fixes left {r['safe_fixes_left'] or 0}")
        for item in r["new_findings"] + r["not_compiling"]:
            print("   ", item)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
