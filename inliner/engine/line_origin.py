"""Where each line of the new text comes from: the line map that keeps tracebacks on the user's lines.

The engine knows what it did: every byte outside its edits is the input's (so those
lines map exactly), and every text it generated is tagged with the input lines it
was made from (``Origin``: a class's lines, or an op call's two bodies) and with the
lines it knows for sure (``def X_fwd`` came from ``def forward``, the
``X = custom_vjp(...)`` binding stands for ``class X``). Inside one generated text,
its other lines are matched against the lines of their own origin only:

1. lines whose stripped text is unchanged, in order (``difflib``), map exactly;
2. a line equal to exactly one unclaimed origin line up to the spellings the engine
   changes (``ctx.``, ``.apply``) maps to it (statements moved out of order);
3. anything else maps to the most similar unclaimed origin line between its mapped
   neighbours, or to the line before it (a black continuation line).

Where an exact account would need the lowering to carry every statement's origin
through its edits, this matching is scoped to one generated text and its own origin,
and anchored by what is known for sure. ``Origin.written`` says which lines of the
text the engine wrote; every other line is a line of the origin, moved (its
indentation aside) as the user wrote it.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Emitted", "LineMap", "Origin", "line_map"]

_NEWLINE = re.compile(r"\r\n|\r|\n")  # what the tokenizer counts as a line end
_SPACE = re.compile(r"\s+")
_ENGINE_EDITS = re.compile(r"\bctx\.|\.apply\b")  # `ctx.scale` -> `scale`, `F.apply(` -> `F(`
_FUZZY_FLOOR = 0.5  # similarity a changed line needs to claim an origin line


@dataclass(frozen=True)
class Origin:
    """The input lines a generated text was made from, and what is known for sure."""

    ranges: tuple[tuple[int, int], ...]  # 1-based inclusive input line ranges
    defs: dict[str, int] = field(default_factory=dict)  # generated function name -> input line of its source
    binding: tuple[str, int] | None = None  # (`name = custom_vjp(`, input line): the last statement
    #: 0-based lines of the text that the engine wrote; each other line is an input line of
    #: ``ranges``, its indentation aside (a blank line, or a line of the user's text moved)
    written: Collection[int] = frozenset()


class Emitted(str):
    """Text the engine generated, tagged with its ``Origin`` (a ``str`` everywhere else)."""

    origin: Origin

    def __new__(cls, text: str, origin: Origin) -> Emitted:
        emitted = super().__new__(cls, text)
        emitted.origin = origin
        return emitted


class Edit(Protocol):
    """``inliner.engine.result.TextEdit``, as far as the line map reads it."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def origin(self) -> Origin | None: ...


@dataclass(frozen=True)
class LineMap:
    """For each new line (index 0 is line 1): the input line, and how its columns move.

    ``shift[i]`` is the column shift when the line's text is the input line's up to
    indentation; ``None`` when its text changed (columns are then unknown).
    """

    lines: tuple[int, ...]
    shift: tuple[int | None, ...]

    def __getitem__(self, lineno: int) -> int:
        return self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else lineno

    @classmethod
    def identity(cls, text: str) -> LineMap:
        count = len(_split(text))
        return cls(tuple(range(1, count + 1)), (0,) * count)


def _split(text: str) -> list[str]:
    lines = _NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def line_map(original: str, edits: Sequence[Edit]) -> LineMap:
    """The map from the text ``edits`` make of ``original`` back to ``original``'s lines."""
    old = _split(original)
    starts = [0] + [m.end() for m in _NEWLINE.finditer(original)]
    changed = _changed_lines(edits, starts)
    lines: list[int] = []
    shift: list[int | None] = []
    at_line_start = True
    cursor = 0
    for edit in [*edits, None]:
        end = edit.start if edit is not None else len(original)
        # lines starting in original[cursor:end], which the new text keeps as it is
        offsets = [cursor] if at_line_start and cursor < end else []
        offsets += [m.end() for m in _NEWLINE.finditer(original, cursor, end) if m.end() < end]
        for offset in offsets:
            line = bisect.bisect_right(starts, offset)
            lines.append(line)
            shift.append(0 if offset == starts[line - 1] and line not in changed else None)
        if cursor < end:
            at_line_start = original[end - 1] in "\r\n"
        if edit is None:
            break
        span = (bisect.bisect_right(starts, edit.start), bisect.bisect_right(starts, max(edit.end - 1, edit.start)))
        at_line_start = _generated(edit, old, span, at_line_start, lines, shift)
        cursor = edit.end
    return LineMap(tuple(lines), tuple(shift))


def _changed_lines(edits: Sequence[Edit], starts: list[int]) -> set[int]:
    """Input lines an edit changes within (their columns move); an insertion at a line start changes none."""
    changed: set[int] = set()
    for edit in edits:
        first = bisect.bisect_right(starts, edit.start)
        if edit.start == edit.end and edit.start == starts[first - 1]:
            continue
        changed.update(range(first, bisect.bisect_right(starts, max(edit.end - 1, edit.start)) + 1))
    return changed


