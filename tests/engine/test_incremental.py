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

from inliner.engine import Cancelled, FlattenCache, FlattenResult, flatten
from tests.support.golden import GOLDEN

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
    assert cached.compile_kinds == fresh.compile_kinds
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
    return FlattenResult(
        original, result.diagnostics, result.flattened, result.refused, targets=result.targets, emitted=False,
        compile_kinds=result.compile_kinds,
    )  # fmt: skip


def test_an_import_changing_what_a_decorator_means_is_seen():
    function = """
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        return g * 3
"""
    known = "import torch\nfrom torch.autograd.function import once_differentiable\n" + function
    unknown = "import torch\nfrom mylib import once_differentiable\n" + function
    cache = FlattenCache()
    first = flatten(known, cache=cache)
    assert first.flattened == ("Scale",)
    second = flatten(unknown, cache=cache)
    _same(second, flatten(unknown))
    # the class text did not change; what its decorator names did: an unknown wrapper is replayed (side effecting: not seen into)
    assert [kind.kind for _, kind in first.compile_kinds] == ["traceable"]
    assert [kind.kind for _, kind in second.compile_kinds] == ["side_effecting"]


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
    from tests.support.fuzz_gen import KNOWN_BUGS, generate_from_seed

    cache = FlattenCache()
    for version in _versions(generate_from_seed(seed, frozenset(KNOWN_BUGS)).source):
        fresh = flatten(version, path="m.py")
        _same(flatten(version, path="m.py", cache=cache, diagnostics_only=True), _quick(fresh))
        _same(flatten(version, path="m.py", cache=cache), fresh)


# -- what a lowering reads outside its own text --------------------------------------------
#
# Each series keeps one candidate's text unchanged while something elsewhere in the module
# changes what its lowering (or its compile kind, or its kept-class decision) must be. A
# cache that reused the first lowering would answer the first version again; each test
# also checks that the fresh answers really differ, so it cannot pass vacuously.


def _series(versions: list[str]) -> list[FlattenResult]:
    """Every version flattened with one cache (quick run, then full run) and fresh; the fresh results."""
    cache = FlattenCache()
    fresh_results = []
    for version in versions:
        fresh = flatten(version, path="m.py")
        _same(flatten(version, path="m.py", cache=cache, diagnostics_only=True), _quick(fresh))
        _same(flatten(version, path="m.py", cache=cache), fresh)
        fresh_results.append(fresh)
    assert cache.hits, "something was reused"
    return fresh_results


def _distinct(results: list[FlattenResult], what=lambda r: (r.source, r.diagnostics)) -> None:
    seen = [what(r) for r in results]
    assert all(a != b for a, b in zip(seen, seen[1:])), "each edit changes the answer"


FAMILY = """import torch


class Base(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * {factor}

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Sub(Base):
    @staticmethod
    def backward(ctx, g):
        return g * 3
"""


def test_a_subclass_follows_an_edit_of_its_base():
    versions = [
        FAMILY.format(factor="2"),
        FAMILY.format(factor="5"),  # Sub's text is the same; the forward it inherits is not
        FAMILY.format(factor="2").replace("return x * 2", "return super().forward(ctx, x)"),  # the family is refused
        FAMILY.format(factor="2"),
    ]
    results = _series(versions)
    _distinct(results)
    assert "x * 5" in results[1].source.split("class Sub")[-1] or results[1].source.count("x * 5") == 2
    assert results[2].refused == ("Base", "Sub")
    assert results[3].flattened == ("Base", "Sub")


USES = """import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def run(x):
    {use}
    return F.apply(x)
"""


def test_a_use_of_the_class_elsewhere_changes_the_decision():
    uses = ["pass", "F._helper = 1", "assert isinstance(x, F)", "pass", "registry = [F]", "pass"]
    results = _series([USES.format(use=use) for use in uses])
    _distinct(results)
    assert results[0].flattened == ("F",) and "F.apply" not in results[0].source  # a flat callable
    assert results[1].flattened == ("F",) and "F.apply" in results[1].source  # kept as a class
    assert results[2].refused == ("F",)  # only a Function answers isinstance
    assert results[3].source == results[0].source


HELPER = """import torch


def scaled(x):
    {body}
    return x * 3


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return scaled(x)

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""


def test_an_edit_of_a_helper_forward_calls_changes_the_compile_kind():
    bodies = ["pass", "print(x)", "pass"]
    results = _series([HELPER.format(body=body) for body in bodies])
    kinds = [[kind.kind for _, kind in r.compile_kinds] for r in results]
    assert kinds[0] == kinds[2] == ["traceable"]
    assert kinds[1] != ["traceable"]
    _distinct(results)


RECORD_HELPER = """import torch


