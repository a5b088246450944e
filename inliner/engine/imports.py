"""The module's imports around a rewrite: the runtime's goes where isort puts it, and
the ones the rewrite made unused go away.

Both are text edits on the original: top-level imports lie outside every rewritten
region, so their offsets are the original's and everything else stays byte-identical.

Adding: ``from inliner.runtime import custom_vjp`` joins the import section that holds
``torch`` (a file with a Function always has one), at the place isort's default order
gives it (plain ``import x`` lines first, then ``from x import`` lines by module name),
so that ruff's I001 finds nothing the original did not have.

Reusing: a name the module's leading imports bind from the runtime for good (bound
nowhere else, no name reached only at run time) is what the rewrite calls it, so a
second selective flatten adds no second import of it.

Removing is deliberately timid. A name goes only if the rewrite removed its last use (the
original used it, the rewritten module never mentions it: as a variable, in an annotation,
inside any string but a plain docstring) and nothing could reach it otherwise: not in an
``__init__.py``, no ``__all__`` that is not a literal, no ``globals()``/``eval``-style
access, no ``# noqa`` on the import, no ``import x as x`` re-export, never ``*`` or
``__future__``; and only from modules whose import does nothing of its own (the standard
library, and torch modules that ``import torch`` loads anyway, as the runtime does), or
inside ``if TYPE_CHECKING:``, which never runs (emptied, the block goes whole).
"""

from __future__ import annotations

import ast
import bisect
import collections
import re
import sys
from collections.abc import Sequence
from typing import TypeGuard

from inliner.engine.docstrings import is_docstring
from inliner.engine.source import SourceText, end_line, start_line

Edit = tuple[int, int, str]

# torch modules that a bare ``import torch`` has already loaded (tests/engine/test_imports.py
# checks this on the installed torch): dropping an import of them changes nothing.
TORCH_MODULES = frozenset(
    {
        "torch",
        "torch.autograd",
        "torch.autograd.function",
        "torch.autograd.forward_ad",
        "torch.amp",
        "torch.cuda",
        "torch.cuda.amp",
        "torch.cpu",
        "torch.cpu.amp",
        "torch.nn",
        "torch.nn.functional",
        "torch.types",
        "torch._functorch",
        "torch._functorch.autograd_function",
        "torch._C",
    }
)
# Names a rewrite can take the last use of that are no torch submodule (``from m import x``
# could otherwise load ``m.x``): the lowercase ones, spelled out; classes are capitalised.
_TORCH_FUNCTIONS = frozenset({"once_differentiable", "custom_fwd", "custom_bwd", "autograd_function_apply"})
_IMPORT_HAS_EFFECTS = frozenset(
    {"this", "antigravity", "readline", "rlcompleter", "site", "faulthandler", "tracemalloc"}
)
_DYNAMIC_ACCESS = frozenset({"globals", "vars", "locals", "eval", "exec"})
_WORD = re.compile(r"[A-Za-z_]\w*")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_DEFINITION = re.compile(r"(?:async\s+def|def|class)\b|@")


def import_edits(
    tree: ast.Module,
    text: SourceText,
    rewritten: ast.Module,
    *,
    module: str,
    line: str,
    path: str,
    edited: Sequence[Edit] = (),
) -> list[Edit]:
    """The edits to the original's imports: the insertion of ``line`` (which imports from
    ``module``) first, so it precedes anything else inserted at its offset; then removals
    (at module level, and in functions, away from the ``edited`` spans)."""
    block = _import_block(tree)
    removals, gone = _removals(tree, text, rewritten) if _may_remove(tree, rewritten, path) else ([], set())
    kept = [stmt for stmt in block if stmt not in gone]
    removed_lines = {n for start, end, new in removals if not new for n in _lines_of(text, start, end)}
    local = _function_removals(tree, text, rewritten, edited)
    return [_insertion(tree, text, block, kept, removed_lines, module, line), *removals, *local]


