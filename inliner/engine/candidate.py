"""What the rewrite found to flatten, a ``Function`` class or an op call, and what became of it.

A module of its own so the orchestrator (``rewrite``) and the class-family decisions
(``function_class.family``) share it without importing each other."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from inliner.engine.analysis.compile_kind import CompileKind
from inliner.engine.function_class.lower_function import Inherited
from inliner.engine.incremental import Lowering
from inliner.engine.model import CustomVJP, Refusal
from inliner.engine.op_call.hop_calls import HopCall
from inliner.engine.op_call.splice import HOP_LEAF
from inliner.engine.source import Block


@dataclass
class Candidate:
    kind: str  # "class" | "call"
    name: str
    first_line: int  # 1-based, decorators included
    last_line: int
    name_position: tuple[int, int, int]  # line, char column, end char column (0-based columns)
    node: ast.ClassDef | ast.Call
    outcome: CustomVJP | Refusal | None = None
    refusal_position: tuple[int, int, int, int] | None = None  # lines 1-based, char columns 0-based
    apply_sites: list[ast.Attribute] = field(default_factory=list)
    hop: HopCall | None = None
    base: Candidate | None = None  # a class deriving from a Function class of the same scope
    inherited: Inherited | None = None  # what its subclasses take from it, once lowered
    block: Block | None = None  # its parsed text, once lowered
    decorator_generations: dict[cst.CSTNode, int] = field(default_factory=dict)  # decorator -> generation of its class
    compile: CompileKind | None = None  # set once flattened
    lowering: Lowering | None = None  # its lowering (a subclass's key names its base's)
    generation: int = 0  # how many same-scope Function bases it has

    @property
    def label(self) -> str:
        if self.kind == "class":
            return f"class {self.name}"
        return HOP_LEAF + " call" + ("" if self.name == HOP_LEAF else f" ({self.name})")
