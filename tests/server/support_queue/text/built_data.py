"""Data files built by a script from the repository's own texts: each test rebuilds one and
expects the shipped file unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[4] / "scripts"


def rebuilt_unchanged(script: str) -> bool:
    """Run scripts/`script` without --write: True if the shipped file is what it builds."""
    found = subprocess.run(
        [sys.executable, str(SCRIPTS / script)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return found.stdout.strip() == "unchanged"
