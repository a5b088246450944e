"""Run a callback right after a module is first imported, without importing it.

The runtime registers flat callables with dynamo and thunder only once those are loaded
(importing ``torch._dynamo`` costs about two seconds, which code that never compiles must
not pay); ``_dynamo`` waits the same way for inductor's decompositions.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from typing import Any

_import_callbacks: dict[str, list[Callable[[Any], None]]] = {}


def _after_import(module_name: str, callback: Callable[[Any], None]) -> None:
    """Run ``callback(module)`` right after ``module_name`` is first imported (once per callback)."""
    callbacks = _import_callbacks.setdefault(module_name, [])
    if callback in callbacks:
        return
    callbacks.append(callback)
    if not any(isinstance(f, _ImportWatcher) for f in sys.meta_path):
        sys.meta_path.insert(0, _ImportWatcher())


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Lets the real finders find the module, then wraps its loader to run the callbacks."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        callbacks = _import_callbacks.pop(fullname, None)
        if callbacks is None:
            return None
        if not _import_callbacks:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)  # our own entry is gone: the real finders answer
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _CallbackLoader(spec.loader, callbacks)
        return spec


class _CallbackLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, callbacks: list[Callable[[Any], None]]) -> None:
        self._loader = loader
        self._callbacks = callbacks

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self._loader
        for callback in self._callbacks:
            callback(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code, is_package...
        return getattr(self._loader, name)