def bound_for_good(tree: ast.Module, module: str) -> dict[str, str]:
    """What the module's leading imports bind from ``module`` for its whole run: imported
    name -> the name bound to it, where that name is bound nowhere else in the module and
    no name is reached only at run time (``globals()``...). Code anywhere after those
    imports may call it by that name."""
    if _reached_dynamically(tree):
        return {}
    found: dict[str, str] = {}
    for stmt in _import_block(tree):
        if isinstance(stmt, ast.ImportFrom) and stmt.module == module and not stmt.level:
            for alias in stmt.names:
                bound = alias.asname or alias.name
                if alias.name not in found and _bindings(tree, bound) == 1:
                    found[alias.name] = bound
    return found


def _bindings(tree: ast.Module, name: str) -> int:
    """How many places of the module may bind ``name`` (in any scope; a star import counts)."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            count += node.id == name and not isinstance(node.ctx, ast.Load)
        elif isinstance(node, ast.alias):
            count += node.name == "*" or (node.asname or node.name.split(".")[0]) == name
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            count += name in node.names
        elif isinstance(node, ast.arg):
            count += node.arg == name
        elif isinstance(node, ast.MatchMapping):
            count += node.rest == name
        else:  # a def, a class, an except or match capture
            count += getattr(node, "name", None) == name
    return count


def _lines_of(text: SourceText, start: int, end: int) -> range:
    """The (1-based) lines a removal of whole lines from ``start`` to ``end`` takes away."""
    first = bisect.bisect_right(text.starts, start)
    return range(first, bisect.bisect_right(text.starts, end - 1) + 1)


# -- which names the rewrite made unused ------------------------------------------------


def _may_remove(tree: ast.Module, rewritten: ast.Module, path: str) -> bool:
    if path.replace("\\", "/").rsplit("/", 1)[-1] == "__init__.py":
        return False  # a package's namespace: its imports are its public names
    return not (_reached_dynamically(tree) or _reached_dynamically(rewritten))


def mentions(node: ast.AST) -> collections.Counter[str]:
    """How often each name is mentioned where code could read it: as a variable, in an
    annotation, a ``global`` statement, or as a word of a string that is not a plain docstring."""
    docstrings = {d for d, doc in _docstrings(node) if ">>>" not in doc}
    found: collections.Counter[str] = collections.Counter()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found[child.id] += 1
        elif isinstance(child, (ast.Global, ast.Nonlocal)):
            found.update(child.names)
        elif isinstance(child, ast.Constant) and isinstance(child.value, str) and child not in docstrings:
            found.update(_WORD.findall(child.value))
    return found


def _docstrings(node: ast.AST) -> list[tuple[ast.Constant, str]]:
    """(node, text) of each docstring under ``node``."""
    out = []
    for child in ast.walk(node):
        if isinstance(child, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and child.body:
            first = child.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                out.append((first.value, first.value.value))
    return out


def _reached_dynamically(module: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Module globals may be read by a name only known at run time."""
    for node in ast.walk(module):
        if isinstance(node, ast.Name) and node.id in _DYNAMIC_ACCESS:
            return True
        if isinstance(node, ast.Name) and node.id == "__all__" and not _literal_all(node, module):
            return True
    return any(isinstance(s, ast.FunctionDef) and s.name in ("__getattr__", "__dir__") for s in module.body)


