"""Which Function classes of a tree other modules of the tree derive from.

The engine reads one module at a time, so it cannot see that ``losses/dpo.py`` derives
from ``preference.py``'s Function. Flattened, that base would be no Function, and the
subclass's module would fail where the subclass is defined (``runtime.FlatClass``).
The command line and the import hook, which see the whole tree (the files given, and
the packages they belong to), run this pass first and hand the engine what it found
(``flatten(..., subclassed=...)``); the engine leaves those classes as written (INL113).

One cheap pass, with CPython's ``ast`` only (no libcst, so the hook's cache hits stay
light): every file is read; a file that may define a Function class (its text names
``Function``) is parsed to find them; a file whose text names one of those classes is
parsed to resolve its classes' bases through its imports (absolute and relative,
``import pkg.mod as m``, re-exports through other modules of the tree). A base that
cannot be resolved (a name bound by assignment, a parameter, a star import) counts
as every Function class of that name: a class left as written is safe, a wrong
rewrite is not.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Base names that make a class a Function class (what the engine flattens, and more).
_FUNCTION_NAMES = frozenset({"Function", "InplaceFunction"})
_LOCAL = "<local>"
_REEXPORT_DEPTH = 8


def subclassed_in(files: Mapping[str, str | os.PathLike[str]]) -> dict[str, str]:
    """Function class -> one class of another module deriving from it, by qualified name.

    ``files`` maps each module of the tree (``pkg.sub.mod``; a package by its
    ``__init__.py``) to its file. Unreadable or unparsable files are skipped."""
    tree = _Tree(files)
    found: dict[str, str] = {}
    if not tree.functions:
        return found
    names = {qualified.rpartition(".")[2] for qualified in tree.functions}
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
    for module in tree.modules():
        text = tree.text(module)
        if text is None or "class" not in text or not pattern.search(text):
            continue
        for subclass, base in tree.subclasses(module):
            found.setdefault(base, f"{module}.{subclass}")
    return found


def for_module(subclassed: Mapping[str, str], module: str | None) -> dict[str, str]:
    """The entries about ``module``'s own classes (what its rewrite depends on)."""
    if not module:
        return {}
    prefix = module + "."
    return {k: v for k, v in subclassed.items() if k.startswith(prefix) and "." not in k[len(prefix) :]}


# -- the files of a tree -------------------------------------------------------------------


def package_files(root: str | os.PathLike[str], name: str) -> dict[str, Path]:
    """The modules under the package directory ``root`` imported as ``name`` (sub-packages,
    namespace ones included), by module name."""
    root = Path(root)
    found: dict[str, Path] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d.isidentifier())
        relative = Path(directory).relative_to(root).parts
        for file in sorted(files):
            stem, suffix = os.path.splitext(file)
            if suffix != ".py" or not stem.isidentifier():
                continue
            parts = [name, *relative] + ([] if stem == "__init__" else [stem])
            found[".".join(parts)] = Path(directory, file)
    return found


def package_root(path: str | os.PathLike[str], module: str) -> tuple[Path, str] | None:
    """(directory, name) of the top-level package the file ``path`` of module ``module``
    belongs to; None for a module outside any package."""
    file = Path(path)
    depth = module.count(".") + (1 if file.stem == "__init__" else 0)
    if depth == 0:
        return None
    directory = file.parent
    for _ in range(depth - 1):
        directory = directory.parent
    return directory, module.partition(".")[0]


def subclassed_in_tree(files: Mapping[str, str | os.PathLike[str]]) -> dict[str, str]:
    """``subclassed_in`` the files given (module -> file) and the packages they belong to.

    For the command line: a file given alone still has its package's other modules seen."""
    tree: dict[str, str | os.PathLike[str]] = dict(files)
    roots = {root for module, path in files.items() if (root := package_root(path, module)) is not None}
    for directory, name in sorted(roots):
        for module, path in package_files(directory, name).items():
            tree.setdefault(module, path)
    return subclassed_in(tree)


@functools.lru_cache(maxsize=16)
def _package_subclassed(root: str, name: str) -> dict[str, str]:
    return subclassed_in(package_files(root, name))


def subclassed_in_package_of(path: str | os.PathLike[str], module: str) -> dict[str, str]:
    """What ``module``'s own classes are subclassed by, in the package it belongs to.

    For the import hook: the package's files are read once per process."""
    found = package_root(path, module)
    if found is None:
        return {}
    root, name = found
    return for_module(_package_subclassed(str(root), name), module)


# -- reading the tree ------------------------------------------------------------------------


@dataclass
class _Module:
    text: str | None
    is_package: bool
    tree: ast.Module | None = None
    parsed: bool = False
    bindings: dict[str, set[str]] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)


