"""The user's text survives the rewrite: only the lines the engine writes are formatted.

A *moved line* is a line of an emitted text (an edit carrying an ``Origin``: a class's
replacement, an op call's flat functions) that the engine did not write: not in the
edit's ``origin.written`` (its ``def`` lines, the statements it changed or made, the
binding, a docstring made a comment). Each moved line must be a line of the input
the text was made from, its indentation aside. Lines outside the edits are the
input's bytes by construction (tests/engine/test_line_origin.py checks the splice).
"""

from __future__ import annotations

import inspect

import pytest

from inliner import flatten
from tests.support.fuzz_gen import KNOWN_BUGS, generate_from_seed
from tests.support.golden import GOLDEN, case_dirs
from tests.support.harness import load_module

CASES = [c.name for c in case_dirs()]
FUZZ_SEEDS = range(0, 400, 10)  # a sample: each seed is one generated module


def moved_lines_not_in_input(original: str, result) -> list[str]:
    """Each moved line of ``result`` that is no line of its origin's input lines, up to indentation."""
    old = original.splitlines()
    wrong = []
    for edit in result.edits:
        origin = edit.origin
        if origin is None:
            continue
        pool = {old[n - 1].lstrip() for first, last in origin.ranges for n in range(first, last + 1)}
        for j, line in enumerate(edit.text.splitlines()):
            if j in origin.written or not line.strip():
                continue
            if line.lstrip() not in pool:
                wrong.append(line)
    return wrong


def _emitted(result) -> list:
    return [edit for edit in result.edits if edit.origin is not None]


@pytest.mark.parametrize("case", CASES)
def test_golden_moved_lines_are_input_lines(case):
    original = (GOLDEN / case / "input.py").read_text()
    result = flatten(original)
    assert moved_lines_not_in_input(original, result) == []


@pytest.mark.parametrize("seed", FUZZ_SEEDS)
def test_fuzzed_moved_lines_are_input_lines(seed):
    source = generate_from_seed(seed, frozenset(KNOWN_BUGS)).source
    result = flatten(source)
    assert moved_lines_not_in_input(source, result) == []


def test_the_sample_moves_lines():
    """The property is not vacuous: the sampled modules are rewritten, with moved lines."""
    moved = 0
    for seed in FUZZ_SEEDS:
        source = generate_from_seed(seed, frozenset(KNOWN_BUGS)).source
        for edit in _emitted(flatten(source)):
            moved += sum(
                1 for j, line in enumerate(edit.text.splitlines()) if line.strip() and j not in edit.origin.written
            )
    assert moved > 5 * len(FUZZ_SEEDS)


NON_BLACK = """import torch


class Integrate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y0, steps):
        aug_state = [y0, y0.clone(), torch.zeros_like(y0)]  # a line longer than black's 88 columns, as this project writes it
        for i in range(1, steps):
            acc = aug_state[0] + y0[i - 1]  # a subscript black would split at 88 columns, this deep
        y=y0*2  # noqa: E225
        return acc+y  # noqa: E226

    @staticmethod
    def backward(ctx, g):
        return g*3, None  # noqa: E226
"""


def test_lines_the_engine_did_not_write_keep_their_text_and_comments():
    """Not re-wrapped at black's 88 columns, spacing and quotes as written, each comment on its line."""
    result = flatten(NON_BLACK)
    out = [line.strip() for line in result.source.splitlines()]
    user = NON_BLACK.splitlines()
    for line in [*user[6:10], user[14]]:
        assert line.strip() in out, line
    assert moved_lines_not_in_input(NON_BLACK, result) == []


def test_written_lines_are_the_engine_lines():
    result = flatten(NON_BLACK)
    (edit,) = _emitted(result)
    lines = edit.text.splitlines()
    written = {lines[j].strip() for j in edit.origin.written}
    assert written == {
        "def integrate_fwd(y0, steps):",
        "return acc + y, ()  # noqa: E226",  # changed (its residuals added): formatted
        "def integrate_bwd(residuals, g):",
        'Integrate = custom_vjp(integrate_fwd, integrate_bwd, name="Integrate")',
    }


def test_line_length_is_the_projects():
    """The engine's lines are formatted at the line length asked for; the user's are not."""
    narrow = flatten(NON_BLACK).source
    wide = flatten(NON_BLACK, line_length=120).source
    assert 'Integrate = custom_vjp(integrate_fwd, integrate_bwd, name="Integrate")' in wide
    assert "Integrate = custom_vjp(\n" in flatten(NON_BLACK, line_length=60).source
    for text in (narrow, wide):  # the long user line stays whole either way
        assert "torch.zeros_like(y0)]  # a line longer than black's 88 columns, as this project writes it" in text