def _literal_all(name: ast.Name, module: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``name`` is the target of a module-level ``__all__ = [<strings>]``."""
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and any(t is name for t in stmt.targets):
            value = stmt.value
            return isinstance(value, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
            )
    return False


# -- removing ---------------------------------------------------------------------------


def _removals(tree: ast.Module, text: SourceText, rewritten: ast.Module) -> tuple[list[Edit], set[ast.stmt]]:
    """Edits dropping the names the rewrite made unused from the module's imports (top
    level, and inside ``if TYPE_CHECKING:``), and the statements that go entirely.

    A ``TYPE_CHECKING`` block left empty goes whole, and with it maybe the last use of
    ``TYPE_CHECKING`` itself."""
    before, after = mentions(tree), mentions(rewritten)
    unused = {name for name in before if not after[name]}
    edits: dict[ast.stmt, list[Edit]] = {}
    gone: set[ast.stmt] = set()
    for guard in (s for s in tree.body if _is_type_checking_guard(s) and _may_edit(s, text)):
        _drop(guard.body, text, unused, edits, gone, guarded=True)
        if all(s in gone for s in guard.body):
            for stmt in guard.body:
                del edits[stmt]
            edits[guard] = [(text.offset(guard.lineno, 0), _past_doubled_blank(text, guard), "")]
            gone.add(guard)
            after.subtract(mentions(guard.test))
    unused |= {name for name in before if after[name] <= 0}
    _drop(
        [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))], text, unused, edits, gone, guarded=False
    )
    return [edit for group in edits.values() for edit in group], gone


def _function_removals(tree: ast.Module, text: SourceText, rewritten: ast.Module, edited: Sequence[Edit]) -> list[Edit]:
    """Edits dropping the imports at the top of a function's body that the rewrite left
    unused there: a class flattened inside a function no longer names ``Function``.

    A function is matched with the rewritten one at the same path of names (functions
    and classes); the rules are those of module level (only inert modules, no ``noqa``,
    no dynamic access, nothing the function still names), and a removal touches no
    line another edit changes."""
    after = dict(_functions(rewritten))
    out: list[Edit] = []
    for path, func in _functions(tree):
        imports: list[ast.stmt] = [s for s in func.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        new = after.get(path)
        if not imports or new is None or _reached_dynamically(func) or _reached_dynamically(new):
            continue  # the walks below cost a pass over the function: only where an import may go
        before, now = mentions(func), mentions(new)
        unused = {name for name in before if not now[name]}
        edits: dict[ast.stmt, list[Edit]] = {}
        _drop(imports, text, unused, edits, set(), guarded=False)
        for stmt, group in edits.items():
            group = [_with_blank_after_first(text, func, stmt, edit) for edit in group]
            if not any(_overlaps(edit, other) for edit in group for other in edited):
                out.extend(group)
    return out


def _functions(tree: ast.AST) -> list[tuple[tuple[str, ...], ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function under ``tree`` with its path of enclosing function and class names
    (a repeated path gets a count, so the n-th of a name matches the n-th)."""
    found: list[tuple[tuple[str, ...], ast.FunctionDef | ast.AsyncFunctionDef]] = []
    seen: collections.Counter[tuple[str, ...]] = collections.Counter()

    def walk(node: ast.AST, path: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                here = (*path, child.name)
                seen[here] += 1
                here = (*here[:-1], f"{child.name}#{seen[here]}")
                if not isinstance(child, ast.ClassDef):
                    found.append((here, child))
                walk(child, here)
            else:
                walk(child, path)

    walk(tree, ())
    return found


def _with_blank_after_first(text: SourceText, func: ast.AST, stmt: ast.stmt, edit: Edit) -> Edit:
    """A removed first statement of a body takes the blank lines after it along: a body
    does not open with a blank line."""
    start, end, new = edit
    body = getattr(func, "body", [])
    first = 1 if body and is_docstring(body[0]) else 0
    if new or len(body) <= first or body[first] is not stmt:
        return edit
    line = end_line(stmt) + 1
    while line <= len(text.starts) and not text.line(line).strip():
        end = text.line_end(line)
        line += 1
    return (start, end, new)


def _overlaps(edit: Edit, other: Edit) -> bool:
    return edit[0] < other[1] and other[0] < edit[1]


def _is_type_checking_guard(stmt: ast.stmt) -> TypeGuard[ast.If]:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) holding only imports: never run."""
    if not isinstance(stmt, ast.If) or stmt.orelse:
        return False
    test = stmt.test
    named = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING" and isinstance(test.value, ast.Name)
    )
    return named and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body)


def _drop(
    statements: list[ast.stmt],
    text: SourceText,
    unused: set[str],
    edits: dict[ast.stmt, list[Edit]],
    gone: set[ast.stmt],
    *,
    guarded: bool,
) -> None:
    for stmt in statements:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)) or not _may_edit(stmt, text):
            continue
        drop = [a for a in stmt.names if _binding(a, stmt) in unused and _droppable(a, stmt, guarded)]
        if len(drop) == len(stmt.names):
            edits[stmt] = [(text.offset(stmt.lineno, 0), _past_doubled_blank(text, stmt), "")]
            gone.add(stmt)
        elif drop:
            edits[stmt] = _without(text, stmt, drop)


def _binding(alias: ast.alias, stmt: ast.Import | ast.ImportFrom) -> str:
    if alias.asname is not None:
        return alias.asname
    return alias.name if isinstance(stmt, ast.ImportFrom) else alias.name.split(".", 1)[0]


def _droppable(alias: ast.alias, stmt: ast.Import | ast.ImportFrom, guarded: bool) -> bool:
    """Removing the name changes nothing else: ``guarded`` imports never run at all."""
    if alias.name == "*" or alias.asname == alias.name:  # `import x as x`: an explicit re-export
        return False
    if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
        return False
    if guarded:
        return True
    if isinstance(stmt, ast.Import):
        return import_is_inert(alias.name)
    if stmt.level or stmt.module is None or not import_is_inert(stmt.module):
        return False
    if stmt.module.split(".", 1)[0] != "torch":
        return True
    member = f"{stmt.module}.{alias.name}"
    return member in TORCH_MODULES or alias.name in _TORCH_FUNCTIONS or not alias.name.islower()


def import_is_inert(module: str) -> bool:
    """Importing ``module`` has no effect a rewritten module could miss."""
    root = module.split(".", 1)[0]
    if root == "torch":
        return module in TORCH_MODULES
    return (root in sys.stdlib_module_names and root not in _IMPORT_HAS_EFFECTS) or root == "typing_extensions"


def _may_edit(stmt: ast.stmt, text: SourceText) -> bool:
    """The statement alone occupies its lines (comments aside) and carries no ``noqa``."""
    start, end = text.start_offset(stmt), text.end_offset(stmt)
    before = text.source[text.offset(stmt.lineno, 0) : start]
    after = text.source[end : text.line_end(end_line(stmt))].strip()
    alone = not before.strip() and (not after or after.startswith("#"))
    return alone and "noqa" not in text.lines_between(stmt.lineno, end_line(stmt)).lower()


def _past_doubled_blank(text: SourceText, stmt: ast.stmt) -> int:
    """The end of a removed statement's lines, and of the blank line after them when a
    blank line also precedes them: a section that empties leaves one separator, not two."""
    end = text.line_end(end_line(stmt))
    before = text.line(stmt.lineno - 1) if stmt.lineno > 1 else ""
    after_line = end_line(stmt) + 1
    if after_line <= len(text.starts) and not text.line(after_line).strip() and not before.strip():
        return text.line_end(after_line)
    return end


def _without(text: SourceText, stmt: ast.Import | ast.ImportFrom, dropped: list[ast.alias]) -> list[Edit]:
    """Edits dropping some of a statement's names: a one-line statement is written again;
    in a parenthesised one with a name per line those lines go (with their comments).
    Any other layout is left alone."""
    if stmt.lineno == end_line(stmt):
        start, end = text.start_offset(stmt), text.end_offset(stmt)
        kept = [a for a in stmt.names if a not in dropped]
        names = ", ".join(a.name + ("" if a.asname is None else f" as {a.asname}") for a in kept)
        head = "import" if isinstance(stmt, ast.Import) else f"from {'.' * stmt.level}{stmt.module or ''} import"
        return [(start, end, f"{head} {names}")]
    lines = [a.lineno for a in stmt.names]
    own_lines = all(a.lineno == a.end_lineno for a in stmt.names) and len(set(lines)) == len(lines)
    if not own_lines or stmt.lineno in lines or end_line(stmt) in lines:
        return []
    return [(text.offset(a.lineno, 0), text.line_end(a.lineno), "") for a in dropped]


# -- adding -----------------------------------------------------------------------------


def _import_block(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The imports the module starts with (after its docstring)."""
    body = tree.body
    start = 1 if body and is_docstring(body[0]) else 0
    block = []
    for stmt in body[start:]:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            break
        block.append(stmt)
    return block