class _Tree:
    def __init__(self, files: Mapping[str, str | os.PathLike[str]]) -> None:
        self._modules = {name: _Module(_read(path), Path(path).stem == "__init__") for name, path in files.items()}
        self.functions = self._function_classes()

    def modules(self) -> Iterable[str]:
        return self._modules

    def text(self, module: str) -> str | None:
        return self._modules[module].text

    def subclasses(self, module: str) -> Iterable[tuple[str, str]]:
        """(subclass, Function class of another module it derives from), for every class of ``module``."""
        tree = self._tree(module)
        if tree is None:
            return
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for base in node.bases:
                name = _dotted(base)
                for target in self._resolve(module, name) if name else ():
                    if target in self.functions and target.rpartition(".")[0] != module:
                        yield node.name, target

    # -- Function classes ---------------------------------------------------------------

    def _function_classes(self) -> set[str]:
        found: set[str] = set()
        for name, module in self._modules.items():
            if module.text is None or "Function" not in module.text:
                continue
            tree = self._tree(name)
            if tree is not None:
                found |= {f"{name}.{cls}" for cls in _module_function_classes(tree)}
        return found

    # -- names -------------------------------------------------------------------------

    def _tree(self, module: str) -> ast.Module | None:
        entry = self._modules[module]
        if not entry.parsed:
            entry.parsed = True
            entry.tree = _parse(entry.text)
            if entry.tree is not None:
                entry.bindings, entry.stars = _bindings(entry.tree, module, entry.is_package)
        return entry.tree

    def _resolve(self, module: str, name: str, depth: int = 0) -> set[str]:
        """What the dotted ``name`` read in ``module`` may be, as qualified names (the
        Function classes of its last part, when it cannot be followed)."""
        entry = self._modules.get(module)
        if entry is None or self._tree(module) is None or depth > _REEXPORT_DEPTH:
            return self._by_name(name)
        head, _, rest = name.partition(".")
        targets = entry.bindings.get(head)
        if targets is None:
            targets = {f"{star}.{head}" for star in entry.stars} if entry.stars else set()
            if not targets:
                return self._by_name(name)  # a parameter, a global of another scope, a builtin
        out: set[str] = set()
        for target in targets:
            if target == _LOCAL:
                out |= self._by_name(name)
                continue
            qualified = f"{target}.{rest}" if rest else target
            out.add(qualified)
            out |= self._through_module(qualified, depth)
        return out

    def _through_module(self, qualified: str, depth: int) -> set[str]:
        """Where ``pkg.mod.Name`` leads when ``pkg.mod`` is a module of the tree that imports ``Name``."""
        owner, _, last = qualified.rpartition(".")
        if owner not in self._modules or qualified in self.functions:
            return set()
        return self._resolve(owner, last, depth + 1)

    def _by_name(self, name: str) -> set[str]:
        last = name.rpartition(".")[2]
        return {q for q in self.functions if q.rpartition(".")[2] == last}


def _read(path: str | os.PathLike[str]) -> str | None:
    try:
        with open(path, "rb") as f:
            return importlib.util.decode_source(f.read())
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None


def _parse(text: str | None) -> ast.Module | None:
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        head = _dotted(expr.value)
        return f"{head}.{expr.attr}" if head else None
    if isinstance(expr, ast.Subscript):  # Generic[T]-style bases: the class subscripted
        return _dotted(expr.value)
    return None


def _module_function_classes(tree: ast.Module) -> set[str]:
    """Top-level classes deriving from something named Function, or from one of those."""
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    found: set[str] = set()
    for cls in classes:  # source order: a base comes before its subclasses
        for base in cls.bases:
            name = _dotted(base)
            if name and (name.rpartition(".")[2] in _FUNCTION_NAMES or name in found):
                found.add(cls.name)
    return found


def _bindings(tree: ast.Module, module: str, is_package: bool) -> tuple[dict[str, set[str]], list[str]]:
    """Every name the module binds anywhere, to what it may stand for (``<local>``: not an
    import), and the modules it star-imports."""
    bindings: dict[str, set[str]] = {}
    stars: list[str] = []
    package = module if is_package else module.rpartition(".")[0]
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bindings.setdefault(alias.asname, set()).add(alias.name)
                else:
                    head = alias.name.partition(".")[0]
                    bindings.setdefault(head, set()).add(head)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, package)
            for alias in node.names:
                if source is None:
                    continue
                if alias.name == "*":
                    stars.append(source)
                else:
                    bindings.setdefault(alias.asname or alias.name, set()).add(f"{source}.{alias.name}")
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            bindings.setdefault(node.name, set()).add(f"{module}.{node.name}" if id(node) in top else _LOCAL)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bindings.setdefault(node.id, set()).add(_LOCAL)
    return bindings, stars


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    """The module ``from ... import`` reads, absolute; None when it climbs above the tree."""
    if not node.level:
        return node.module
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts) or (node.level - 1 == len(parts) and not node.module):
        return None
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])]) or None
