"""Which Function classes of a tree other modules of the tree derive from.

The engine reads one module at a time, so it cannot see that ``losses/dpo.py`` derives
from ``preference.py``'s Function. Flattened, that base would be no Function, and the
subclass's module would fail where the subclass is defined (``runtime.FlatClass``).
The command line and the import hook, which see the whole tree (the files given, and
the packages they belong to), run this pass first and hand the engine what it found
(``flatten(..., subclassed=...)``); the engine leaves those classes as written (INL113).

One cheap pass, with regular expressions and CPython's ``ast`` only (no libcst, so the
hook's cache hits stay light): every file is read; the Function classes are found from
the class headers that name ``Function`` (renamed or not) or one of those; a file whose
class headers name one of them (or a name some module binds to one) is parsed, and its
classes' bases resolved through its imports (absolute and relative, ``import pkg.mod as
m``, aliases, re-exports through other modules of the tree). A base that cannot be
resolved (a parameter, a name bound in a way this does not follow) counts as every
Function class of that name: a class left as written is safe, a wrong rewrite is not.
The hook keeps the answer per package (``inliner.hook._bases``).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Base names that make a class a Function class (what the engine flattens, and more).
_FUNCTION_NAMES = frozenset({"Function", "InplaceFunction"})
#: What ``_may_define`` reads around each ``Function``: whether a file may define one.
_FUNCTION_WORD = re.compile(r"Function\b")
_AS_AFTER = re.compile(r"\s+as\b")
_HEADER_BEFORE = re.compile(r"\bclass\s+\w+\s*\Z")
_LOCAL = "<local>"
_ALIAS = "="  # a binding ``X = a.b``: ``=a.b``, read again in its module
_BY_NAME = "?"  # a binding ``X = getattr(..., "Name")``: ``?Name``, every Function class of that name
_REEXPORT_DEPTH = 8
#: The name and bases of each class header (to the first ``):``, over lines).
_NAMED_HEADER = re.compile(r"\bclass\s+(\w+)\s*\((.*?)\)\s*:", re.S)
#: ``import a.X as Y``, ``from a import X as Y``; ``Y = a.X`` (annotated or not) on a line of its own.
_AS = re.compile(r"[ \t]+as[ \t]+(\w+)")  # found from `` as ``, the dotted name read back (fast)
_ASSIGNED = re.compile(r"^[ \t]*(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*([\w.]+)[ \t]*(?:#.*)?$", re.M)
#: ``Y = getattr(<anything>, "X")`` on a line of its own (found from ``getattr(``, which is fast).
_GETATTR = re.compile(r"""getattr\([^\n]*,[ \t]*['"](\w+)['"][ \t]*\)[ \t]*(?:#.*)?$""", re.M)
_GETATTR_TARGET = re.compile(r"[ \t]*(\w+)[ \t]*=[ \t]*$")  # what precedes it on its line


@dataclass(frozen=True)
class Source:
    """A module's bytes (None: unreadable), and whether it is a package's ``__init__.py``."""

    data: bytes | None
    is_package: bool


def read_sources(files: Mapping[str, str | os.PathLike[str]]) -> dict[str, Source]:
    """The bytes of each module's file (``files``: module -> file)."""
    return {module: Source(_read_bytes(path), Path(path).stem == "__init__") for module, path in files.items()}


def subclassed_in(files: Mapping[str, str | os.PathLike[str]]) -> dict[str, str]:
    """Function class -> one class of another module deriving from it, by qualified name.

    ``files`` maps each module of the tree (``pkg.sub.mod``; a package by its
    ``__init__.py``) to its file. Unreadable or unparsable files are skipped."""
    return subclassed_in_sources(read_sources(files))


def subclassed_in_sources(sources: Mapping[str, Source]) -> dict[str, str]:
    """``subclassed_in``, from the modules' bytes."""
    tree = _Tree(sources)
    found: dict[str, str] = {}
    if not tree.functions:
        return found
    names = _names_in_bases(tree, {qualified.rpartition(".")[2] for qualified in tree.functions})
    for module in tree.modules():
        text = tree.text(module)
        if text is None or not any(names.search(bases) for _, bases in _NAMED_HEADER.findall(text)):
            continue
        for subclass, base in tree.subclasses(module):
            found.setdefault(base, f"{module}.{subclass}")
    return found


def _names_in_bases(tree: _Tree, names: set[str]) -> re.Pattern[str]:
    """What a class header deriving from one of ``names`` names among its bases: one of
    them, or a name some module of the tree binds to one (``import X as Y``, ``Y = a.X``)."""
    pairs: list[tuple[str, str]] = []  # (what is renamed, the new name), from every module
    for module in tree.modules():
        text = tree.text(module) or ""
        pairs += [(old.rpartition(".")[2], new) for old, new in _renamed(text)]
        pairs += [(old.rpartition(".")[2], new) for new, old in _ASSIGNED.findall(text)]
        pairs += _looked_up(text)
    known = set(names)
    while True:
        more = {new for old, new in pairs if old in known} - known
        if not more:
            break
        known |= more
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, known))) + r")\b")


