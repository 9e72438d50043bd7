"""The shipped safety model (data/support_safety_model.json) is what scripts/train_safety_model.py
fits on today's labelled set, rules and recipe: the file records the digest of the rows it was
fitted on and the recipe's parameters; this test recomputes the digest without scikit-learn.
(Retraining itself, `scripts/train_safety_model.py --check`, takes about 13 minutes on two
cores and needs the `train` extra; it exits 1 unless it writes the shipped file byte for byte.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from servicebench_support_queue.server.support_queue.text.safety.model import MODEL_PATH

REPO = Path(__file__).resolve().parents[5]
SCRIPTS = REPO / "scripts"


def test_the_shipped_model_was_trained_on_todays_rows_and_recipe() -> None:
    """A change to the labelled set, the rules' reading of it, the gold replies or the recipe
    changes the digest: retrain (`uv run --frozen python scripts/train_safety_model.py --write`)
    and ship its output. Run in a subprocess: building the gold rows draws variants with the
    rules alone, which must not reach this process's variant cache."""
    trained_on = json.loads(MODEL_PATH.read_text(encoding="utf-8")).get("trained_on", {})
    sys.path.insert(0, str(SCRIPTS))
    try:
        from safety_rows import RECIPE
    finally:
        sys.path.remove(str(SCRIPTS))
    assert trained_on.get("recipe") == RECIPE
    today = subprocess.run(
        [sys.executable, str(SCRIPTS / "safety_rows.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    ).stdout.split()
    assert today == [trained_on.get("digest")]
