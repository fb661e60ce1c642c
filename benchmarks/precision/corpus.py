"""Rebuild a precision corpus from fetched git snapshots, as its recipe names them.

The corpora (`CORPORA`): `official`, the libraries' own examples and course notebooks (recipe.json,
default /work/corpus), `community`, fine-tuning scripts and notebooks written by individual
users (community.json, default /work/corpus-community), and the *trigger* corpora: one per recipe
`trigger.json` / `trigger_*.json` beside this file, named by the recipe's stem (corpus
/work/corpus-STEM, judgments STEM_judgments.csv). Each has its own judgments file.

A trigger recipe lists single files found by the syntax a rule examines: `{"id": RECIPE_ID, "files":
[ENTRY, ...]}`, an entry `{"query", "rule", "name", "sha256"}` plus either `"id"` (a code-index id,
`repo`/`path` where the index named them: read whole with `read_file`, saved as NAME, by default
`ID.py`/`ID.ipynb`) or `"repo", "commit", "path"` (a file of a fetched snapshot, found by
trigger_select.py or the code search; `--extract` writes those, with the repository's pin files and the data files
the script names by their path from its folder, listed as the entry's `"data"`).
Ids cannot be fetched from here, so `--set trigger` checks the folder against the recipe (missing
files, files whose text differs from `sha256` where given, files the recipe does not name).

Each repository of the recipe must be present as a git directory (what a `git clone --mirror`
or the session's `fetch` gives: `MIRRORS/owner+name/repo`, or its `.git` when it is a clone with a work tree); its files at the recipe's
commit whose path matches one of the recipe's globs (and none of its `exclude` globs) and ends in
.py or .ipynb are extracted under
`CORPUS/owner+name/`, with the repository's pin files (`PIN_FILES`) in the folders from each file's own up to the
repository's root, so that bertlint targets the releases the file runs on there (stop 28: a blind audit found 7 of 45
findings of the official and community corpora wrong only because the corpus had left out a pin the repository has). Nothing is downloaded here, and no file of those repositories is committed to
bertlint: only the recipe (repository, commit, globs) is.

    python benchmarks/precision/corpus.py [--set official|community] [--mirrors /work/.mirror] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import re
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

    @property
    def trigger(self) -> bool:
        """A trigger corpus: single files read from the code index, not repositories at a commit."""
        return self.name == "trigger" or self.name.startswith("trigger_")


def recipe_repos(recipe: dict) -> list[str]:
    """The repositories a recipe draws on: its `repos` in order, or a trigger recipe's known ones, sorted."""
    if "repos" in recipe:
        return [r["repo"] for r in recipe["repos"]]
    return sorted({f["repo"] for f in recipe.get("files", []) if f.get("repo")})


def trigger_corpora(folder: Path = HERE) -> list[Corpus]:
    """One corpus per trigger recipe (`trigger.json`, `trigger_*.json`), named by its stem."""
    recipes = sorted(folder.glob("trigger*.json"), key=lambda p: (p.stem != "trigger", p.stem))
    return [Corpus(p.stem, p, Path(f"/work/corpus-{p.stem}"), folder / f"{p.stem}_judgments.csv")
            for p in recipes if p.stem == "trigger" or p.stem.startswith("trigger_")]


CORPORA = {c.name: c for c in (
    Corpus("official", HERE / "recipe.json", Path("/work/corpus"), HERE / "judgments.csv"),
    Corpus("community", HERE / "community.json", Path("/work/corpus-community"), HERE / "community_judgments.csv"),
    *trigger_corpora(),
)}


def check_trigger(recipe: dict, corpus: Path) -> list[str]:
    """What is wrong with a trigger corpus folder against its recipe (empty: it is whole)."""
    problems, named = [], set()
    for entry in recipe["files"]:
        name = entry.get("name") or next((f"{entry['id']}{s}" for s in SUFFIXES if (corpus / f"{entry['id']}{s}").is_file()), f"{entry['id']}.py")
        file = corpus / name
        named.add(name)
        source = f"{entry['repo']}/{entry['path']} at {entry['commit']}" if "commit" in entry else f"read_file id {entry.get('id')}"
        if not file.is_file():
            problems.append(f"missing {name} ({source}, sought for {entry['rule']})")
        elif "sha256" in entry and hashlib.sha256(file.read_bytes()).hexdigest() != entry["sha256"]:
            problems.append(f"{name}: its text differs from the one judged ({source})")
        problems += [f"missing {data} (the data {name} loads)" for data in entry.get("data", [])
                     if not (corpus / entry["repo"].replace("/", "+") / data).is_file()]
    extra = sorted(rel for p in corpus.rglob("*") if p.suffix in SUFFIXES
                   and (rel := p.relative_to(corpus).as_posix()) not in named) if corpus.is_dir() else []
    return problems + [f"{name}: not in the recipe" for name in extra]