def _sections(block: list[ast.Import | ast.ImportFrom], text: SourceText) -> list[list[ast.Import | ast.ImportFrom]]:
    """The block split at blank lines, as isort separates its sections."""
    sections: list[list[ast.Import | ast.ImportFrom]] = []
    previous = None
    for stmt in block:
        if previous is None or any(not text.line(n).strip() for n in range(end_line(previous) + 1, stmt.lineno)):
            sections.append([])
        sections[-1].append(stmt)
        previous = stmt
    return sections


def _module(stmt: ast.Import | ast.ImportFrom) -> str:
    if isinstance(stmt, ast.Import):
        return stmt.names[0].name
    return "." * stmt.level + (stmt.module or "")


def _sort_key(stmt: ast.Import | ast.ImportFrom) -> tuple[int, str]:
    """isort's default order inside a section: ``import x`` before ``from x import``, then by module."""
    return (1 if isinstance(stmt, ast.ImportFrom) else 0, _module(stmt).lower())


def _third_party(stmt: ast.Import | ast.ImportFrom) -> bool:
    module = _module(stmt)
    root = module.split(".", 1)[0]
    return bool(root) and root != "__future__" and root not in sys.stdlib_module_names


def _insertion(
    tree: ast.Module,
    text: SourceText,
    block: list[ast.Import | ast.ImportFrom],
    kept: list[ast.Import | ast.ImportFrom],
    removed_lines: set[int],
    module: str,
    line: str,
) -> Edit:
    """Where ``line`` goes: into torch's section in sorted place, else into a section of its own."""
    still_kept = set(kept)
    sections = [[s for s in section if s in still_kept] for section in _sections(block, text)]
    sections = [s for s in sections if s]
    target = next((s for s in sections if any(_module(i).split(".")[0] == "torch" for i in s)), None)
    target = target or next((s for s in sections if any(_third_party(i) for i in s)), None)
    if target is not None:
        ours = (1, module.lower())
        before = [s for s in target if _sort_key(s) <= ours]
        if before:
            offset = text.line_end(end_line(before[-1]))
        else:
            offset = _comments_start(text, target[0].lineno)
        return (offset, offset, line)
    if sections:  # only standard-library imports: a section of our own after them
        last = end_line(sections[-1][-1])
        offset = text.line_end(last)
        following = next((n for n in range(last + 1, len(text.starts) + 1) if n not in removed_lines), None)
        code_follows = following is not None and text.line(following).strip() != ""
        return (offset, offset, text.newline + line + (text.newline if code_follows else ""))
    return _at_top(tree, text, line)