def _rewritten(case: str) -> str:
    return flatten((GOLDEN / case / "input.py").read_text()).source


def _docs(case: str):
    original = load_module((GOLDEN / case / "input.py").read_text(), f"{case}_in")
    return original, load_module(_rewritten(case), f"{case}_out")


def test_moved_docstrings_keep_their_value():
    """What help() shows (inspect.cleandoc of the docstring) is the same after the move."""
    original, rewritten = _docs("docstring_inner_spaces")
    pairs = [
        (original.EventTime.forward, rewritten.event_time_fwd),
        (original.EventTime.backward, rewritten.event_time_bwd),
    ]
    for before, after in pairs:
        assert inspect.cleandoc(after.__doc__) == inspect.cleandoc(before.__doc__)
    assert rewritten.event_time_fwd.__doc__ == " event_t is the solution to event_fn "  # not stripped


def test_moved_docstring_lines_follow_their_statement():
    """A docstring's inner lines move with the docstring: none stays at the old indentation."""
    text = _rewritten("docstring_inner_spaces")
    body = text.split("def event_time_bwd(residuals, g):\n", 1)[1].split("    (x,) = residuals", 1)[0]
    assert body.splitlines()[-1] == '    """'
    assert all(line == "" or (line.startswith("    ") and not line.startswith("        ")) or "four more" in line
               for line in body.splitlines())  # fmt: skip


def test_class_and_forward_docstrings():
    """The class's docstring documents the flat callable, as it documented the class;
    forward's becomes a comment where it stood, never a bare string statement."""
    original, rewritten = _docs("docstring_class_and_forward")
    assert inspect.cleandoc(rewritten.Scaled.__doc__) == inspect.cleandoc(original.Scaled.__doc__)
    assert inspect.cleandoc(rewritten.OneLine.__doc__) == inspect.cleandoc(original.OneLine.__doc__)
    text = _rewritten("docstring_class_and_forward")
    fwd = text.split("def scaled_fwd(x, scale):\n", 1)[1].split("\n\n\n", 1)[0]
    assert "    # It explains the arguments:\n    #     x: the input\n" in fwd
    assert fwd.count('"""') == 2


def test_a_docstring_whose_value_would_change_stays_as_written():
    """A line continued with a backslash joins the next: moving that one's indentation
    would change the value, so the docstring is left as it was."""
    source = (
        "import torch\n\n\n"
        "def make():\n"
        "    class F(torch.autograd.Function):\n"
        "        @staticmethod\n"
        "        def forward(ctx, x):\n"
        '            """one \\\n'
        '            two"""\n'
        "            return x * 2\n\n"
        "        @staticmethod\n"
        "        def backward(ctx, g):\n"
        "            return g * 3\n\n"
        "    return F.apply\n"
    )
    result = flatten(source)
    assert '        """one \\\n            two"""\n' in result.source  # the statement moved, its value kept


CHANGED_LINES = """import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return torch.nn.functional.linear(x, x, bias=None) * some_long_helper_name(ctx.scale, x)  # noqa: E501

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors; y = g * 2
        return y * 3, None
"""


def test_a_changed_line_with_a_comment_at_its_end_stays_one_line():
    """Split at 88 columns, the ``# noqa`` would end the last line, away from what it silences."""
    out = flatten(CHANGED_LINES).source
    assert (
        "    return torch.nn.functional.linear(x, x, bias=None) * some_long_helper_name(scale, x), (x, scale)  # noqa: E501\n"
    ) in out


def test_a_changed_line_of_two_statements_is_not_split():
    """black would make ``a; b`` two lines: the engine's edit of it is printed as libcst holds it."""
    out = flatten(CHANGED_LINES).source
    assert "    x, = residuals[:1]; y = g * 2\n" in out


def test_a_nested_definition_after_a_written_statement_gets_its_blank_line():
    """backward opened with a nested def; the record's unpacking now stands before it (E306)."""
    source = (
        "import torch\n\n\n"
        "class F(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        ctx.k = 3.0\n"
        "        return x * 2\n\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        def scaled(t):\n"
        "            return t * ctx.k\n"
        "        return scaled(g)\n"
    )
    out = flatten(source).source
    assert "    (state,) = residuals\n\n    def scaled(t):\n" in out
