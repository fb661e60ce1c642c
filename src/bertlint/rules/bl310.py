"""BL310: the DataLoader that feeds a training loop walks its map-style dataset in the same order every epoch (a loop
that never runs, after a certain stop, trains nothing: no finding; one in a module's function that importers may
call runs)."""

from __future__ import annotations

from bertlint.facts import NEVER, Call, Facts, iterated_loader, liveness
from bertlint.rules import Context, Replacement, Rule

ORDERING = ("sampler", "batch_sampler", "shuffle")


class TrainingLoaderNotShuffled(Rule):
    code = "BL310"
    name = "training-loader-not-shuffled"
    severity = "warning"
    summary = "The DataLoader of a map-style dataset that feeds a training loop has no `shuffle=True` and no sampler"
    help = "pass `shuffle=True` to the training DataLoader (or a sampler: `RandomSampler`, `DistributedSampler`, a length-bucketing sampler that shuffles its buckets)"
    fix = "unsafe"
    fix_title = "shuffle the training batches (`shuffle=True`)"
    needs = ("torch",)

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        seen: set[int] = set()
        for loop in facts.training_loops:
            loader = iterated_loader(facts, loop.node) if loop.backward and liveness(facts).reach(loop.node) < NEVER else None
            if loader is None or id(loader.node) in seen or not _unshuffled_map_style(facts, loader):
                continue
            seen.add(id(loader.node))
            flag = loader.kwargs.get("shuffle")
            fix = [Replacement(flag.value, "True")] if flag is not None else [Replacement(loader.node.args[-1], ", shuffle=True", after=True)]
            ctx.report(
                flag or loader.node,
                "this DataLoader feeds the training loop without `shuffle=True` or a sampler: every epoch sees the examples in "
                "the same order (often sorted by label or source), so batches are not representative and the model fits "
                "the order",
                fix=fix,
            )


def _unshuffled_map_style(facts: Facts, loader: Call) -> bool:
    """No shuffle (absent or a literal False), no sampler, and a dataset known to be map-style. A loader built in one
    branch of an `if`/`try` is left alone: another branch may build the one that runs (a synthetic-data branch beside
    the real one)."""
    if loader.conditional or loader.has_double_star or loader.has_star_args or any(k in loader.kwargs for k in ORDERING[:2]) or len(loader.positional) > 2:
        return False  # DataLoader(dataset, batch_size, shuffle, sampler, ...): a third positional is `shuffle`
    if "shuffle" in loader.kwargs and facts.kw_value(loader, "shuffle", cli=False) is not False:
        return False
    dataset = loader.arg(0, "dataset")
    found = facts.kind(dataset.value, loader.scope, loader.order) if dataset is not None else None
    return found is not None and found.kind == "dataset"

