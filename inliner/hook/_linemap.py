"""Compile rewritten source so that its code reports the original file's lines.

The engine moves statements (forward/backward bodies become ``*_fwd``/``*_bwd``)
and black may re-wrap them, so rewritten line N is not original line N. Until
the engine returns its own line map, this module guesses one from the two
texts (best effort, see ``line_map``) and writes it into the AST before
compiling, so tracebacks, ``co_lines`` and ``linecache`` agree with the file
the user wrote.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import re
from dataclasses import dataclass
from types import CodeType
from typing import Iterator

__all__ = ["LineMap", "line_map", "map_lines", "compile_mapped"]

_NEWLINE = re.compile(r"\r\n|\r|\n")  # what the tokenizer counts as a line end
_SPACE = re.compile(r"\s+")
# Spellings the engine changes on a moved line: `ctx.scale` -> `scale`, `F.apply(` -> `F(`.
_ENGINE_EDITS = re.compile(r"\bctx\.|\.apply\b")
_FUZZY_FLOOR = 0.5  # similarity a changed line needs to claim an original line


@dataclass(frozen=True)
class LineMap:
    """For each rewritten line (index 0 is line 1): the original line, and how columns move.

    ``shift[i]`` is the column shift when the line's text is unchanged apart from
    its indentation; ``None`` when the text changed (columns are then unknown).
    """

    lines: tuple[int, ...]
    shift: tuple[int | None, ...]

    def __getitem__(self, lineno: int) -> int:
        return self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else lineno


def _split(text: str) -> list[str]:
    lines = _NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _is_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _indent(line: str) -> int:
    return len(line.encode("utf-8")) - len(line.lstrip().encode("utf-8"))


def _normal(line: str) -> str:
    return _SPACE.sub(" ", _ENGINE_EDITS.sub("", line.strip()))


def line_map(original: str, rewritten: str, pins: dict[int, int] | None = None) -> LineMap:
    """Guess, for every rewritten line, the original line it came from.

    1. Code lines whose stripped text is unchanged and in order (difflib) map exactly.
    2. A remaining line whose text, up to the engine's edits (``ctx.``, ``.apply``),
       equals exactly one unclaimed original line maps to it (statements moved out of
       order, e.g. a backward written before forward).
    3. Anything else maps to the most similar unclaimed original line between its
       mapped neighbours, or to the previous mapped line (a black continuation line,
       a generated line such as the runtime import).

    ``pins`` (1-based rewritten line -> 1-based original line) are taken as given;
    ``compile_mapped`` pins what it knows from the code's structure.
    """
    old, new = _split(original), _split(rewritten)
    old_code = [i for i, line in enumerate(old) if _is_code(line)]
    new_code = [j for j, line in enumerate(new) if _is_code(line)]
    mapped: dict[int, int] = {j - 1: i - 1 for j, i in (pins or {}).items()}  # 0-based
    exact: set[int] = set()

    matcher = difflib.SequenceMatcher(
        None, [old[i].strip() for i in old_code], [new[j].strip() for j in new_code], autojunk=False
    )
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            j = new_code[block.b + k]
            if j not in mapped:
                mapped[j] = old_code[block.a + k]
                exact.add(j)

    claimed = set(mapped.values())
    by_text: dict[str, list[int]] = {}
    for i in old_code:
        if i not in claimed:
            by_text.setdefault(_normal(old[i]), []).append(i)
    for j in new_code:
        if j in mapped:
            continue
        candidates = [i for i in by_text.get(_normal(new[j]), ()) if i not in claimed]
        if len(candidates) == 1:
            mapped[j] = candidates[0]
            claimed.add(candidates[0])
            if old[candidates[0]].strip() == new[j].strip():
                exact.add(j)

    anchors = sorted(mapped.items())
    for j in new_code:
        if j in mapped:
            continue
        k = bisect.bisect_left(anchors, (j, -1))
        low = anchors[k - 1][1] + 1 if k else 0
        high = anchors[k][1] if k < len(anchors) else len(old)
        target = _normal(new[j])
        best = _most_similar(target, old, range(low, high), claimed)
        if best is not None:
            mapped[j] = best
            claimed.add(best)
            bisect.insort(anchors, (j, best))

    lines: list[int] = []
    shift: list[int | None] = []
    last = 0  # lines before the first mapped one (the runtime import) point at line 1
    for j, text in enumerate(new):
        if j in mapped:
            last = mapped[j]
            lines.append(last + 1)
            shift.append(_indent(old[last]) - _indent(text) if j in exact else None)
        else:
            lines.append(last + 1)
            shift.append(None)
    return LineMap(tuple(lines), tuple(shift))


def _most_similar(target: str, old: list[str], window: range, claimed: set[int]) -> int | None:
    best, best_score = None, _FUZZY_FLOOR
    for i in window:
        if i in claimed or not _is_code(old[i]):
            continue
        probe = difflib.SequenceMatcher(None, _normal(old[i]), target, autojunk=False)
        if probe.real_quick_ratio() < best_score or probe.quick_ratio() < best_score:
            continue
        score = probe.ratio()
        if score > best_score:
            best, best_score = i, score
    return best


def _relocate(node: ast.AST, lmap: LineMap) -> None:
    start, end = node.lineno, getattr(node, "end_lineno", None) or node.lineno
    new_start, new_end = lmap[start], lmap[end]
    col, end_col = node.col_offset, getattr(node, "end_col_offset", None)
    start_shift = lmap.shift[start - 1] if 0 < start <= len(lmap.shift) else None
    end_shift = lmap.shift[end - 1] if 0 < end <= len(lmap.shift) else None
    if start_shift is None or end_shift is None or end_col is None or new_end < new_start:
        col = end_col = -1  # unknown columns: tracebacks show the line without carets
    else:
        col, end_col = max(col + start_shift, 0), max(end_col + end_shift, 0)
        if new_start == new_end and end_col < col:
            col = end_col = -1
    node.lineno, node.end_lineno = new_start, max(new_end, new_start)
    node.col_offset, node.end_col_offset = col, end_col


def _statements(body: list) -> Iterator[ast.stmt]:
    """Every statement, nested ones included, in source order (no expressions: cheap)."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(node, name, None)
            if isinstance(inner, list):
                yield from _statements(inner)
        for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            yield from _statements(part.body)


def _structural_pins(tree: ast.Module, original: str) -> dict[int, int]:
    """What the code's structure says for sure, from each ``Name = custom_vjp(fwd, bwd, ...)``.

    The binding's lines map to ``class Name``, ``def fwd`` to the class's ``forward``,
    ``def bwd`` to its ``backward`` (or ``vjp``), a ``vmap=`` rule to its ``vmap``.
    These anchor the guesses in ``line_map`` inside the right class and method.
    """
    try:
        old_tree = ast.parse(original)
    except (SyntaxError, ValueError):
        return {}
    classes: dict[str, list[ast.ClassDef]] = {}
    for node in _statements(old_tree.body):
        if isinstance(node, ast.ClassDef):
            classes.setdefault(node.name, []).append(node)
    runtime = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "inliner.runtime"
        for alias in node.names
    }
    defs: list[ast.FunctionDef] = []
    bindings: list[ast.Assign] = []
    for node in _statements(tree.body):
        if isinstance(node, ast.FunctionDef):
            defs.append(node)
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id in runtime
        ):
            bindings.append(node)
    pins: dict[int, int] = {}
    for binding in bindings:
        call = binding.value
        assert isinstance(call, ast.Call)
        keywords = {k.arg: k.value for k in call.keywords}
        name = keywords.get("name")
        if not isinstance(name, ast.Constant) or not classes.get(name.value):
            continue
        cls = classes[name.value].pop(0)  # same-named classes (in different functions): in order
        for number in range(binding.lineno, (binding.end_lineno or binding.lineno) + 1):
            pins[number] = cls.lineno
        methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
        wanted = list(zip(call.args[:2], (("forward",), ("backward", "vjp"))))
        if isinstance(keywords.get("vmap"), ast.Name):
            wanted.append((keywords["vmap"], ("vmap",)))
        for ref, method_names in wanted:
            method = next((methods[m] for m in method_names if m in methods), None)
            if not isinstance(ref, ast.Name) or method is None:
                continue
            # the function of that name defined last before the binding (names are per scope)
            emitted = [d for d in defs if d.name == ref.id and d.lineno < binding.lineno]
            if emitted:
                pins[emitted[-1].lineno] = method.lineno
    return pins


def map_lines(rewritten: str, original: str, tree: ast.Module | None = None) -> LineMap:
    """``line_map`` anchored by the structure of the engine's output."""
    if tree is None:
        tree = ast.parse(rewritten)
    return line_map(original, rewritten, _structural_pins(tree, original))


def compile_mapped(rewritten: str, original: str, filename: str, *, optimize: int = -1) -> CodeType:
    """Compile ``rewritten`` with every position moved onto ``original``'s lines."""
    tree = ast.parse(rewritten, filename=filename)
    lmap = map_lines(rewritten, original, tree)
    for node in ast.walk(tree):
        if "lineno" in node._attributes and hasattr(node, "lineno"):
            _relocate(node, lmap)
    return compile(tree, filename, "exec", dont_inherit=True, optimize=optimize)