PER_REPO = 3  # files a trigger corpus takes from one repository at most


def add_trigger(recipe: dict, corpus: Path, name: str, entry: dict) -> str | None:
    """Add the file `corpus/name` to a trigger recipe (`entry`: id, query, rule, repo and path where
    known); None, or why it is refused: a text already taken (the index holds copies under several
    ids), or a repository that already gave PER_REPO files."""
    digest = hashlib.sha256((corpus / name).read_bytes()).hexdigest()
    files = recipe.setdefault("files", [])
    if any(f["sha256"] == digest for f in files):
        return "the same text is already in the corpus"
    if entry.get("repo") and sum(f.get("repo") == entry["repo"] for f in files) >= PER_REPO:
        return f"{entry['repo']} already gave {PER_REPO} files"
    files.append({**entry, "name": name, "sha256": digest})
    return None


def git_dir_of(mirrors: Path, repo: str) -> Path:
    """The git directory of `repo`'s snapshot under `mirrors` (some snapshots come as a clone with a work tree)."""
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    if (git_dir / ".git").is_dir():
        git_dir = git_dir / ".git"
    if not git_dir.is_dir():
        raise SystemExit(f"{repo}: no snapshot at {git_dir} (fetch it, or pass --mirrors)")
    return git_dir


def extract_trigger(entries: list[dict], recipe: dict, mirrors: Path, corpus: Path) -> list[str]:
    """Write the snapshot files `entries` name (repo, commit, path: trigger_select.py's picks) under
    `corpus` as owner+name/path and add them to the trigger recipe; what was refused, and why."""
    refused = []
    for entry in entries:
        git_dir = git_dir_of(mirrors, entry["repo"])
        blob = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{entry['commit']}:{entry['path']}"], capture_output=True)
        if blob.returncode != 0:
            refused.append(f"{entry['repo']}/{entry['path']}: not in the snapshot")
            continue
        name = f"{entry['repo'].replace('/', '+')}/{entry['path']}"
        if any(f["name"] == name for f in recipe.get("files", [])):
            continue
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_bytes(blob.stdout)
        why = add_trigger(recipe, corpus, name, entry)
        if why:
            (corpus / name).unlink()
            refused.append(f"{name}: {why}")
            continue
        pins = project_files(git_dir, entry["commit"], entry["path"])
        for pin, text in pins.items():  # the repository's pins, so that bertlint targets what the file runs on
            (corpus / entry["repo"].replace("/", "+") / pin).write_bytes(text)
        if pins:
            recipe["files"][-1]["pins"] = sorted(pins)
        data = data_files(git_dir, entry["commit"], entry["path"], blob.stdout.decode("utf-8", "replace"))
        for path, text in data.items():  # the data the script loads, so that BL401/BL204 read what it trains on
            (corpus / entry["repo"].replace("/", "+") / path).parent.mkdir(parents=True, exist_ok=True)
            (corpus / entry["repo"].replace("/", "+") / path).write_bytes(text)
        if data:
            recipe["files"][-1]["data"] = sorted(data)
    return refused


DATA_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".parquet")
MAX_DATA_BYTES = 64 * 2**20  # what bertlint's datafiles.py reads at most


