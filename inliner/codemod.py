"""LibCST codemod entry: run inliner through ``python -m libcst.tool codemod``.

Usage (``-x`` names the class by module path; ``--no-format`` keeps libcst from
running black over the result; inliner's output needs no formatting)::

    python -m libcst.tool codemod -x inliner.codemod.Flatten --no-format src/
    python -m libcst.tool codemod -x inliner.codemod.Flatten --no-format --select MyFn src/

Without ``-x``, list ``inliner`` under ``modules:`` in ``.libcst.codemod.yaml``
(see ``python -m libcst.tool initialize``) and name the command ``codemod.Flatten``.

The codemod is a thin adapter over ``inliner.engine.flatten``: a file with nothing
to flatten is skipped, refusals become codemod warnings, an engine error fails the
file. The ``inliner`` command line is the better tool (``--check``, ``--diff``,
safety checks, encodings); this exists for pipelines that already run codemods.
"""

from __future__ import annotations

import argparse
import os

import libcst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from inliner.engine import Selection, flatten
from inliner.engine.analysis.compile_overrides import engine_options


class FlattenError(Exception):
    """The engine could not process the file."""


class Flatten(CodemodCommand):
    DESCRIPTION: str = "Flatten torch.autograd.Function subclasses into plain forward/backward functions (inliner)."

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument(
            "--select",
            dest="select",
            metavar="NAME|PATH:LINE",
            default=None,
            help="only the Function class NAME, or the class / op call at LINE (with PATH, only in that file)",
        )

    def __init__(self, context: CodemodContext, select: str | None = None) -> None:
        super().__init__(context)
        self.select: Selection | None = None
        self.select_path: str | None = None
        if select:
            self.select, self.select_path = Selection.parse_with_path(select)

    def transform_module_impl(self, tree: libcst.Module) -> libcst.Module:
        filename = self.context.filename
        if self.select_path is not None and (
            filename is None or os.path.realpath(filename) != os.path.realpath(self.select_path)
        ):
            raise SkipFile(f"not the file named by --select ({self.select_path})")
        code = tree.code
        try:
            options = engine_options(filename)
        except ValueError as exc:  # a bad [tool.inliner] compile table
            raise FlattenError(str(exc)) from None
        result = flatten(code, path=filename or "<stdin>", select=self.select, **options)
        for diagnostic in result.diagnostics:
            if getattr(diagnostic.severity, "value", diagnostic.severity) != "info":
                self.warn(diagnostic.format())
        if result.error is not None:
            raise FlattenError(result.error)
        if result.source == code:
            raise SkipFile("nothing to flatten")
        # Keep the module's encoding, newline and indent defaults for writing back.
        return libcst.parse_module(result.source, config=tree.config_for_parsing)
