"""What Python does with a value: its item at a key, what iterating it yields, what `with` binds, what a target of
any shape (tuples, lists, starred, nested, a `with`'s `as`) binds when the value is assigned or looped over. What a
library object gives is asked of the library models (`ask`, defined on `Evaluation`)."""

from __future__ import annotations

from typing import Any

from bertlint.facts.abstract import UNANSWERED, Abstract, Binding, Instance, Pack, Record, Series, Unfinished, agree, is_index
from bertlint.facts.nodes import ENTER, UNKNOWN


class Protocol:
    """The value protocol of Python on abstract values (mixed into `Evaluation`)."""

    def item_of(self, value: Any, key: Any) -> Any:
        """`value[key]`: a constant's element, a Pack's, or what the library model of an object says."""
        if value is UNKNOWN or key is UNKNOWN and not isinstance(value, (Binding, Instance)):
            return UNKNOWN  # an object's item at an unknown key: what its library model says (a batch's any column)
        if isinstance(key, slice):
            if isinstance(value, Pack):
                return Pack(value.items[key])
            if isinstance(value, Series):
                return value  # some of the elements, each holding the same
            if isinstance(value, Abstract):
                found = self.ask("item", self, value, key)  # `texts[i : i + bs]`, `ds["input_ids"][:8]`
                return UNKNOWN if found is UNANSWERED else found
            return value[key] if isinstance(value, (list, tuple, str)) else UNKNOWN
        if isinstance(value, Pack) and not is_index(key):
            return value.items[key] if isinstance(key, int) and -len(value.items) <= key < len(value.items) else UNKNOWN
        if isinstance(value, Series) and (isinstance(key, int) and not isinstance(key, bool) or is_index(key)):
            return value.element  # a list every element of which holds it (an iterator has no items: the run fails)
        if is_index(key) and isinstance(value, (Pack, list, tuple)):
            return self.elements_of(value)  # some element: what every one holds
        if isinstance(value, Unfinished):
            return value.last if key == -1 else UNKNOWN  # its other elements: nothing is said of them
        if isinstance(value, Record):
            return dict(value.items).get(key, UNKNOWN)
        if isinstance(value, Abstract):
            found = self.ask("item", self, value, key)
            return UNKNOWN if found is UNANSWERED else found
        if isinstance(value, dict):
            return value.get(key, UNKNOWN)
        if isinstance(value, (list, tuple, str)) and isinstance(key, int) and not isinstance(key, bool):
            return value[key]
        return UNKNOWN

    def elements_of(self, value: Any) -> Any:
        """What iterating `value` yields, when every element holds the same."""
        if isinstance(value, Series):
            return value.element
        if isinstance(value, Pack):
            return agree(list(value.items))
        if isinstance(value, (list, tuple, range, str, dict)) and value:
            return agree(list(value))
        if isinstance(value, Abstract):
            found = self.ask("iterate", self, value)
            return UNKNOWN if found is UNANSWERED else found
        return UNKNOWN

    def last_of(self, value: Any) -> Any:
        """The last element iterating `value` yields (a loop's target after the loop), else what every one holds."""
        if isinstance(value, Pack):
            return value.items[-1] if value.items else UNKNOWN
        if isinstance(value, (list, tuple, range, str, dict)):
            return list(value)[-1] if len(value) else UNKNOWN
        return self.elements_of(value)

    def entered(self, value: Any) -> Any:
        """What `with value as target` binds: `nullcontext(x)`'s x; an object a rule asks about is its own context (a
        `GradientTape`); anything else unknown (`__enter__` may return another object)."""
        if isinstance(value, Instance) and value.kind == "context":
            return value.detail
        return value if isinstance(value, Binding) else UNKNOWN

    def unpacking(self, value: Any) -> Any:
        """What a target of several names takes apart when `value` is unpacked: what iterating it gives, in order (not
        its items by index): a dict's keys, a dict display's, and a mapping object's (a `BatchEncoding`, a
        `ModelOutput`, a batch of dicts: every one a str, which and how many not said)."""
        if isinstance(value, dict):
            return tuple(value)
        if isinstance(value, Record):
            return tuple(key for key, _ in value.items)
        if isinstance(value, Abstract) and (self.ask("mapping", value) or self.ask("keys", self, value)):
            return Series(Instance("key", None))  # (`keys`: a DataLoader's batch of dicts, whose keys are known)
        return value

    def unpacked(self, value: Any, path: tuple, iterated: bool) -> Any:
        """The value a target at `path` binds when `value` is assigned (or, `iterated`, looped over)."""
        if iterated:
            value = self.elements_of(value)
        for step in path:
            if step is ENTER:
                value = self.entered(value)
                continue
            value = self.unpacking(value)
            length = len(value.items) if isinstance(value, Pack) else len(value) if isinstance(value, (tuple, list, str)) else None
            if length is not None and not step.fits(length):
                return UNKNOWN  # `a, b = (x, y, z)` raises ValueError: nothing is bound
            value = self.item_of(value, step.key)
            if isinstance(step.key, slice) and isinstance(value, tuple):
                value = list(value)  # a starred target always binds a list
        return value
