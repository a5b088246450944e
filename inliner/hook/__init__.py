"""The import hook: flatten the named packages in memory as they are imported.

For code that cannot or will not be rewritten on disk. Modelled on pytest's
assertion-rewriting hook: a meta-path finder that claims only the modules it was
asked for (never ``inliner`` itself, nor the ``torch`` its output imports), hands every other import back to the
normal machinery untouched, caches its bytecode next to the ``.pyc``
(``inliner.hook._cache``: keyed on a hash of the source and a fingerprint of the
engine) and compiles so that tracebacks show the lines the user
wrote (``inliner.hook._linemap``). Files on disk are never changed.

    handle = inliner.hook.install(["mypkg", "other.sub"])   # or: with install(...):
    handle.uninstall()

``INLINER_HOOK=mypkg,other python script.py`` does the same with no code change:
the wheel ships the start-up line (``inliner-hook.pth``; ``inliner.hook._pth``).

An import never fails because of the hook: what the engine cannot flatten is
imported as written, with one ``InlinerHookWarning`` per module saying why.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from importlib.machinery import ModuleSpec, SourceFileLoader
from types import CodeType, ModuleType

from inliner.hook import _cache

__all__ = [
    "HookHandle",
    "InlinerHookWarning",
    "install",
    "install_from_env",
    "install_pth",
    "uninstall_pth",
]

ENV_VAR = "INLINER_HOOK"
# Never flattened: the hook, the engine and the runtime (and torch, which flattened
# code imports through the runtime) must load as written.
_NEVER = ("inliner", "torch")
_busy = threading.local()  # set while the engine runs: what it imports loads as written


class InlinerHookWarning(UserWarning):
    """A module imported under the hook was not (fully) flattened; the message says why."""


def _names(packages: str | Iterable[str]) -> tuple[str, ...]:
    if isinstance(packages, str):
        packages = packages.split(",")
    names: list[str] = []
    never: list[str] = []
    for raw in packages:
        name = raw.strip()
        if not name:
            continue
        if not all(part.isidentifier() for part in name.split(".")):
            raise ValueError(f"not a module name: {raw!r}")
        (never if name.partition(".")[0] in _NEVER else names).append(name)
    if never:
        warnings.warn(
            f"not hooked: {', '.join(never)} (inliner and torch always load as written)",
            InlinerHookWarning,
            stacklevel=3,
        )
    return tuple(dict.fromkeys(names))


class _Finder:
    """Meta-path finder: for a named module, wrap the spec the rest of ``sys.meta_path`` finds."""

    def __init__(self, packages: tuple[str, ...], *, cache: bool) -> None:
        self.packages = packages
        self.cache = cache
        self._roots = frozenset(name.partition(".")[0] for name in packages)
        self._exact = frozenset(packages)
        self._prefixes = tuple(name + "." for name in packages)

    def wants(self, fullname: str) -> bool:
        if fullname.partition(".")[0] not in self._roots:  # the fast path for every other import
            return False
        return fullname in self._exact or fullname.startswith(self._prefixes)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not self.wants(fullname):
            return None
        spec = self._spec_from_the_others(fullname, path, target)
        if spec is None or type(spec.loader) is not SourceFileLoader or not spec.has_location:
            return spec  # not a plain .py file (extension, namespace, zip...): as the others found it
        spec.loader = _Loader(fullname, spec.loader.path, cache=self.cache)
        spec.cached = _cache.cache_path(spec.loader.path) if self.cache else None  # -> __cached__
        return spec

    def _spec_from_the_others(self, fullname: str, path, target) -> ModuleSpec | None:
        """Ask the finders after this one, as the import system would if it returned None."""
        meta_path = list(sys.meta_path)
        start = meta_path.index(self) + 1 if self in meta_path else 0
        for finder in meta_path[start:]:
            if isinstance(finder, _Finder):
                continue
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None

    def invalidate_caches(self) -> None:
        pass


class _Loader(SourceFileLoader):
    """A ``SourceFileLoader`` whose code is the flattened source (resources, ``get_source`` unchanged)."""

    def __init__(self, fullname: str, path: str, *, cache: bool = True) -> None:
        super().__init__(fullname, path)
        self._use_cache = cache

    def get_code(self, fullname: str) -> CodeType | None:
        source_path = self.get_filename(fullname)
        if getattr(_busy, "engine", False):
            return super().get_code(fullname)
        data = self.get_data(source_path)
        try:
            options, problem = _engine_options(source_path, fullname)
        except _PackageUnread as exc:  # a bug in the pass over the package: better as written than wrong
            _warn((f"{exc}; imported as written", 1), source_path, fullname)
            return super().get_code(fullname)
        cache_path = _cache.cache_path(source_path) if self._use_cache else None
        settings = _settings(options)
        key = _cache.key(data, settings) if cache_path is not None else None  # these bytes, settings, engine
        if cache_path is not None and key is not None:
            hit = _cache.read(cache_path, key)
            if hit is not None:
                warning, code = hit
                _warn(warning, source_path, fullname)
                return code
        code, warning = _transform(data, source_path, self, options, problem)
        if cache_path is not None and key is not None:
            sources = options.get("sources")
            _cache.write(cache_path, key, source_path, warning, code, dict(sources.read) if sources else {})
        _warn(warning, source_path, fullname)
        return code


class _PackageUnread(Exception):
    """The pass over the module's package failed: which of its classes are bases is unknown."""