def data_files(git_dir: Path, commit: str, path: str, text: str) -> dict[str, bytes]:
    """The repository's data files (CSV/TSV/JSON/JSONL/Parquet) at or below `path`'s folder that the script names by
    their path from that folder (`"train.csv"`, `'data/train.csv'`, `"./data/train.csv"`; in a notebook's JSON text also
    `\\"train.csv\\"`; from Colab's working directory, `"/content/train.csv"`), by their path in the repository.
    Files the snapshot lacks (4 MiB and more) are left out."""
    folder = Path(path).parent
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-l", commit, *([f"{folder}/"] if str(folder) != "." else [])],
                             capture_output=True, text=True).stdout.splitlines()
    found = {}
    for line in listing:
        meta, _, name = line.partition("\t")
        size = meta.split()[-1]
        if not name.endswith(DATA_SUFFIXES) or not size.isdigit() or int(size) > MAX_DATA_BYTES:
            continue
        relative = Path(name).relative_to(folder).as_posix()
        if not re.search(rf"[\"'](\./|/content/)?{re.escape(relative)}\\?[\"']", text):  # a notebook's JSON escapes `"` as `\"`; Colab runs in /content
            continue
        blob = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{name}"], capture_output=True)
        if blob.returncode == 0 and len(blob.stdout) == int(size):
            found[name] = blob.stdout
    return found


PIN_FILES = re.compile(r"requirements[^/]*\.txt|pyproject\.toml|setup\.cfg|environment\.ya?ml|Pipfile(\.lock)?|poetry\.lock|uv\.lock")


def project_files(git_dir: Path, commit: str, path: str) -> dict[str, bytes]:
    """The files that pin library releases (what bertlint's target stage reads) in the folders from
    `path`'s own up to the repository's root, by their path in the repository."""
    folders = {str(Path(path).parent)} | {str(parent) for parent in Path(path).parents}
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "--name-only", commit, *[f"{f}/" for f in folders if f != "."]],
                             capture_output=True, text=True).stdout.splitlines()
    listing += subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "--name-only", commit],
                              capture_output=True, text=True).stdout.splitlines()
    return {name: subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{name}"], capture_output=True).stdout
            for name in sorted(set(listing)) if PIN_FILES.fullmatch(Path(name).name)}


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
        git_dir = git_dir_of(mirrors, entry["repo"])
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
            for pin, text in project_files(git_dir, entry["commit"], path).items():  # what the file runs on
                (target / pin).parent.mkdir(parents=True, exist_ok=True)
                (target / pin).write_bytes(text)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(CORPORA), default="official", help="which corpus (default official)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="folder holding owner+name/repo git directories")
    parser.add_argument("--corpus", type=Path, help="where the files go (default: the set's folder)")
    parser.add_argument("--extract", type=Path, metavar="PICKS", help="trigger sets: write the snapshot files PICKS (trigger_select.py's json) names and add them to the recipe")
    parser.add_argument("--add", metavar="NAME", help="trigger sets: add CORPUS/NAME (read with read_file) to the recipe")
    parser.add_argument("--id", help="with --add: the file's index id")
    parser.add_argument("--query", help="with --add: the find_string/search text that found it")
    parser.add_argument("--rule", help="with --add: the rule it was sought for")
    parser.add_argument("--repo", help="with --add: its repository, where the index named it")
    parser.add_argument("--path", help="with --add: its path in the repository, where known")
    args = parser.parse_args()
    chosen = CORPORA[args.set]
    recipe = chosen.load_recipe()
    target = args.corpus or chosen.folder
    if chosen.trigger and args.extract:
        refused = extract_trigger(json.loads(args.extract.read_text(encoding="utf-8")), recipe, args.mirrors, target)
        chosen.recipe.write_text(json.dumps(recipe, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print("\n".join(refused) or "all taken")
        raise SystemExit(0)
    if chosen.trigger and args.add:
        entry = {"id": args.id, "query": args.query, "rule": args.rule}
        entry.update({key: value for key, value in (("repo", args.repo), ("path", args.path)) if value})
        refused = add_trigger(recipe, target, args.add, entry)
        if refused:
            raise SystemExit(f"{args.add} not added: {refused}")
        chosen.recipe.write_text(json.dumps(recipe, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        raise SystemExit(0)
    if chosen.trigger:
        problems = check_trigger(recipe, target)
        print("\n".join(problems) or f"{len(recipe['files'])} files under {target}, as recipe {recipe['id']} names them")
        raise SystemExit(1 if problems else 0)
    counts = rebuild(recipe, args.mirrors, target)
    for repo, count in counts.items():
        print(f"{count:5d}  {repo}")
    print(f"{sum(counts.values()):5d}  files under {target} (recipe {recipe['id']})")


if __name__ == "__main__":
    main()