def _may_define(text: str) -> bool:
    """Whether a class header names Function (``class X(...Function``), or Function is
    renamed (``Function as``, ``= a.Function``): read around each ``Function``, which is
    fast, where one pattern tried at every position took seconds over a large tree."""
    for found in _FUNCTION_WORD.finditer(text):
        start = found.start()
        before = text[start - 1] if start else ""
        if not (before.isalnum() or before == "_") and _AS_AFTER.match(text, found.end()):
            return True
        line = text.rfind("\n", 0, start) + 1
        name = start
        while name > line and (text[name - 1].isalnum() or text[name - 1] in "_."):
            name -= 1
        gap = name
        while gap > 0 and text[gap - 1].isspace():
            gap -= 1
        if gap > 0 and text[gap - 1] == "=":
            return True
        opening, closing = text.rfind("(", 0, start), text.rfind(")", 0, start)
        if opening > closing and _HEADER_BEFORE.search(text[max(0, opening - 200) : opening]):
            return True
    return False


def _renamed(text: str) -> list[tuple[str, str]]:
    """(``a.X``, ``Y``) for each ``a.X as Y``; every `` as `` after a name, overlapping ones too."""
    pairs = []
    for found in _AS.finditer(text):
        end = start = found.start()
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_."):
            start -= 1
        if start < end:
            pairs.append((text[start:end], found.group(1)))
    return pairs


def _looked_up(text: str) -> list[tuple[str, str]]:
    """(``X``, ``Y``) for each line ``Y = getattr(<anything>, "X")``."""
    pairs = []
    for found in _GETATTR.finditer(text):
        target = _GETATTR_TARGET.match(text, text.rfind("\n", 0, found.start()) + 1, found.start())
        if target is not None:
            pairs.append((found.group(1), target.group(1)))
    return pairs


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
    def __init__(self, sources: Mapping[str, Source]) -> None:
        self._modules = {name: _Module(_decode(s.data), s.is_package) for name, s in sources.items()}
        self.functions = self._function_classes()
        self._named: dict[str, set[str]] = {}
        for qualified in self.functions:
            self._named.setdefault(qualified.rpartition(".")[2], set()).add(qualified)

    def modules(self) -> Iterable[str]:
        return self._modules

    def text(self, module: str) -> str | None:
        return self._modules[module].text

    def subclasses(self, module: str) -> Iterable[tuple[str, str]]:
        """(subclass, Function class of another module it derives from), for every class of ``module``."""
        tree = self._tree(module)
        if tree is None:
            return
        for node in _statements(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for base in node.bases:
                name = _dotted(base)
                targets = self._resolve(module, name) if name else self._by_name(_last_name(base) or "")
                for target in targets:
                    if target in self.functions and target.rpartition(".")[0] != module:
                        yield node.name, target

    # -- Function classes ---------------------------------------------------------------

    def _function_classes(self) -> set[str]:
        found: set[str] = set()
        for name, module in self._modules.items():
            if module.text is None or "Function" not in module.text or not _may_define(module.text):
                continue
            found |= {f"{name}.{cls}" for cls in _function_classes_in(module.text)}
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
            if target.startswith(_BY_NAME):
                out |= self._by_name(target[len(_BY_NAME) :])
                continue
            if target.startswith(_ALIAS):
                out |= self._resolve(module, target[len(_ALIAS) :] + (f".{rest}" if rest else ""), depth + 1)
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
        return set(self._named.get(name.rpartition(".")[2], ()))


def _read_bytes(path: str | os.PathLike[str]) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _decode(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError):
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


def _last_name(expr: ast.expr) -> str | None:
    """The name a base that is no dotted name ends in (``load("pkg").Base``: ``Base``)."""
    if isinstance(expr, ast.Subscript):
        return _last_name(expr.value)
    return expr.attr if isinstance(expr, ast.Attribute) else None


def _function_classes_in(text: str) -> set[str]:
    """The classes of a module, at any depth, whose header names Function (or Function
    renamed in the module) or one of those among its bases. More than the engine flattens
    (a class deriving from another library's ``Function``) does no harm: the engine looks
    only at its own candidates."""
    words = set(_FUNCTION_NAMES)
    pairs = [(old.rpartition(".")[2], new) for old, new in _renamed(text)]
    pairs += [(old.rpartition(".")[2], new) for new, old in _ASSIGNED.findall(text)]
    words |= {new for old, new in pairs if old in _FUNCTION_NAMES}
    found: set[str] = set()
    for name, bases in _NAMED_HEADER.findall(text):  # source order: a base comes before its subclasses
        if set(re.findall(r"\w+", bases)) & (words | found):
            found.add(name)
    return found


def _statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every statement, nested ones included (what binds a name or defines a class is one)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, field_name, ()) or ():
                if isinstance(child, ast.stmt):
                    yield child
                stack.append(child)


