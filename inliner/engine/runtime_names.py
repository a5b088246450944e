"""What the runtime's callables are called in a module, and the import line that binds them.

A module of its own so the orchestrator (``rewrite``) and the two lowerings (a class's,
an op call's) share the names without importing each other."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inliner.engine.candidate import Candidate
from inliner.engine.model import CustomVJP
from inliner.engine.names import fresh

RUNTIME_MODULE = "inliner.runtime"
RUNTIME_NAME = "custom_vjp"
FLAT_CLASS_NAME = "FlatClass"
RECORD_NAME = "Record"


@dataclass(frozen=True)
class RuntimeNames:
    custom_vjp: str
    flat_class: str
    record: str
    imported: frozenset[str] = frozenset()  # the runtime's names the module's imports already bind

    @staticmethod
    def choose(taken: set[str], imported: Mapping[str, str]) -> RuntimeNames:
        """The names the runtime's callables get in the module (taken from now on): the ones
        its imports bind them to for good (``imported``), else their own, else fresh ones."""

        def name(runtime: str, alias: str) -> str:
            chosen = imported.get(runtime) or (runtime if runtime not in taken else fresh(alias, taken))
            taken.add(chosen)
            return chosen

        custom_vjp = name(RUNTIME_NAME, "_inliner_custom_vjp")
        flat_class = name(FLAT_CLASS_NAME, "_InlinerFlatClass")
        record = name(RECORD_NAME, "_inliner_Record")
        return RuntimeNames(custom_vjp, flat_class, record, frozenset(imported))


def runtime_import_line(candidates: list[Candidate], names: RuntimeNames, newline: str) -> str | None:
    """``from inliner.runtime import ...``: what the flattened candidates use, as the module names
    it, and its imports do not bind yet (``None``: they bind it all)."""
    needs_flat_class = any(isinstance(c.outcome, CustomVJP) and c.outcome.kept and c.base is None for c in candidates)
    uses_record = any(isinstance(c.outcome, CustomVJP) and c.outcome.spec.ctx_record for c in candidates)
    imported = [(RUNTIME_NAME, names.custom_vjp)]
    imported += [(FLAT_CLASS_NAME, names.flat_class)] if needs_flat_class else []
    imported += [(RECORD_NAME, names.record)] if uses_record else []
    imported = [(name, bound) for name, bound in imported if name not in names.imported]
    if not imported:
        return None
    spelled = sorted(name if bound == name else f"{name} as {bound}" for name, bound in imported)
    return f"from {RUNTIME_MODULE} import {', '.join(spelled)}{newline}"
