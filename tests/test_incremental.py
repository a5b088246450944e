"""A cache changes how fast ``flatten`` answers, never what it answers.

Each golden input is flattened with one cache across a series of edits an editor
would send -- lines shifted, one Function's body changed, a module-level name taking
the name the rewrite chose, an import changing what a decorator means -- and every
result is compared with a fresh run on the same text.
"""

from __future__ import annotations

import ast
import re

import pytest

from golden import GOLDEN
from inliner.engine import Cancelled, FlattenCache, FlattenResult, flatten

CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.py").exists())


def _same(cached: FlattenResult, fresh: FlattenResult) -> None:
    assert cached.source == fresh.source
    assert cached.diagnostics == fresh.diagnostics
    assert (cached.flattened, cached.refused, cached.error, cached.changed) == (
        fresh.flattened,
        fresh.refused,
        fresh.error,
        fresh.changed,
    )
    assert cached.targets == fresh.targets
    assert [(e.start, e.end, e.text, e.origin) for e in cached.edits] == [
        (e.start, e.end, e.text, e.origin) for e in fresh.edits
    ]
    if fresh.edits:
        assert cached.line_map == fresh.line_map


def _insert_line(text: str, line: int, content: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[: line - 1] + [content + "\n"] + lines[line - 1 :])


def _versions(text: str) -> list[str]:
    """What an editor might send next, one version after the other."""
    versions = [text, "# a comment\n\n" + text]  # every line moves down
    tree = ast.parse(text)
    statements = tree.body
    if len(statements) > 2:  # lines after the middle move, lines before do not
        middle = statements[len(statements) // 2]
        first = min([middle.lineno, *(d.lineno for d in getattr(middle, "decorator_list", ()))])
        versions.append(_insert_line(versions[-1], first + 2, "# moved"))
    for node in ast.walk(ast.parse(versions[-1])):  # each forward gets one more statement
        if isinstance(node, ast.FunctionDef) and node.name == "forward" and node.body[0].lineno > node.lineno:
            indent = " " * node.body[0].col_offset
            versions.append(_insert_line(versions[-1], node.body[0].lineno, f"{indent}_probe = None"))
            break
    fwd_names = re.findall(r"^def (\w+_fwd)\(", flatten(versions[-1]).source, re.MULTILINE)
    if fwd_names:  # a module-level definition takes the name the rewrite chose
        versions.append(versions[-1] + f"\n\ndef {fwd_names[0]}():\n    return None\n")
    versions.append(versions[0])  # and back
    return versions


@pytest.mark.parametrize("case", CASES)
def test_cached_runs_answer_what_fresh_runs_answer(case):
    cache = FlattenCache()
    for version in _versions((GOLDEN / case / "input.py").read_text()):
        fresh = flatten(version, path="m.py")
        _same(flatten(version, path="m.py", cache=cache, diagnostics_only=True), _quick(fresh))
        _same(flatten(version, path="m.py", cache=cache), fresh)
    assert cache.hits or not cache.misses, "what was lowered was reused"


def _quick(result: FlattenResult) -> FlattenResult:
    """What a diagnostics-only run answers for the text ``result`` was made from."""
    if result.error is not None or not result.flattened:
        return result
    original = result.original
    assert original is not None
    return FlattenResult(original, result.diagnostics, result.flattened, result.refused, targets=result.targets, emitted=False)


def test_an_import_changing_what_a_decorator_means_is_seen():
    function = '''
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        return g * 3
'''
    known = "import torch\nfrom torch.autograd.function import once_differentiable\n" + function
    unknown = "import torch\nfrom mylib import once_differentiable\n" + function
    cache = FlattenCache()
    first = flatten(known, cache=cache)
    assert first.flattened == ("Scale",)
    second = flatten(unknown, cache=cache)
    _same(second, flatten(unknown))
    assert second.refused == ("Scale",)  # the class text did not change; what its decorator names did


def test_stop_cancels_between_classes_and_keeps_the_work_done():
    text = (GOLDEN / "basic_linear" / "input.py").read_text()
    text = text + "\n\n" + text.replace("MyLinear", "Other")
    cache = FlattenCache()
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 1  # let the first class through, then stop

    with pytest.raises(Cancelled):
        flatten(text, cache=cache, stop=stop)
    assert cache.misses == 1
    _same(flatten(text, cache=cache), flatten(text))
    assert cache.hits == 1


def test_diagnostics_only_emits_nothing():
    text = (GOLDEN / "basic_linear" / "input.py").read_text()
    quick = flatten(text, diagnostics_only=True)
    assert quick.flattened == ("MyLinear",) and not quick.emitted
    assert quick.source == text and quick.edits == () and not quick.changed


@pytest.mark.parametrize("seed", range(25))
def test_cached_runs_answer_what_fresh_runs_answer_on_generated_modules(seed):
    """The same, on the fuzzer's random Functions (many shapes, many refusals)."""
    from fuzz_gen import KNOWN_BUGS, generate_from_seed

    cache = FlattenCache()
    for version in _versions(generate_from_seed(seed, frozenset(KNOWN_BUGS)).source):
        fresh = flatten(version, path="m.py")
        _same(flatten(version, path="m.py", cache=cache, diagnostics_only=True), _quick(fresh))
        _same(flatten(version, path="m.py", cache=cache), fresh)
