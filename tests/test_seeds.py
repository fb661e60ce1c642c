"""The real-world reports the rules come from (`../shared/seeds/*.txt`): every ```python block, as it is
published, is kept in `tests/seed_blocks/NNN_K.txt` (seed NNN, block K) and linted; its findings must be
exactly those listed here (target transformers 5.23). Where the seeds are checked out beside the repo, the
kept blocks are compared with them."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, lint_text

SEEDS = ROOT.parent / "shared" / "seeds"
KEPT = ROOT / "tests" / "seed_blocks"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)

# (seed id prefix, block index) -> [(line, column, code)]; a block not listed must stay silent.
EXPECTED = {
    ("001", 0): [(20, 40, "BL106"), (33, 5, "BL601"), (36, 11, "BL401"), (36, 11, "BL402")],
    ("001", 1): [(21, 40, "BL106"), (40, 5, "BL601"), (45, 9, "BL603"), (54, 11, "BL402")],
    ("002", 0): [(19, 13, "BL503"), (19, 44, "BL203")],
    ("002", 2): [(13, 21, "BL605")],
    ("003", 0): [(9, 15, "BL503")],
    ("003", 1): [(10, 15, "BL503")],
    ("004", 0): [(16, 9, "BL302")],
    ("004", 2): [(14, 35, "BL403")],
}
BLOCKS = {(path.stem[:3], int(path.stem[4:])): path.read_text(encoding="utf-8") for path in sorted(KEPT.glob("*.txt"))}


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents (../shared/seeds) are not beside this checkout")
def test_kept_blocks_are_the_published_ones():
    published = {(path.name[:3], i): code for path in sorted(SEEDS.glob("*.txt")) for i, code in enumerate(BLOCK.findall(path.read_text(encoding="utf-8")))}
    assert BLOCKS == published


def _findings(seed: str, index: int) -> list:
    return lint_text(BLOCKS[seed, index], ROOT / "tests" / f"_seed_{seed}_{index}.py")


@pytest.mark.parametrize(("seed", "index"), sorted(BLOCKS), ids=[f"{s}-{i}" for s, i in sorted(BLOCKS)])
def test_seed_block(seed, index):
    assert [(f.line, f.column, f.code) for f in _findings(seed, index)] == EXPECTED.get((seed, index), [])


def test_every_expected_block_exists():
    assert len(BLOCKS) == 15 and set(EXPECTED) <= set(BLOCKS)


def test_seed_001_imbalanced_80_20_data_is_reported_with_its_counts():
    """The report's own diagnosis: 80% positive, 20% negative, no mitigation (its fix, class weights, is block 1)."""
    [finding] = [f for f in _findings("001", 0) if f.code == "BL401"]
    assert "1: 800" in finding.message and "0: 200" in finding.message and "4.0:1" in finding.message
    assert finding.source_line.startswith("trainer = Trainer(")
    assert not [f for f in _findings("001", 1) if f.code == "BL401"]


def test_seed_001_learning_rate_is_inside_the_distilbert_range():
    """The report blames 1e-5 for a stall; for DistilBERT with AdamW it is inside 5e-6..1e-4, so BL301 stays silent."""
    assert not [f for f in _findings("001", 0) if f.code == "BL301"]
