"""Where the repository's files are, for tests and scripts alike."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden"
README = ROOT / "README.md"
#: one page per topic; README.md links into it
DOCS = ROOT / "docs"
DEVELOPMENT = DOCS / "development.md"

#: Python sources with every kind of syntax the engine meets: the golden cases and the package
CODE_SAMPLES = sorted(GOLDEN.glob("*/*.py")) + sorted((ROOT / "inliner").rglob("*.py"))
