"""Which classes of a hooked module other modules of its package derive from.

The engine is told so that those bases stay Functions (``inliner.subclassed``). The
pass reads the whole package (the module's top-level one, found from its name and
file), so its answer is kept once per process and, like the rewritten code, on disk:
``__pycache__/inliner-subclassed.<version>.json`` in the package's directory, keyed
on a hash of every module's name and bytes and on the engine's fingerprint. Reading and
hashing the files is all a hit costs (the pass itself parses only what may matter, but
a large package still takes seconds). Failures to read or write it are ignored.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from collections.abc import Mapping

from inliner.hook import _cache
from inliner.subclassed import Source, for_module, package_files, package_root, read_sources, subclassed_in_sources


def subclassed_for(path: str, module: str) -> dict[str, str]:
    """What ``module``'s own classes are subclassed by, in its package (``{}`` outside one)."""
    found = package_root(path, module)
    if found is None:
        return {}
    root, name = found
    return for_module(package_subclassed(str(root), name), module)


@functools.lru_cache(maxsize=16)
def package_subclassed(root: str, name: str) -> dict[str, str]:
    """``subclassed_in`` the package at ``root``, from the disk cache when its files are unchanged."""
    sources = read_sources(package_files(root, name))
    key = _key(sources)
    where = _cache_file(root)
    if key is not None and where is not None:
        hit = _read(where, key)
        if hit is not None:
            return hit
    found = subclassed_in_sources(sources)
    if key is not None and where is not None:
        _write(where, key, found)
    return found


def _key(sources: Mapping[str, Source]) -> str | None:
    fingerprint = _cache.engine_fingerprint()
    if fingerprint is None:
        return None
    parts = [fingerprint]
    for module in sorted(sources):
        source = sources[module]
        parts += [module.encode(), b"p" if source.is_package else b"m", source.data or b"<unreadable>"]
    return importlib.util.source_hash(b"\0".join(parts)).hex()


def _cache_file(root: str) -> str | None:
    """Next to the package's own ``__init__`` bytecode (following ``sys.pycache_prefix``)."""
    try:
        normal = importlib.util.cache_from_source(os.path.join(root, "__init__.py"))
    except (NotImplementedError, ValueError):
        return None
    return os.path.join(os.path.dirname(normal), f"inliner-subclassed.{_cache.TAG}.json")


def _read(path: str, key: str) -> dict[str, str] | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    found = data.get("subclassed") if isinstance(data, dict) and data.get("key") == key else None
    if not isinstance(found, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in found.items()):
        return None
    return found


def _write(path: str, key: str, found: dict[str, str]) -> None:
    """Atomically (temp file + rename); any failure is ignored."""
    _cache.write_atomically(path, json.dumps({"key": key, "subclassed": found}).encode("utf-8"))
