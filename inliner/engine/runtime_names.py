"""What the runtime's callables are called in a module, and the import line that binds them.

A module of its own so the orchestrator (``rewrite``) and the two lowerings (a class's,
an op call's) share the names without importing each other."""

from __future__ import annotations

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

    @staticmethod
    def choose(taken: set[str]) -> RuntimeNames:
        """The names the runtime's callables get in the module (taken from now on)."""
        runtime_name = RUNTIME_NAME if RUNTIME_NAME not in taken else fresh("_inliner_custom_vjp", taken)
        taken.add(runtime_name)
        flat_class_name = FLAT_CLASS_NAME if FLAT_CLASS_NAME not in taken else fresh("_InlinerFlatClass", taken)
        taken.add(flat_class_name)
        record_name = RECORD_NAME if RECORD_NAME not in taken else fresh("_inliner_Record", taken)
        taken.add(record_name)
        return RuntimeNames(runtime_name, flat_class_name, record_name)


def runtime_import_line(candidates: list[Candidate], names: RuntimeNames, newline: str) -> str:
    """``from inliner.runtime import ...``: what the flattened candidates use, as the module names it."""
    needs_flat_class = any(isinstance(c.outcome, CustomVJP) and c.outcome.kept and c.base is None for c in candidates)
    uses_record = any(isinstance(c.outcome, CustomVJP) and c.outcome.spec.ctx_record for c in candidates)
    imported = [(RUNTIME_NAME, names.custom_vjp)]
    imported += [(FLAT_CLASS_NAME, names.flat_class)] if needs_flat_class else []
    imported += [(RECORD_NAME, names.record)] if uses_record else []
    spelled = sorted(name if bound == name else f"{name} as {bound}" for name, bound in imported)
    return f"from {RUNTIME_MODULE} import {', '.join(spelled)}{newline}"