def _generated(
    edit: Edit, old: list[str], span: tuple[int, int], at_line_start: bool, lines: list[int], shift: list
) -> bool:
    """Map the lines starting inside ``edit.text``, which replaces input lines ``span``;
    return whether the text after it starts a line.

    Without an origin, the text's first line stands for the first replaced line and any
    other for the last (a call's closing parenthesis keeps the line it closed on)."""
    if not edit.text:
        return at_line_start
    new = _NEWLINE.split(edit.text)
    mapped = _match(new, old, edit.origin) if edit.origin is not None else {}
    for j, text in enumerate(new):
        if (j == 0 and not at_line_start) or (j == len(new) - 1 and text == ""):
            continue  # a line that started before the text, or the one starting after it
        line, exact = mapped.get(j, (span[0] if j == 0 else span[1], False))
        lines.append(line)
        shift.append(_indent(old[line - 1]) - _indent(text) if exact else None)
    return new[-1] == ""


def _is_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _indent(line: str) -> int:
    return len(line.encode("utf-8")) - len(line.lstrip().encode("utf-8"))


def _normal(line: str) -> str:
    return _SPACE.sub(" ", _ENGINE_EDITS.sub("", line.strip()))


def _match(new: list[str], old: list[str], origin: Origin) -> dict[int, tuple[int, bool]]:
    """For lines of generated text ``new``: (1-based input line, text unchanged up to indentation)."""
    pool = [i - 1 for first, last in origin.ranges for i in range(first, last + 1) if _is_code(old[i - 1])]
    mapped: dict[int, int] = {}  # 0-based new line -> 0-based old line
    exact: set[int] = set()
    for j, line in enumerate(new):
        pinned = _pinned(line, origin)
        if pinned is not None:
            mapped[j] = pinned - 1
    if origin.binding is not None:
        _pin_binding(new, origin.binding, mapped)
    new_code = [j for j, line in enumerate(new) if _is_code(line) and j not in mapped]
    matcher = difflib.SequenceMatcher(
        None, [old[i].strip() for i in pool], [new[j].strip() for j in new_code], autojunk=False
    )
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            mapped[new_code[block.b + k]] = pool[block.a + k]
            exact.add(new_code[block.b + k])
    claimed = set(mapped.values())
    by_text: dict[str, list[int]] = {}
    for i in pool:
        if i not in claimed:
            by_text.setdefault(_normal(old[i]), []).append(i)
    for j in new_code:
        candidates = [i for i in by_text.get(_normal(new[j]), ()) if i not in claimed] if j not in mapped else []
        if len(candidates) == 1:
            mapped[j] = candidates[0]
            claimed.add(candidates[0])
            if old[candidates[0]].strip() == new[j].strip():
                exact.add(j)
    _fuzzy(new, old, pool, new_code, mapped, claimed)
    out: dict[int, tuple[int, bool]] = {}
    last = pool[0] if pool else origin.ranges[0][0] - 1
    for j in range(len(new)):
        last = mapped.get(j, last)
        out[j] = (last + 1, j in exact)
    return out


def _pinned(line: str, origin: Origin) -> int | None:
    match = re.match(r"\s*(?:async\s+)?def\s+(\w+)\s*\(", line)
    return origin.defs.get(match.group(1)) if match else None


def _pin_binding(new: list[str], binding: tuple[str, int], mapped: dict[int, int]) -> None:
    """The binding statement (the last one of the text) stands for the class or the call."""
    head, line = binding
    start = next((j for j in reversed(range(len(new))) if new[j].strip().startswith(head)), None)
    if start is not None:
        for j in range(start, len(new)):
            mapped[j] = line - 1


def _fuzzy(
    new: list[str], old: list[str], pool: list[int], new_code: list[int], mapped: dict[int, int], claimed: set[int]
) -> None:
    anchors = sorted(mapped.items())
    for j in new_code:
        if j in mapped:
            continue
        k = bisect.bisect_left(anchors, (j, -1))
        low = anchors[k - 1][1] + 1 if k else 0
        high = anchors[k][1] if k < len(anchors) else len(old)
        best, best_score = None, _FUZZY_FLOOR
        target = _normal(new[j])
        for i in pool:
            if i in claimed or not low <= i < high:
                continue
            probe = difflib.SequenceMatcher(None, _normal(old[i]), target, autojunk=False)
            if probe.real_quick_ratio() < best_score or probe.quick_ratio() < best_score:
                continue
            score = probe.ratio()
            if score > best_score:
                best, best_score = i, score
        if best is not None:
            mapped[j] = best
            claimed.add(best)
            bisect.insort(anchors, (j, best))
