"""Where the repository's files are, for tests and scripts alike."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden"
README = ROOT / "README.md"
