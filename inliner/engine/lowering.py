"""What lowering a class and lowering an op call share: how this run goes (``Run``), a
lowering as its candidate's outcome (``lowered``), where a refusal points in the file
(``positions_from``), an engine bug as a refusal (``internal_refusal``).

A module of its own so the orchestrator (``rewrite``) and the two lowerings share it
without importing each other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from inliner.engine.candidate import Candidate
from inliner.engine.codes import Code
from inliner.engine.diagnostics import internal_error
from inliner.engine.incremental import Cancelled, FlattenCache, Lowering, relocated
from inliner.engine.model import CustomVJP, Refusal, Refuse


@dataclass
class Run:
    """How this call runs: what it may reuse, whether it emits code, when to give up."""

    cache: FlattenCache
    diagnostics_only: bool = False
    stop: Callable[[], bool] | None = None
    line_length: int = 88  # what black formats the engine's lines to (the file's project's own)

    def check(self) -> None:
        if self.stop is not None and self.stop():
            raise Cancelled()


def lowered(candidate: Candidate, lowering: Lowering) -> CustomVJP:
    """The candidate's lowering as its outcome: the flat form, or the refusal raised again."""
    if isinstance(lowering.outcome, Refusal):
        candidate.refusal_position = relocated(lowering, candidate.first_line)
        raise Refuse(lowering.outcome.code, lowering.outcome.reason, lowering.outcome.node)
    candidate.outcome = lowering.outcome
    return lowering.outcome


class positions_from:
    """Record where a refusal raised inside the lowering points to, in file coordinates
    (the refused node lies in one of ``blocks``)."""

    def __init__(self, candidate: Candidate, *blocks) -> None:
        self.candidate = candidate
        self.blocks = blocks

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if isinstance(exc, Refuse) and exc.refusal.node is not None:
            for block in self.blocks:
                try:
                    self.candidate.refusal_position = block.position(exc.refusal.node)
                    break
                except KeyError:
                    continue  # not in this block (or synthesized by the lowering: report at the name)
        return False


def internal_refusal(exc: Exception) -> Refusal:
    return Refusal(
        Code.INTERNAL_ERROR, f"internal error ({internal_error(exc)}); please report this as an inliner bug", None
    )
