"""Count the class bigrams of written support English for the fluency measure
(server/support_queue/text/fluency.py) and write data/support_fluency.json.

    uv run --frozen python scripts/build_fluency_model.py [--write]

The corpus: the replies and customer messages of the labelled safety rows the safety model
trains on (splits `dev`, `fresh` and `train`; never `test` or a blind set, nor the later rounds
of `train` rows, safety_train_r*.jsonl: their hurried and non-native registers blurred the line
between written English and shuffled words), and the gold
summaries, gold replies and public texts of the canonical tickets and of training seeds
1-100 (each distinct text once). Nothing that measures fluency is in it: not the genuine
notes of tests/server/support_queue/text/data, nor the held-out seeds' tickets. Every text is
read in its canonical form, as the grader reads it. The `TOP_WORDS` most frequent closed-class
words (`CLOSED_CLASS`) are the model's word classes. Deterministic: the same corpus gives the same
file. Without --write it prints what changed.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.tasks import TASKS
from servicebench_support_queue.server.support_queue.text.canonical import canonical_string
from servicebench_support_queue.server.support_queue.text.fluency import (
    FLUENCY_PATH,
    classes,
    folded,
    word_class,
    words_of,
)

SAFETY_DATA = Path(__file__).resolve().parents[1] / "tests/server/support_queue/text/safety/data"
SAFETY_SPLITS = {"dev", "fresh", "train"}
SEEDS = (None, *range(1, 101))
TOP_WORDS = 80
_CLOSED_CLASS_WORDS = """a an the this that these those some any no every each all both either neither another
    other such what which who whom whose when where why how whether if because since until
    while although though unless than as so and or but nor not n't yet also too very just only
    even still already then there here now again once
    i me my mine we us our ours you your yours he him his she her hers it its they them their
    theirs myself yourself ourselves itself themselves one
    to of for in on at by with from into onto about over under after before during through
    between against without within across around via per up out off down
    is are was were be been being am do does did done have has had having will would shall
    should can could may might must
    i'm i've i'll i'd you're you've you'll you'd we're we've we'll we'd it's that's there's
    he's she's they're they've they'll don't doesn't didn't isn't aren't wasn't weren't won't
    wouldn't can't couldn't shouldn't haven't hasn't hadn't let's
    please hi hello dear thanks thank regards best sorry yes"""
CLOSED_CLASS = frozenset(_CLOSED_CLASS_WORDS.split())
"""Closed-class English words (determiners, pronouns, prepositions, conjunctions, auxiliaries,
negation, a few adverbs, greetings): the candidates for the model's word classes. Content
words are left to the `OTHER` and `CAPITAL` classes, so the model reads word order, not a
topic."""


def corpus(read: Callable[[str], str] = canonical_string) -> Iterator[str]:
    """Every text of the corpus, once, as `read` gives it (canonical unless told)."""
    seen: set[str] = set()
    for name in ("safety_replies.jsonl", "safety_train.jsonl"):
        for line in (SAFETY_DATA / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["split"] in SAFETY_SPLITS:
                yield from _new((row["reply"], row["ticket"]), seen, read)
    for task in TASKS:
        for seed in SEEDS:
            for ticket in SupportQueueEnvironment.variant_for(task.card.id, seed).task.tickets:
                texts = (ticket.gold_summary, ticket.gold_response, ticket.public_text)
                yield from _new(texts, seen, read)


def _new(texts: tuple[str, ...], seen: set[str], read: Callable[[str], str]) -> Iterator[str]:
    for text in texts:
        if text not in seen:
            seen.add(text)
            yield read(text)


def build() -> dict:
    texts = list(corpus())
    folded_words = (folded(word) for text in texts for word in words_of(text))
    frequency = Counter(word for word in folded_words if word in CLOSED_CLASS)
    words = frozenset(
        w for w, _ in sorted(frequency.items(), key=lambda f: (-f[1], f[0]))[:TOP_WORDS]
    )
    pairs: Counter[str] = Counter()
    for text in texts:
        found = classes(text, partial(word_class, words=words))
        pairs.update(f"{a} {b}" for a, b in zip(found, found[1:], strict=False))
    return {
        "about": "Class-bigram counts of written support English: scripts/build_fluency_model.py",
        "texts": len(texts),
        "words": sorted(words),
        "pairs": dict(sorted(pairs.items())),
    }


def write_or_compare(description: str, path: Path, built: str) -> None:
    """The command line of a script that builds a data file: with --write, replace `path` with
    `built`; without, print whether the shipped file is `built` ("unchanged", which the tests
    that rebuild a data file expect)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--write", action="store_true", help="replace the shipped file")
    if parser.parse_args().write:
        path.write_text(built, encoding="utf-8")
        print(f"wrote {path}")
    elif path.exists() and path.read_text(encoding="utf-8") == built:
        print("unchanged")
    else:
        print("differs from the shipped file (run with --write to replace it)")


def main() -> None:
    built = json.dumps(build(), indent=1, ensure_ascii=False) + "\n"
    write_or_compare(__doc__.splitlines()[0], FLUENCY_PATH, built)


if __name__ == "__main__":
    main()