def spaced_insertion(insertion: Edit, text: SourceText, others: list[Edit]) -> Edit:
    """``insertion`` (the runtime's import) with the blank lines that a definition at the
    top level right after it needs: two (pycodestyle's E302), as isort and black leave them.

    What follows it is read in the text that ``others`` make (a removed import, a class
    that became ``def`` lines)."""
    start, end, line = insertion
    shift = sum(len(new) - (e - s) for s, e, new in others if s < start)
    after = _NEWLINE.split(text.splice(others)[start + shift :])
    blank = next((n for n, code in enumerate(after) if code.strip()), len(after))
    following = next((code for code in after[blank:] if not code.lstrip().startswith("#")), "")
    if _DEFINITION.match(following) and blank < 2:  # comments right above a definition are its own
        return (start, end, line + text.newline * (2 - blank))
    return insertion


def _comments_start(text: SourceText, lineno: int) -> int:
    """The offset of the comment lines right above ``lineno`` (they belong to that import)."""
    first = lineno
    while first > 1 and text.line(first - 1).lstrip().startswith("#"):
        first -= 1
    return text.offset(first, 0)


def _at_top(tree: ast.Module, text: SourceText, line: str) -> Edit:
    """No import block: after the docstring and ``__future__`` imports, or at the very top."""
    after = None
    for i, stmt in enumerate(tree.body):
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if (i == 0 and is_docstring(stmt)) or is_future:
            after = stmt
            continue
        break
    if after is not None:
        offset = text.line_end(end_line(after))
    else:
        first = tree.body[0]
        first_line = start_line(first)
        offset = text.offset(first_line, 0)
    return (offset, offset, line)