def _bindings(tree: ast.Module, module: str, is_package: bool) -> tuple[dict[str, set[str]], list[str]]:
    """Every name the module's statements bind, to what it may stand for (``<local>``: not an
    import, a top-level definition or a plain alias), and the modules it star-imports.

    A name bound only where this does not look (a parameter, a walrus) reads as unbound,
    which ``_Tree._resolve`` answers by name: the safe side."""
    bindings: dict[str, set[str]] = {}
    stars: list[str] = []
    package = module if is_package else module.rpartition(".")[0]
    top = {id(node) for node in tree.body}

    def bind(name: str, target: str) -> None:
        bindings.setdefault(name, set()).add(target)

    for node in _statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.partition(".")[0]
                bind(alias.asname or head, alias.name if alias.asname else head)
        elif isinstance(node, ast.ImportFrom):
            source = absolute_module(node, package)
            for alias in node.names if source is not None else ():
                if alias.name == "*":
                    stars.append(str(source))
                else:
                    bind(alias.asname or alias.name, f"{source}.{alias.name}")
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            bind(node.name, f"{module}.{node.name}" if id(node) in top else _LOCAL)
        else:
            for name, target in _assigned(node):
                bind(name, target)
    return bindings, stars


def _assigned(node: ast.stmt) -> Iterator[tuple[str, str]]:
    """(name, what it stands for) for each name a statement assigns: ``X = a.b`` is an
    alias of ``a.b`` (read in the module), anything else ``<local>``."""
    if isinstance(node, ast.Assign):
        looked_up = _getattr_name(node.value)
        if looked_up is not None:
            for target in node.targets:
                yield from ((name, _BY_NAME + looked_up) for name in _target_names(target))
            return
        value = _dotted(node.value)
        alias = _ALIAS + value if value and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) else None
        for target in node.targets:
            yield from ((name, alias or _LOCAL) for name in _target_names(target))
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        yield from ((name, _LOCAL) for name in _target_names(node.target))
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                yield from ((name, _LOCAL) for name in _target_names(item.optional_vars))
    elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
        yield from ((h.name, _LOCAL) for h in getattr(node, "handlers", ()) if h.name)


def _getattr_name(value: ast.expr) -> str | None:
    """``Name`` of ``getattr(<anything>, "Name")``, or None."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr"):
        return None
    if len(value.args) < 2 or not isinstance(value.args[1], ast.Constant) or not isinstance(value.args[1].value, str):
        return None
    return value.args[1].value


def _target_names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def absolute_module(node: ast.ImportFrom, package: str) -> str | None:
    """The module ``from ... import`` reads, absolute, from a module of ``package`` ("" for
    a top-level module); None when it climbs above the tree."""
    if not node.level:
        return node.module
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts) or (node.level - 1 == len(parts) and not node.module):
        return None
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])]) or None
