"""The engine's own account of what it did: edits that make the new text, and where each new line comes from."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from inliner.engine import flatten
from inliner.engine.line_origin import LineMap, Origin, line_map
from inliner.engine.result import TextEdit
from tests.support.golden import GOLDEN

CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "output.py").exists())


def _apply(original: str, edits) -> str:
    out, cursor = [], 0
    for edit in edits:
        assert cursor <= edit.start <= edit.end, "edits in file order, not overlapping"
        out += [original[cursor : edit.start], edit.text]
        cursor = edit.end
    return "".join(out) + original[cursor:]


@pytest.mark.parametrize("case", CASES)
def test_golden_edits_make_the_new_text_and_the_map_finds_moved_lines(case):
    """Each line of code that the input and the output both hold once maps to that input line:
    statements moved out of a class (or an op call's bodies) point where the user wrote them.

    Lines of brackets alone (``)``) are black's layout, not statements: not checked."""
    original = (GOLDEN / case / "input.py").read_text()
    result = flatten(original)
    assert result.source == (GOLDEN / case / "output.py").read_text()
    assert _apply(original, result.edits) == result.source
    lmap = result.line_map
    new = result.source.splitlines()
    old = original.splitlines()
    assert len(lmap.lines) == len(new) and all(1 <= line <= len(old) for line in lmap.lines)
    once = {t for t, n in Counter(line.strip() for line in old).items() if n == 1}
    once &= {t for t, n in Counter(line.strip() for line in new).items() if n == 1}
    checked = 0
    for j, line in enumerate(new, start=1):
        text = line.strip()
        if text in once and not text.startswith("#") and re.search(r"[A-Za-z_]", text):
            assert old[lmap[j] - 1].strip() == text, (case, j, line)
            checked += 1
    assert checked, "the case has lines to check"


def test_generated_functions_and_the_binding_point_at_the_class():
    source = (
        '"""Doc."""\n'
        "import torch\n"
        "\n"
        "\n"
        "class Double(torch.autograd.Function):\n"  # 5
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"  # 7
        "        ctx.save_for_backward(x)\n"
        "        return x * 2\n"  # 9
        "\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"  # 12
        "        (x,) = ctx.saved_tensors\n"
        "        return g * 2  # not the derivative\n"  # 14
        "\n"
        "\n"
        "y = Double.apply(torch.ones(2))\n"  # 17
    )
    result = flatten(source)
    new = result.source.splitlines()
    lmap = result.line_map

    def origin_of(prefix: str) -> int:
        return lmap[next(j for j, line in enumerate(new, start=1) if line.strip().startswith(prefix))]

    assert origin_of("def double_fwd(") == 7
    assert origin_of("def double_bwd(") == 12
    assert origin_of("return g * 2") == 14
    assert origin_of("Double = custom_vjp(") == 5
    assert origin_of("y = Double(") == 17
    assert origin_of("from inliner.runtime import") == 3  # put in after `import torch`, before line 3
    # unchanged lines keep their columns; a line an edit changed within does not
    assert lmap.shift[new.index("import torch")] == 0
    assert lmap.shift[new.index("y = Double(torch.ones(2))")] is None
    ret = next(j for j, line in enumerate(new) if line.strip().startswith("return g * 2"))
    assert lmap.shift[ret] == 4  # dedented by one level: columns move back 4


def test_a_file_without_edits_maps_each_line_to_itself():
    text = "a = 1\r\nb = 2\rc = 3\n"
    result = flatten(text)
    assert result.edits == () and result.line_map == LineMap((1, 2, 3), (0, 0, 0))


def test_text_without_origin_stands_for_the_lines_it_replaces():
    original = "f(a,\n  b)\nz = 1\n"
    edits = [TextEdit(0, len("f(a,\n  b)"), "g(\n  a, b\n)")]
    lmap = line_map(original, edits)
    assert lmap.lines == (1, 2, 2, 3)  # first line of the text -> first replaced, the others -> the last
    assert lmap.shift == (None, None, None, 0)


def test_generated_text_maps_within_its_origin_only():
    original = "x = 1\ny = 2\n\ndef f():\n    return 1\n"
    generated = "def f_fwd():\n    return 1\nx = 1\n"
    edits = [TextEdit(len("x = 1\ny = 2\n\n"), len(original), generated, Origin(((4, 5),)))]
    lmap = line_map(original, edits)
    # `x = 1` is not part of the origin (lines 4-5): it does not claim line 1
    assert lmap.lines[3:] == (4, 5, 5)
