"""Rebuild a precision corpus from fetched git snapshots, as its recipe names them.

Two corpora (`CORPORA`): `official`, the libraries' own examples and course notebooks (recipe.json,
default /work/corpus), and `community`, fine-tuning scripts and notebooks written by individual
users (community.json, default /work/corpus-community). Each has its own judgments file.

Each repository of the recipe must be present as a git directory (what a `git clone --mirror`
or the session's `fetch` gives: `MIRRORS/owner+name/repo`, or its `.git` when it is a clone with a work tree); its files at the recipe's
commit whose path matches one of the recipe's globs (and none of its `exclude` globs) and ends in
.py or .ipynb are extracted under
`CORPUS/owner+name/`. Nothing is downloaded here, and no file of those repositories is committed to
bertlint: only the recipe (repository, commit, globs) is.

    python benchmarks/precision/corpus.py [--set official|community] [--mirrors /work/.mirror] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class Corpus:
    """One measured corpus: its recipe, where it is rebuilt by default, and its judgments."""

    name: str
    recipe: Path
    folder: Path
    judgments: Path

    def load_recipe(self) -> dict:
        return json.loads(self.recipe.read_text(encoding="utf-8"))


CORPORA = {c.name: c for c in (
    Corpus("official", HERE / "recipe.json", Path("/work/corpus"), HERE / "judgments.csv"),
    Corpus("community", HERE / "community.json", Path("/work/corpus-community"), HERE / "community_judgments.csv"),
)}


def selected(git_dir: Path, commit: str, globs: list[str], exclude: list[str] = ()) -> list[str]:
    """The recipe's files of one repository at `commit`."""
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit],
                             check=True, capture_output=True, text=True).stdout.splitlines()
    return [p for p in listing if p.endswith(SUFFIXES) and any(fnmatch.fnmatch(p, g) for g in globs)
            and not any(fnmatch.fnmatch(p, g) for g in exclude)]


def rebuild(recipe: dict, mirrors: Path, corpus: Path) -> dict[str, int]:
    """Extract every repository's selected files under `corpus` (removing the folders of repositories
    the recipe no longer names); the count per repository. A file
    whose content the snapshot lacks (snapshots leave out files of 4 MiB and more) is skipped, and said."""
    counts = {}
    kept = {entry["repo"].replace("/", "+") for entry in recipe["repos"]}
    for left in corpus.glob("*+*"):  # a repository the recipe dropped
        if left.is_dir() and left.name not in kept:
            shutil.rmtree(left)
    for entry in recipe["repos"]:
        name = entry["repo"].replace("/", "+")
        git_dir = mirrors / name / "repo"
        if (git_dir / ".git").is_dir():  # some snapshots come as a clone with a work tree
            git_dir = git_dir / ".git"
        if not git_dir.is_dir():
            raise SystemExit(f"{entry['repo']}: no snapshot at {git_dir} (fetch it, or pass --mirrors)")
        target = corpus / name
        shutil.rmtree(target, ignore_errors=True)
        counts[entry["repo"]] = 0
        for path in selected(git_dir, entry["commit"], entry["paths"], entry.get("exclude", [])):
            blob = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{entry['commit']}:{path}"], capture_output=True)
            if blob.returncode != 0:
                print(f"skipped {entry['repo']}/{path}: not in the snapshot")
                continue
            (target / path).parent.mkdir(parents=True, exist_ok=True)
            (target / path).write_bytes(blob.stdout)
            counts[entry["repo"]] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(CORPORA), default="official", help="which corpus (default official)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="folder holding owner+name/repo git directories")
    parser.add_argument("--corpus", type=Path, help="where the files go (default: the set's folder)")
    args = parser.parse_args()
    chosen = CORPORA[args.set]
    recipe = chosen.load_recipe()
    target = args.corpus or chosen.folder
    counts = rebuild(recipe, args.mirrors, target)
    for repo, count in counts.items():
        print(f"{count:5d}  {repo}")
    print(f"{sum(counts.values()):5d}  files under {target} (recipe {recipe['id']})")


if __name__ == "__main__":
    main()
