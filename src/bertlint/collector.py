"""How often the command line runs the cyclic garbage collector: a module of its own, importing nothing but `gc`, so that
the entry (`bertlint.__main__.run`) sets it before the command line's own imports (click, libcst, the rules) run."""

from __future__ import annotations

import gc

GC_THRESHOLDS = (200_000, 30, 30)  # mypy's (mypy/main.py): a young-generation collection every 200,000 allocations, not 700


def collect_rarely() -> None:
    """Run the cyclic garbage collector rarely: a lint allocates a syntax tree and its facts, hundreds of thousands of
    objects that live until the file is done, and at the default thresholds the collector scans them again and again
    (~20 % of the CPU of a run) to free almost nothing, since they hold few reference cycles. Reference counting still
    frees everything at once. Only for a command-line run: a program that calls `main(args)` keeps its own settings."""
    gc.set_threshold(*GC_THRESHOLDS)
