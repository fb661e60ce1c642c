"""`patterns.Lazy`: a regular expression compiled on its first use, answering as `re.compile` does."""

import re

from bertlint.patterns import Lazy


def test_a_lazy_pattern_answers_as_the_compiled_pattern():
    text = "train.py\nEval.PY\nnotes.txt\n"
    lazy, compiled = Lazy(r"^(\w+)\.py$", re.MULTILINE | re.IGNORECASE), re.compile(r"^(\w+)\.py$", re.MULTILINE | re.IGNORECASE)
    assert lazy.findall(text) == compiled.findall(text) == ["train", "Eval"]
    assert lazy.search(text).span() == compiled.search(text).span()
    assert [m.group(1) for m in lazy.finditer(text)] == ["train", "Eval"]
    assert lazy.sub(r"\1", text) == compiled.sub(r"\1", text)
    assert lazy.fullmatch("a.py") and not lazy.match("a.txt")
    assert lazy.flags == compiled.flags and lazy.groups == 1 and lazy.pattern == compiled.pattern


def test_a_lazy_pattern_is_compiled_on_its_first_use_only(monkeypatch):
    made = []
    compile_ = re.compile
    monkeypatch.setattr(re, "compile", lambda *args: made.append(args) or compile_(*args))
    lazy = Lazy(r"\d+")
    assert lazy.pattern == r"\d+" and made == []  # its text is known without compiling it
    assert lazy.findall("a1b22") == ["1", "22"] and lazy.match("7") and lazy.split("a1b") == ["a", "b"]
    assert made == [(r"\d+", 0)]
