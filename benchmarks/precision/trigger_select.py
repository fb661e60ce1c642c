"""Pick trigger-corpus files out of fetched repository snapshots by the syntax the rules examine.

    python benchmarks/precision/trigger_select.py OWNER/NAME ... [--mirrors /work/.mirror] > picks.json

For every repository (a snapshot `fetch` brought to MIRRORS/owner+name/repo), every `.py`/`.ipynb`
file of its newest commit is searched for each rule's trigger pattern (`TRIGGERS`, a regular
expression over the file's text: the syntax the rule looks at, never whether bertlint fires); the
files with the most rules triggered are taken, at most `PER_REPO` a repository, library code left
out. Prints the recipe entries (repo, commit, path, query, rule); `corpus.py --set trigger
--extract` then writes them under the corpus folder and adds them to trigger.json.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import PER_REPO, git_dir_of  # noqa: E402  (the corpus.py beside this file)

# rule -> the syntax it examines (searched in the file's text; a notebook's JSON text as it is)
TRIGGERS = {
    "BL201": r"pad_sequences?\(|TensorDataset\(|model\(\s*b?_?input_ids\b|\.generate\(\s*input_ids",
    "BL301": r"\blr\s*=\s*[0-9][0-9.e-]*|learning_rate\s*=\s*[0-9][0-9.e-]*|--lr\b|--learning_rate",
    "BL401": r"CrossEntropyLoss\(|value_counts\(",
    "BL203": r"text_target\s*=|as_target_tokenizer|\[\s*[\"']labels[\"']\s*\]\s*=|labels\s*=\s*tokenizer\(",
    "BL204": r"num_labels\s*=",
    "data": r"read_csv\(|read_table\(|read_json\(|read_parquet\(|load_dataset\(\s*[\"'](?:csv|json|parquet)[\"']",
    "BL501": r"TrainingArguments\(|SFTConfig\(|\.backward\(",
    "BL101": r"pad_to_max_length",
    "BL104": r"max_length\s*=\s*(?:5[1-9][3-9]|[6-9]\d\d|\d{4,})\b",
    "BL303": r"\.backward\(\)",
}
LIBRARY = re.compile(r"(^|/)(site-packages|transformers|peft|trl|apex|accelerate|venv|\.venv|env|node_modules|third_party|vendor)/"
                     r"|Copyright 20\d\d The HuggingFace|Copyright \(c\) Meta Platforms|The Google AI Language Team|Licensed under the Apache License")


TRAINS = r"Trainer\(|\.backward\(|\.fit\(|\.train\(\)"
MAX_CHARS = 10_000


def code_of(path: str, text: str) -> str:
    """A notebook's code cells (its outputs and Markdown do not count against MAX_CHARS); a script's text."""
    if not path.endswith(".ipynb"):
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return text
    return "\n".join("".join(c.get("source", [])) if isinstance(c.get("source"), list) else str(c.get("source", ""))
                     for c in cells if isinstance(c, dict) and c.get("cell_type") == "code")


FRAMEWORKS = ("transformers", "torch")  # a file is taken only if its text names one of these (`--frameworks`)


def picks(repo: str, mirrors: Path, rules: list[str] | None = None, training: bool = False, names: str | None = None,
          without: str | None = None, max_chars: int = MAX_CHARS, frameworks: tuple[str, ...] = FRAMEWORKS) -> list[dict]:
    """Up to PER_REPO files of `repo` that name one of `frameworks` and trigger the most of `rules` (default: every
    rule); with `training`, only files of `max_chars` or less that train; with `names`, only files naming a checkpoint
    that matches it in a quoted string; with `without`, only files whose text does not match it."""
    git_dir = git_dir_of(mirrors, repo)
    commit = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit],
                             check=True, capture_output=True, text=True).stdout.splitlines()
    scored = []
    for path in listing:
        if not path.endswith((".py", ".ipynb")) or path.startswith(".") or "/." in path:
            continue
        text = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True).stdout.decode("utf-8", "replace")
        if LIBRARY.search(path) or LIBRARY.search(text[:3000]) or not any(name in text for name in frameworks):
            continue
        if training and (len(code_of(path, text)) > max_chars or not re.search(TRAINS, text)):
            continue
        if names and not re.search(rf"[\"'](?:[\w./-]*/)?(?:{names})\\?[\"']", text) or without and re.search(without, text):
            continue
        hit = [rule for rule, pattern in TRIGGERS.items() if (rules is None or rule in rules) and re.search(pattern, text)]
        if hit:
            scored.append((-len(hit), path, hit))
    return [{"repo": repo, "commit": commit, "path": path, "rule": rules[0], "query": " | ".join(rules)}
            for _, path, rules in sorted(scored)[:PER_REPO]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--rules", help="comma-separated: only these rules' triggers (default all)")
    parser.add_argument("--training", action="store_true", help=f"only files of {MAX_CHARS:,} characters or less that train")
    parser.add_argument("--names", help="only files naming a checkpoint that matches this regular expression in a quoted string")
    parser.add_argument("--without", help="only files whose text does not match this regular expression")
    parser.add_argument("--max-chars", type=int, default=MAX_CHARS, help=f"with --training: the most characters of code a file may have (default {MAX_CHARS:,})")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS),
                        help="comma-separated: a file must name one of these (default transformers,torch; BL401 also reads keras runs: add tensorflow,keras)")
    args = parser.parse_args()
    rules = args.rules.split(",") if args.rules else None
    frameworks = tuple(args.frameworks.split(","))
    print(json.dumps([entry for repo in args.repos for entry in picks(repo, args.mirrors, rules, args.training, args.names, args.without, args.max_chars, frameworks)], indent=1))


if __name__ == "__main__":
    main()
