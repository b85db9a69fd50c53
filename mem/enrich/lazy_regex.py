"""Regex helpers of the zero-LLM enrichers: patterns compiled on first use, word lists as prefix tries.

Every CLI run imports the enrichers (to parse timestamps, to read the settings), so compiling their
~200 patterns at import would cost each ``mem`` call; and ``re`` tries an alternation's branches one
by one, so a word list written as a trie is matched several times faster than a flat ``a|b|c``.

>>> trie(["use", "uses", "used", "run"])
'(?:run|use(?:d|s)?)'
>>> LazyRe(r"\\d+").findall("port 8080 and 9090")
['8080', '9090']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Callable, Optional


class LazyRe:
    """A regex compiled on first use, so importing a module of patterns stays cheap.

    After the first call the compiled pattern's bound methods sit in the slots, so later calls
    cost the same as on a plain ``re.Pattern``. ``transform`` rewrites the pattern just before it
    is compiled (the assertion table factors its word alternations so).
    """

    __slots__ = ("pattern", "flags", "transform", "match", "fullmatch", "search", "sub", "subn",
                 "split", "finditer", "findall")

    def __init__(self, pattern: str, flags: int = 0,
                 transform: Optional[Callable[[str], str]] = None) -> None:
        self.pattern = pattern
        self.flags = flags
        self.transform = transform

    def __getattr__(self, name: str) -> Any:  # only reached while a slot is still empty
        methods = self.__slots__[3:]
        if name not in methods:
            raise AttributeError(name)
        rx = re.compile(self.transform(self.pattern) if self.transform else self.pattern, self.flags)
        for method in methods:
            setattr(self, method, getattr(rx, method))
        return getattr(rx, name)


def trie(words: Iterable[str], space: str = " ") -> str:
    """A regex group matching exactly ``words``, factored by shared prefixes; a space inside a word
    matches ``space`` (entity names take ``[\\s-]+``: "pre commit" is "pre-commit")."""
    root: dict[str, dict] = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        keys = sorted(k for k in node if k)
        if not keys:
            return ""
        alts = [(space if k == " " and space != " " else re.escape(k)) + build(node[k]) for k in keys]
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:
            return (body if len(alts) > 1 else "(?:" + body + ")") + "?"
        return body

    body = build(root)
    return body if body.startswith("(?:") and body.endswith(")") else "(?:" + body + ")"
