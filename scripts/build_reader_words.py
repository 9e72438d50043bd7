"""Collect the words of written support English that a reader knows, for the canonical text's
reading of disguised words (server/support_queue/text/lexicon.py `is_word_form`), and write
data/support_reader_words.json.

    uv run --frozen python scripts/build_reader_words.py [--write]

Why: the canonical text joins a word cut in two ("ref und" -> "refund") only where one half is
no word, so it must know the words people write that the product's own data never uses
("clean up" and "dig it" are words, not "cleanup" and "digit" cut in two). The corpus is the
fluency model's (scripts/build_fluency_model.py: the labelled safety rows the safety model
trains on and the canonical and training-seed tickets, never a test or blind row), read as
written, not canonical: the canonical text reads this file. A word is a run of two or more
ASCII letters with whitespace or ASCII punctuation on each side, no apostrophe before it and no
underscore after it (so no piece of "p4ssw0rd" or "pass\\u200bword" is one), in at least
`MIN_TEXTS` texts. Deterministic: the same corpus gives the same file. Without --write it
prints whether the shipped file differs.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from build_fluency_model import corpus, write_or_compare

from servicebench_support_queue.server.support_queue.text.lexicon import READER_WORDS_PATH

MIN_TEXTS = 3
"""A word in fewer texts may be a typo or a fragment of an obfuscated one."""
_WORD = re.compile(r"(?<![^\s!-&(-/:-@\[-`{-~])[a-z]{2,}(?![^\s!-/:-@\[-^`{-~])")
"""Two or more letters with whitespace or ASCII punctuation on each side (no apostrophe before,
no underscore after): an invisible or look-alike character beside a run marks a fragment."""


def build() -> dict:
    texts = 0
    found: Counter[str] = Counter()
    for text in corpus(read=str):
        texts += 1
        found.update(set(_WORD.findall(text.lower())))
    words = sorted(word for word, count in found.items() if count >= MIN_TEXTS)
    return {
        "about": "Words of written support English a reader knows: scripts/build_reader_words.py",
        "texts": texts,
        "min_texts": MIN_TEXTS,
        "words": words,
    }


def main() -> None:
    built = json.dumps(build(), indent=0, ensure_ascii=False) + "\n"
    write_or_compare(__doc__.splitlines()[0], READER_WORDS_PATH, built)


if __name__ == "__main__":
    main()
