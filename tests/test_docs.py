"""The README and docs/ hold together: every relative link lands on a file (and on a heading,
when it names one), every page is reachable from the README, and the facts other files
rely on are where those files look for them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.paths import DOCS, README, ROOT

PAGES = [README, *sorted(DOCS.glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text a reader sees as prose: fenced blocks and code spans removed."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    """Every Markdown link target outside code."""
    return LINK.findall(_prose(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: link targets dropped, lower case, punctuation but ``-``
    and ``_`` removed (code and ``*`` emphasis marks with it), spaces as hyphens. Our headings
    use no ``_emphasis_``, whose marks GitHub would drop too."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a page's headings, numbered from the second use as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _broken(page: Path) -> list[str]:
    broken = []
    for target in links(page.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
            broken.append(f"{target}: no heading with that anchor in {file.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path):
    assert _broken(page) == []


def test_the_link_check_sees_a_broken_link_and_anchor(tmp_path: Path):
    (tmp_path / "other.md").write_text("# Other page\n\n## The `--check` flag\n\n## The `--check` flag\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md) [ok](other.md#the---check-flag) [ok](other.md#the---check-flag-1) [ok](#top)\n"
        "[gone](missing.md) [bad anchor](other.md#nothing) [same page](#nowhere)\n"
        "`[code](missing.md)` and\n```\n[fenced](missing.md)\n```\n\n# Top\n"
    )
    assert _broken(page) == [
        "missing.md: no such file",
        "other.md#nothing: no heading with that anchor in other.md",
        "#nowhere: no heading with that anchor in page.md",
    ]


def test_slugs_follow_github():
    """Spot checks against anchors GitHub renders for headings of this kind."""
    assert slug("`autograd_function_apply` calls") == "autograd_function_apply-calls"
    assert slug("19. torch.compile") == "19-torchcompile"
    assert slug("Compile paths: how a flattened Function meets `torch.compile`") == (
        "compile-paths-how-a-flattened-function-meets-torchcompile"
    )
    assert slug("pre-commit and the LibCST codemod") == "pre-commit-and-the-libcst-codemod"
    assert slug("19b. What the runtime gives dynamo (inliner/runtime/_dynamo.py)") == (
        "19b-what-the-runtime-gives-dynamo-inlinerruntime_dynamopy"
    )


def test_the_readme_links_every_page():
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in links(README.read_text())}
    assert [p.name for p in sorted(DOCS.glob("*.md")) if p.resolve() not in linked] == []


def test_the_readme_gives_the_test_command_ci_runs():
    """.ci/run runs the tests "exactly as README.md gives it"."""
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    command = ci[ci.index("# The test command, exactly as README.md gives it.") + 1]
    assert command == "python -m pytest -q"
    assert f"```bash\n{command}\n```" in README.read_text()


def test_the_tracer_matrix_is_written_between_the_markers_of_its_page(tmp_path: Path):
    from scripts import tracer_matrix

    assert tracer_matrix.PAGE == DOCS / "tracers.md"
    text = tracer_matrix.PAGE.read_text()
    assert text.count(tracer_matrix.START) == text.count(tracer_matrix.END) == 1
    page = tmp_path / "tracers.md"
    page.write_text(f"# Title\n\nprose\n\n{tracer_matrix.START}\nold\n{tracer_matrix.END}\n\nafter\n")
    tracer_matrix.update_page("| new |\n", page)
    assert page.read_text() == f"# Title\n\nprose\n\n{tracer_matrix.START}\n| new |\n{tracer_matrix.END}\n\nafter\n"


@pytest.mark.parametrize("config", ["inliner.lua", "inliner-0.7.lua"])
def test_the_neovim_configuration_in_the_docs_is_the_tested_file(config: str):
    """docs/editors.md shows each Neovim configuration as one Lua block equal to the file the
    editor test loads, so a copied snippet is the tested one."""
    text = (DOCS / "editors.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```lua\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    expected = (ROOT / "editors" / "neovim" / config).read_text(encoding="utf-8")
    assert expected in blocks