def keep(ctx, x):
    {body}


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        keep(ctx, x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x
"""


def test_an_edit_of_a_helper_given_ctx_is_seen():
    bodies = ["ctx.save_for_backward(x)", "ctx.save_for_backward(x)\n    yield", "ctx.save_for_backward(x)"]
    results = _series([RECORD_HELPER.format(body=body) for body in bodies])
    _distinct(results)
    assert results[0].flattened == ("F",) and results[1].refused == ("F",)


def test_a_pragma_on_the_class_line_is_seen():
    plain = USES.format(use="pass")
    line = "class F(torch.autograd.Function):"
    versions = [
        plain,
        plain.replace(line, line + "  # inliner: compile=opaque"),
        plain.replace(line, line + "  # inliner: compile=fast"),
        plain,
    ]
    results = _series(versions)
    _distinct(results)
    assert [kind.kind for _, kind in results[1].compile_kinds] == ["opaque"]
    assert any(d.code == "INL300" for d in results[2].diagnostics)


def test_the_project_table_and_the_module_name_are_seen():
    from inliner.engine.analysis.compile_overrides import CompileOverrides

    text = USES.format(use="pass")
    table = CompileOverrides.from_table({"pkg.m.F": "side-effecting"})
    cache = FlattenCache()
    answers = []
    for module, overrides in [(None, None), ("pkg.m", table), ("pkg.other", table), ("pkg.m", None)]:
        fresh = flatten(text, path="m.py", module=module, compile_overrides=overrides)
        _same(flatten(text, path="m.py", cache=cache, module=module, compile_overrides=overrides), fresh)
        answers.append([kind.kind for _, kind in fresh.compile_kinds])
    assert answers == [["traceable"], ["side_effecting"], ["traceable"], ["traceable"]]


AMP = """import functools

import torch

custom_fwd = {alias}


class Mm(torch.autograd.Function):
    @staticmethod
    @custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.t(), a.t() @ g
"""


def test_the_module_level_alias_of_custom_fwd_is_seen():
    aliases = [
        'functools.partial(torch.amp.custom_fwd, device_type="cpu")',
        'functools.partial(torch.amp.custom_fwd, device_type="cuda")',  # the same kind of alias
        "functools.partial(print)",  # no longer torch's decorator: an unknown wrapper
        'functools.partial(torch.amp.custom_fwd, device_type="cpu")',
    ]
    results = _series([AMP.format(alias=alias) for alias in aliases])
    kinds = [[kind.kind for _, kind in r.compile_kinds] for r in results]
    assert kinds[0] == kinds[1] == kinds[3] == ["traceable"]
    assert kinds[2] == ["side_effecting"]


GLOBAL = """import torch

SCALE = 2.0
{mutation}

class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * SCALE

    @staticmethod
    def backward(ctx, g):
        return g * SCALE
"""


def test_a_module_level_name_mutated_in_some_function_is_seen():
    plain, changing = "\ndef bump():\n    return SCALE\n", "\ndef bump():\n    global SCALE\n    SCALE += 1\n"
    mutations = [
        "",
        changing,
        "",
        plain,
        changing,
        plain,
        "\ndef bump(d):\n    d[0] = SCALE\n",
        plain.replace("return", "SCALE.append(1)\n    return"),
    ]
    results = _series([GLOBAL.format(mutation=m) for m in mutations])
    kinds = [[kind.kind for _, kind in r.compile_kinds] for r in results]
    assert kinds == [
        ["traceable"],
        ["opaque"],
        ["traceable"],
        ["traceable"],
        ["opaque"],
        ["traceable"],
        ["traceable"],
        ["opaque"],
    ]


INHERITED = """import torch


def wrap(f):
    return f


class Base(torch.autograd.Function):
    @staticmethod
    @wrap
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Sub(Base):
    @staticmethod
    def backward(ctx, g):
        return g * 3
"""


def test_a_refusal_for_an_inherited_decorator_moves_with_the_subclass():
    # Sub is refused for the decorator it inherits from Base, reported at Sub (the
    # decorator's line is Base's text, which a cached lowering of Sub does not follow)
    versions = [
        INHERITED,
        INHERITED.replace("\n\nclass Sub", "\n\n# moved\n\nclass Sub"),
        "# a comment\n\n" + INHERITED,
        INHERITED,
    ]
    results = _series(versions)
    lines = [[d.line for d in r.diagnostics if d.name == "Sub"] for r in results]
    assert lines == [[19], [21], [21], [19]]