def _engine_options(source_path: str, fullname: str) -> tuple[dict, str | None]:
    """The module name, the project's ``[tool.inliner] compile`` table (a bad table is
    reported in the module's warning and ignored) and which of the module's classes other
    modules of its package derive from (``inliner.hook._bases``: read once per package)."""
    from inliner.engine.analysis.compile_overrides import engine_options
    from inliner.hook._bases import subclassed_for
    from inliner.project_sources import ProjectSources
    from inliner.style import find_line_length

    try:
        subclassed = subclassed_for(source_path, fullname) or None
    except Exception as exc:
        raise _PackageUnread(f"inliner could not read this module's package ({type(exc).__name__}: {exc})") from exc
    found = {"module": fullname, "subclassed": subclassed, "sources": ProjectSources.of_file(source_path, fullname)}
    try:
        options = engine_options(source_path)
    except ValueError as exc:
        told = {"compile_overrides": None, "line_length": find_line_length(source_path)}
        return {**told, **found}, f"{exc}; ignored"
    return {**options, **found}, None


def _settings(options: dict) -> bytes:
    """What the engine is told besides the source, for the cache key: editing the table, the
    line length, or a subclass appearing in another module, rewrites the module again."""
    told = [repr(options["compile_overrides"])] if options["compile_overrides"] else []
    told += [repr(sorted(options["subclassed"].items()))] if options["subclassed"] else []
    told += [f"line_length={options['line_length']}"]
    return "\0".join(told).encode()


def _transform(
    data: bytes, source_path: str, loader: SourceFileLoader, options: dict, problem: str | None = None
) -> tuple[CodeType, _cache.CachedWarning]:
    """Flatten and compile; on any trouble compile the file as written and say why.

    A file Python itself cannot compile raises its own SyntaxError, as without the hook.
    """
    from inliner import engine  # only on a cache miss: a cache hit never loads the engine
    from inliner.engine.diagnostics import Severity
    from inliner.hook._linemap import compile_mapped

    def as_written(reason: str, line: int = 1) -> tuple[CodeType, _cache.CachedWarning]:
        code = loader.source_to_code(data, source_path)
        return code, (f"{reason}; imported as written", line)

    try:
        source = importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError):  # undecodable: Python says why, as without the hook
        return loader.source_to_code(data, source_path), None
    _busy.engine = True
    try:
        result = engine.flatten(source, path=source_path, **options)  # never raises: an engine bug is in the result
    finally:
        _busy.engine = False
    if result.error is not None:
        return as_written(f"inliner could not process this module: {result.error}")
    refused = [d for d in result.diagnostics if d.severity is not Severity.INFO]
    warning = None
    if refused:
        what = "with the rest flattened" if result.changed else "as written"
        lines = "\n".join(f"  {d.format()}" for d in refused)
        names = ", ".join(dict.fromkeys(d.name or "?" for d in refused))
        warning = (f"inliner left {names} untouched; imported {what}:\n{lines}", refused[0].line)
    if problem is not None:
        warning = (problem + ("\n" + warning[0] if warning else ""), warning[1] if warning else 1)
    if not result.changed:
        return loader.source_to_code(data, source_path), warning
    try:
        return compile_mapped(result, source_path), warning
    except Exception as exc:  # the rewritten text does not compile: an engine bug
        return as_written(f"inliner produced code that does not compile ({type(exc).__name__}: {exc})")


def _warn(warning: _cache.CachedWarning, source_path: str, fullname: str) -> None:
    if warning is not None:
        message, line = warning
        warnings.warn_explicit(f"{fullname}: {message}", InlinerHookWarning, source_path, line, module=fullname)


class HookHandle:
    """What ``install`` returns: ``uninstall()`` it, or use it as a context manager."""

    def __init__(self, finder: _Finder) -> None:
        self._finder = finder

    @property
    def packages(self) -> tuple[str, ...]:
        return self._finder.packages

    @property
    def installed(self) -> bool:
        return any(f is self._finder for f in sys.meta_path)

    def uninstall(self) -> None:
        """Stop flattening new imports; modules already imported stay as they are."""
        sys.meta_path[:] = [f for f in sys.meta_path if f is not self._finder]

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.uninstall()

    def __repr__(self) -> str:
        state = "installed" if self.installed else "uninstalled"
        return f"<inliner.hook.HookHandle {','.join(self.packages)} ({state})>"


def install(packages: str | Iterable[str], *, cache: bool = True) -> HookHandle:
    """Flatten ``packages`` (and their submodules) from now on, as they are imported.

    ``packages`` is a list of dotted names or one comma-separated string. Modules
    already imported are not re-imported; the hook warns about them.
    ``cache=False`` neither reads nor writes the bytecode cache.
    """
    finder = _Finder(_names(packages), cache=cache)
    already = sorted(name for name in list(sys.modules) if finder.wants(name))
    if already:
        warnings.warn(
            f"already imported, so not flattened: {', '.join(already)}; install the hook before importing them",
            InlinerHookWarning,
            stacklevel=2,
        )
    sys.meta_path.insert(0, finder)
    return HookHandle(finder)


_from_env: HookHandle | None = None


def install_from_env(environ: Mapping[str, str] | None = None) -> HookHandle | None:
    """Install the hook for ``$INLINER_HOOK`` (comma-separated packages), once per process."""
    global _from_env
    value = (os.environ if environ is None else environ).get(ENV_VAR, "")
    if not value.strip():
        return None
    if _from_env is not None and _from_env.installed:
        return _from_env
    _from_env = install(value)
    return _from_env


def install_pth(directory: str | os.PathLike[str] | None = None, *, user: bool = False):
    """Write the start-up line that makes ``INLINER_HOOK`` work (see ``inliner.hook._pth``)."""
    from inliner.hook._pth import install_pth as _install

    return _install(directory, user=user)


def uninstall_pth(directory: str | os.PathLike[str] | None = None, *, user: bool = False):
    """Remove the start-up line written by ``install_pth``."""
    from inliner.hook._pth import uninstall_pth as _uninstall

    return _uninstall(directory, user=user)
