"""This checkout as a user gets it: the code blocks of its README.md (so that tests run what the
README prints), and a copy of its files."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from conftest import ROOT

FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def readme_block(after: str, lang: str) -> str:
    """The first `lang` code block of README.md after the first occurrence of the text `after`."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for match in FENCE.finditer(text, text.index(after)):
        if match.group("lang") == lang:
            return match.group("body")
    raise LookupError(f"no {lang} block after {after!r} in README.md")


def copy_checkout(dest: Path) -> Path:
    """The files of this checkout as they are on disk (uncommitted and untracked ones included, those
    git ignores not), copied to `dest`: what a clone of the working tree would hold."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True, text=True).stdout
    for name in listed.split("\0"):
        source = ROOT / name
        if name and source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest
