"""Census of compile paths: which path ``torch.compile`` gives each flattened Function.

Runs the engine over the Python files under the given directories (default: the
installed torch package) and hands the keywords of every emitted ``custom_vjp(...)``
call to the runtime's own ``custom_vjp``, with stand-ins for the functions they name
(fwd, bwd, a jvp, decorators): the flat callable it makes says which path dynamo gives
it (``.compile_path``: *graph*, *split* or *island*, chosen by
``inliner.runtime._dynamo.compile_path``) and why an island is one. Prints the counts per
path and the islands by reason. Nothing is imported from the scanned files.
``scripts/census.py --paths`` runs the same over its downloaded projects.

Usage: python scripts/compile_paths.py [DIR ...] [--list]
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from inliner import flatten
from inliner.engine.analysis.compile_overrides import engine_options

_MARKERS = ("autograd.Function", "Function)", "autograd_function_apply")
PATHS = ("graph", "split", "island")


@dataclasses.dataclass(frozen=True)
class Found:
    """One flattened Function (or op call) and the path dynamo gives it."""

    file: str
    line: int  # the original's first line
    name: str
    path: str  # graph | split | island
    reason: str  # an island's reason, by kind (empty on the other paths)
    detail: str  # an island's compile reason, as the engine wrote it


@dataclasses.dataclass
class Paths:
    """Counts per path, islands by reason, and every Function found."""

    found: list[Found] = dataclasses.field(default_factory=list)
    failures: list[str] = dataclasses.field(default_factory=list)

    @property
    def counts(self) -> collections.Counter[str]:
        return collections.Counter(f.path for f in self.found)

    @property
    def reasons(self) -> collections.Counter[str]:
        return collections.Counter(f.reason for f in self.found if f.path == "island")

    def add(self, other: Paths) -> None:
        self.found += other.found
        self.failures += other.failures


def _stand_in(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a census stand-in is never called")


#: the stand-in for a fwd whose code names ``mark_dirty`` (a record's forward that may mark
#: inputs dirty: the runtime reads the name in fwd's code to break the graph at the call)
_stand_in_marking_dirty = types.FunctionType(
    _stand_in.__code__.replace(co_names=(*_stand_in.__code__.co_names, "mark_dirty")), globals(), "_stand_in"
)


def _decorator(fn: Callable) -> Callable:
    return fn


def _keyword_value(name: str, node: ast.expr) -> Any:
    """An emitted keyword's value: its literal, else (a function it names) a stand-in."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        if name.endswith("_decorators") and isinstance(node, ast.Lambda):  # written inside a function
            node = node.body
        if name.endswith("_decorators") and isinstance(node, ast.Tuple):
            return tuple(_decorator for _ in node.elts)
        return _stand_in


def flat_callable(call: ast.Call, marks_dirty: bool = False) -> Any:
    """The runtime's flat callable for one emitted ``custom_vjp(fwd, bwd, **keywords)``
    (``marks_dirty``: fwd's code names ``mark_dirty``)."""
    from inliner.runtime import custom_vjp

    keywords = {k.arg: _keyword_value(k.arg, k.value) for k in call.keywords if k.arg}
    return custom_vjp(_stand_in_marking_dirty if marks_dirty else _stand_in, _stand_in, **keywords)


def _functions_marking_dirty(tree: ast.Module) -> set[str]:
    """The module's functions whose code names ``mark_dirty``, nested functions included."""
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(isinstance(n, ast.Attribute) and n.attr == "mark_dirty" for n in ast.walk(node))
    }


def _is_custom_vjp(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name.endswith("custom_vjp")


def island_reason(flat: Any) -> str:
    """Why ``flat`` is an island, by kind: the split path's missing feature, else the engine's kind."""
    fallback = getattr(flat, "_inliner_fallback", "")
    if fallback:  # less its closing aside: "it has a forward-mode rule (jvp)"
        return fallback.rsplit(" (", 1)[0] if fallback.endswith(")") else fallback
    if flat.compile_kind == "side_effecting":
        return "forward side effect"
    if flat.compile_kind == "traceable":  # the graph path's shim breaks the graph at each call
        return "a ctx record that may mark inputs dirty"
    return "backward not traceable, None gradients not known statically"


def paths_in(source: str, path: str, file: Path | None = None) -> list[Found]:
    """Every flattened Function of one file (read from ``file``, named ``path``), with its path."""
    import torch._dynamo  # noqa: F401  (the runtime registers a flat callable's path with it)

    # as the command line flattens it: its module, and the project's other modules to read
    result = flatten(source, path=path, **engine_options(file))
    if not result.flattened:
        return []
    lines: dict[str, list[int]] = collections.defaultdict(list)
    for target in result.targets:
        if target.flattened:
            lines[target.name].append(target.first_line)
    found = []
    tree = ast.parse(result.source)
    marking_dirty = _functions_marking_dirty(tree)
    for node in ast.walk(tree):
        if _is_custom_vjp(node):
            fwd = node.args[0] if node.args else None
            flat = flat_callable(node, isinstance(fwd, ast.Name) and fwd.id in marking_dirty)
            name = flat.__name__
            line = lines[name].pop(0) if lines[name] else 0
            chosen = flat.compile_path
            reason = island_reason(flat) if chosen == "island" else ""
            detail = (flat.compile_reason or _keyword(node, "backward_reason") or "") if chosen == "island" else ""
            found.append(Found(path, line, name, chosen, reason, detail))
    return sorted(found, key=lambda f: f.line)


def _keyword(call: ast.AST, name: str) -> str | None:
    """A string keyword of the emitted ``custom_vjp`` call (the backward's own reason)."""
    for keyword in call.keywords if isinstance(call, ast.Call) else ():
        if keyword.arg == name and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
            return keyword.value.value
    return None


def scan(roots: Iterable[Path], relative_to: Path | None = None) -> Paths:
    """The paths of every Function under ``roots`` (files named relative to ``relative_to``)."""
    paths = Paths()
    for root in roots:
        for file in sorted(root.rglob("*.py")):
            try:
                source = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not any(m in source for m in _MARKERS):
                continue
            name = str(file.relative_to(relative_to)) if relative_to else str(file)
            try:
                paths.found += paths_in(source, name, file)
            except Exception as exc:  # an engine or runtime failure is reported, not fatal
                paths.failures.append(f"{name}: {exc!r}")
    return paths


def summary(paths: Paths) -> str:
    """``N flattened: graph a, split b, island c`` and the islands by reason."""
    counts = paths.counts
    lines = [f"{sum(counts.values())} flattened: " + ", ".join(f"{p} {counts[p]}" for p in PATHS)]
    lines += [f"  island: {n:4}  {why}" for why, n in paths.reasons.most_common()]
    return "\n".join(lines)


def listing(paths: Paths) -> str:
    """One line per Function: ``file:line: Name: path (why)``."""
    return "\n".join(
        f"{f.file}:{f.line}: {f.name}: {f.path}"
        + (f" ({f.reason}; {f.detail or 'no compile reason'})" if f.path == "island" else "")
        for f in paths.found
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="*", help="directories to scan (default: the installed torch package)")
    parser.add_argument("--list", action="store_true", help="print every Function with its path")
    args = parser.parse_args(argv)
    import torch

    roots = [Path(d) for d in args.dirs] or [Path(torch.__file__).parent]
    paths = scan(roots)
    if args.list:
        print(listing(paths))
    print(summary(paths))
    for failure in paths.failures:
        print(f"failed: {failure}", file=sys.stderr)
    return 1 if paths.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
