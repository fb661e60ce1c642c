"""Lists built by appending whose last element is replaced right after, the way Python runs it: `xs.append(ids)` then
`xs[-1] = xs[-1] + [pad_id] * (n - len(xs[-1]))` in the same loop pass. Every pass appends and then replaces what it
appended, so each finished element holds what the last replacement stores, and a read between the two sees the
element appended (or replaced so far) as the list's last.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import Abstract, Series, Unfinished, agree
from bertlint.facts.nodes import UNKNOWN, Event, Scope, walk

# statements that may leave a loop pass (or the code) between an append and the stores that replace its element
_JUMPS = (cst.Continue, cst.Break, cst.Return, cst.Raise, cst.Try, cst.TryStar, cst.Yield, cst.With)


class Appending:
    """The evaluator's lists built empty and then only appended to, each appended element maybe replaced at once."""

    def appended(self, owner: Scope, changes: list[Event], ran: int) -> Any:
        """The list an empty display binds, after `changes` (every change until it is bound anew), of which the first
        `ran` run before the read: a `Series` of what every element ends as, an `Unfinished` when the read falls
        between an append and the last store that replaces its element; UNKNOWN for any other change."""
        groups: list[list[Event]] = []
        for at, event in enumerate(changes):
            if event.op == "append":
                groups.append([event])
            elif event.op == "setitem" and groups and self._replaces_last(groups[-1][0], event, owner):
                groups[-1].append(event)
            elif at < ran:
                return UNKNOWN
            else:
                break  # a change after the read: what the read sees is settled
        done = [g for g in groups if changes.index(g[-1]) < ran]
        cut = [g for g in groups if changes.index(g[0]) < ran <= changes.index(g[-1])]
        if cut:
            so_far = [e for e in cut[0] if changes.index(e) < ran]
            return Unfinished(self._holds(so_far[-1], owner))
        element = agree([self._holds(g[-1], owner) for g in done]) if done else UNKNOWN
        return Series(element) if isinstance(element, Abstract) else UNKNOWN

    def _holds(self, event: Event, owner: Scope) -> Any:
        """What the element holds after `event`: the appended value, or the value a store of the last element stores."""
        if event.op == "append":
            return self.sub(event.value, owner, event.order)
        store = self.f.plain_stores[id(event.value)]
        return self.sub(store.value, store.scope, store.order)

    def _replaces_last(self, append: Event, event: Event, owner: Scope) -> bool:
        """`xs[-1] = v` that runs exactly when the `xs.append(a)` before it runs, right after it in the same pass: in
        the same branch and loops, and no statement of that loop (or scope) may leave the pass or skip the store."""
        store = self.f.plain_stores.get(id(event.value))
        target = store.target if store is not None else None
        if target is None or not isinstance(target.value, cst.Name) or len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            return False
        if self.const_at(target.slice[0].slice.value, store.scope, store.order) != -1 or event.order < append.order:
            return False
        if event.loops != append.loops or event.guards != append.guards or any(g.kind == "other" for g in event.guards):
            return False
        region = event.loops[-1] if event.loops else owner.node
        return region is not None and not any(isinstance(node, _JUMPS) for node in walk(region))
