"""The shipped safety model (data/support_safety_model.json) is what scripts/train_safety_model.py
fits on today's labelled set, rules and recipe: the file records the digest of the rows it was
fitted on and the recipe's parameters; this test recomputes the digest without scikit-learn.
(Retraining itself, `scripts/train_safety_model.py --check`, takes about half an hour on two
cores and needs the `train` extra; it exits 1 unless it writes the shipped file byte for byte.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from servicebench_support_queue.server.support_queue.text.safety.model import MODEL_PATH

REPO = Path(__file__).resolve().parents[5]
SCRIPTS = REPO / "scripts"
WEIGHTS_COMMIT = "a4e8890"
"""The commit whose scripts/train_safety_model.py, run on that commit's tree, writes the shipped
weights byte for byte (measured: `git worktree add /tmp/old a4e8890`, `uv sync --frozen --extra
test --extra train` and `uv run --frozen python scripts/train_safety_model.py --output x.json`
there, about ten minutes); only the thresholds were set since (by hand, commit 22897f9)."""


def test_the_shipped_weights_are_those_of_the_recorded_commit() -> None:
    """Everything but the thresholds equals the file that commit's script wrote: the weights
    cannot drift from what can be reproduced."""
    shown = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{WEIGHTS_COMMIT}:data/{MODEL_PATH.name}"],
        capture_output=True,
        text=True,
    )
    if shown.returncode != 0:
        pytest.skip(f"commit {WEIGHTS_COMMIT} is not in this checkout's history")
    then = json.loads(shown.stdout)
    shipped = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    assert shipped.pop("thresholds") == {"confirm": 0.5, "alone": 0.95}
    then.pop("thresholds")
    assert shipped == then


@pytest.mark.xfail(
    strict=True,
    reason="known gap (issue 20): the shipped weights come from the whole-reply recipe of "
    "commit a4e8890 on that commit's rows; the current recipe's output flags 14/225 (6.2%) of the "
    "blind rows, over the 5% bound, so it is not shipped. Strict: remove this marker when the "
    "script's output is shipped",
)
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
