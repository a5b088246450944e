"""Reuse across calls: what the engine worked out for one text, kept for the next version.

An editor sends a new version of a document on every keystroke; most of its
Functions are unchanged. ``FlattenCache`` keeps, for one document, the parsed module
of the last text and each candidate's lowering, so ``flatten(text, cache=...)``
lowers again only the classes and op calls whose text -- or whose answers to the
questions the lowering asked about the rest of the module -- changed.

The engine stays a pure function: a result computed with a cache is the one
computed without (tests compare them). That holds because a lowering is looked up
by everything it reads:

- the key: its own source text (the class, or an op call's bodies) and the
  arguments the pipeline passes (indentation, newline, names chosen before it...);
- the facts it asked about the module while it ran, recorded and checked again on
  every reuse: whether a name was taken (``fresh``), and every other question put
  through ``ask`` (what a dotted name qualifies to in a scope, what a decorator
  resolves to, which helper function a call reaches and its text...), each asked
  again of the new module and compared with the recorded answer. Names it took are
  taken again.

What the pipeline decides from the whole module on every run (how the module uses a
class, the compile kind, the imports to tidy) is not cached: it is recomputed, and
whatever of it a lowering reads is part of the key. What is a function of one
top-level statement's own text alone (the module-level names its functions change,
for compile kinds) is remembered by that text (``remember``).

A cache belongs to one document: sharing one between documents is correct but
keeps evicting.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the model needs libcst: `import inliner.engine` stays light (the import hook's cache hits)
    from inliner.engine.model import CustomVJP, Refusal

#: Lowerings kept per cache (a module holds rarely more than a few hundred Functions).
MAX_LOWERINGS = 4096


class Cancelled(Exception):
    """Raised by ``flatten`` when its ``stop`` callback says the result is no longer wanted."""


class WatchedNames:
    """The module's taken names as the lowering sees them (``in`` and ``add``), with a record.

    Any other use fails loudly (an engine error on that candidate), so a lowering that
    starts reading ``taken`` in a new way cannot silently escape the cache's checks.
    """

    def __init__(self, names: set[str]) -> None:
        self._names = names
        self.asked: dict[str, bool] = {}
        self.added: list[str] = []

    def __contains__(self, name: object) -> bool:
        found = name in self._names
        if isinstance(name, str):
            self.asked.setdefault(name, found)
        return found

    def add(self, name: str) -> None:
        self.asked.setdefault(name, name in self._names)
        self._names.add(name)
        self.added.append(name)


#: ``ask(question) -> (value, answer)``: ``value`` is what the lowering gets, ``answer`` a
#: hashable summary of it that decides whether the lowering still holds (equal answers,
#: equal lowering). ``question`` is a tuple the caller understands (may hold nodes).
Ask = Callable[[Any], tuple[Any, Hashable]]


class WatchedAnswers:
    """``ask`` as the lowering sees it: it gets the value, the cache keeps the answer."""

    def __init__(self, ask: Ask) -> None:
        self._ask = ask
        self.asked: list[tuple[Any, Hashable]] = []

    def __call__(self, question: Any) -> Any:
        value, answer = self._ask(question)
        self.asked.append((question, answer))
        return value


#: ``remember(key, make)``: ``FlattenCache.remember``, for what is a function of the text ``key`` holds.
Remember = Callable[[Hashable, Callable[[], Any]], Any]

_serials = itertools.count(1)


@dataclass
class Lowering:
    """One candidate lowered: its outcome, and what it asked about the module to get there."""

    outcome: CustomVJP | Refusal
    product: Any  # what the pipeline needs to emit it (e.g. the parsed block)
    position: tuple[int, int, int, int] | None  # of a refusal, lines relative to the candidate's first line
    names_asked: dict[str, bool]
    names_added: tuple[str, ...]
    asked: list[tuple[Any, Hashable]]
    later: dict[Hashable, tuple[Any, Refusal | None]] = field(default_factory=dict)  # see ``once``
    #: unique per lowering, never reused: a key may name the lowering it builds on (a base class)
    serial: int = field(default_factory=lambda: next(_serials))

    def still_valid(self, taken: set[str], ask: Ask | None) -> bool:
        if any((name in taken) != was for name, was in self.names_asked.items()):
            return False
        if self.asked and ask is None:
            return False
        return all(ask(question)[1] == answer for question, answer in self.asked)  # type: ignore[misc]

    def once(self, step: Hashable, make: Callable[[], Any]) -> Any:
        """What a later step (checking, emitting) makes of this lowering: made once, kept.

        Such a step depends on nothing but the lowering and the key; a ``Refuse`` it
        raises is kept too, and raised again on every call.
        """
        from inliner.engine.model import Refuse

        if step not in self.later:
            try:
                self.later[step] = (make(), None)
            except Refuse as refuse:
                self.later[step] = (None, refuse.refusal)
        value, refusal = self.later[step]
        if refusal is not None:
            raise Refuse(refusal.code, refusal.reason, refusal.node)
        return value


@dataclass
class ModuleEntry:
    source: str
    path: str
    facts: Any


class FlattenCache:
    """What ``flatten`` may reuse on the next version of the same document (see the module doc)."""

    def __init__(self, max_lowerings: int = MAX_LOWERINGS) -> None:
        self.max_lowerings = max_lowerings
        self._module: ModuleEntry | None = None
        self._lowerings: dict[Hashable, list[Lowering]] = {}
        self._remembered: dict[Hashable, Any] = {}
        self.hits = 0
        self.misses = 0

    # -- the module ----------------------------------------------------------------

    def module(self, source: str, path: str, build: Callable[[], Any]) -> Any:
        """The parsed module of ``source`` (built once per text)."""
        entry = self._module
        if entry is None or entry.source != source or entry.path != path:
            entry = self._module = ModuleEntry(source, path, build())
        return entry.facts

    # -- facts of one statement ------------------------------------------------------

    def remember(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """``make()``, kept under ``key``: for what is a function of the text ``key`` holds."""
        if key not in self._remembered:
            if len(self._remembered) >= self.max_lowerings:
                self._remembered.pop(next(iter(self._remembered)))
            self._remembered[key] = make()
        return self._remembered[key]

    # -- lowerings -----------------------------------------------------------------

    def lower(
        self,
        key: Hashable,
        first_line: int,
        compute: Callable[[WatchedNames, Callable[[Any], Any]], tuple[CustomVJP, Any]],
        taken: set[str],
        ask: Ask | None = None,
        position: Callable[[], tuple[int, int, int, int] | None] = lambda: None,
    ) -> Lowering:
        """The lowering of the candidate ``key`` names, reused when still valid, else computed.

        ``compute(names, ask)`` lowers it, reading and taking names only through
        ``names`` and learning anything else outside its key only through ``ask``
        (see ``Ask``); a ``Refuse`` it
        raises is a result like any other (``position()`` then gives where, in file
        lines). Any other exception propagates and nothing is kept.
        """
        for lowering in self._lowerings.get(key, ()):
            if lowering.still_valid(taken, ask):
                self.hits += 1
                self._lowerings[key] = self._lowerings.pop(key)  # recently used: evicted last
                taken.update(lowering.names_added)
                return lowering
        from inliner.engine.model import Refuse

        self.misses += 1
        names = WatchedNames(taken)
        watched = WatchedAnswers(ask or _no_answers)
        try:
            vjp, product = compute(names, watched)
            outcome: CustomVJP | Refusal = vjp
            where = None
        except Refuse as refuse:
            outcome, product = refuse.refusal, None
            found = position()
            where = None if found is None else (found[0] - first_line, found[1], found[2] - first_line, found[3])
        lowering = Lowering(outcome, product, where, names.asked, tuple(names.added), watched.asked)
        self._keep(key, lowering)
        return lowering

    def _keep(self, key: Hashable, lowering: Lowering) -> None:
        if len(self._lowerings) >= self.max_lowerings and key not in self._lowerings:
            self._lowerings.pop(next(iter(self._lowerings)))  # the least recently used text
        versions = self._lowerings.setdefault(key, [])
        versions.insert(0, lowering)
        del versions[4:]  # the same text under a few different module facts


def _no_answers(question: Any) -> tuple[Any, Hashable]:
    raise LookupError(f"this lowering cannot ask about the module ({question!r})")


def relocated(lowering: Lowering, first_line: int) -> tuple[int, int, int, int] | None:
    """A refusal's position in the file, for the candidate now starting at ``first_line``."""
    if lowering.position is None:
        return None
    line, column, end_line, end_column = lowering.position
    return line + first_line, column, end_line + first_line, end_column
