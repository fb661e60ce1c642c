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
    "BL501": r"TrainingArguments\(|SFTConfig\(|\.backward\(",
    "BL101": r"pad_to_max_length",
    "BL104": r"max_length\s*=\s*(?:5[1-9][3-9]|[6-9]\d\d|\d{4,})\b",
    "BL303": r"\.backward\(\)",
}
LIBRARY = re.compile(r"(^|/)(site-packages|transformers|peft|trl|apex|accelerate|venv|\.venv|env|node_modules|third_party|vendor)/"
                     r"|Copyright 20\d\d The HuggingFace|Copyright \(c\) Meta Platforms|The Google AI Language Team|Licensed under the Apache License")


def picks(repo: str, mirrors: Path) -> list[dict]:
    git_dir = git_dir_of(mirrors, repo)
    commit = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit],
                             check=True, capture_output=True, text=True).stdout.splitlines()
    scored = []
    for path in listing:
        if not path.endswith((".py", ".ipynb")) or path.startswith(".") or "/." in path:
            continue
        text = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True).stdout.decode("utf-8", "replace")
        if LIBRARY.search(path) or LIBRARY.search(text[:3000]) or "transformers" not in text and "torch" not in text:
            continue
        rules = [rule for rule, pattern in TRIGGERS.items() if re.search(pattern, text)]
        if rules:
            scored.append((-len(rules), path, rules))
    return [{"repo": repo, "commit": commit, "path": path, "rule": rules[0], "query": " | ".join(rules)}
            for _, path, rules in sorted(scored)[:PER_REPO]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    print(json.dumps([entry for repo in args.repos for entry in picks(repo, args.mirrors)], indent=1))


if __name__ == "__main__":
    main()
