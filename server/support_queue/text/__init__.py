"""How Support Queue reads and judges a summary or reply.

Read: canonical.py (the one canonical form of a text and its words, computed once per text:
invisible characters, Unicode look-alikes and spaced-out letters undone; the word rule), then
words.py (stems, synonyms, a fact's phrasings found in a window).
Judged: coverage.py (the fraction of the ticket's facts a text mentions, and the flags that
zero it: word cap, off-topic facts, repeated keywords, echo of the ticket via echo.py, which
reads word order against English with fluency.py);
safety/ (the unsafe-reply rules, the learned model and their verdict).
What a text is judged against: facts.py (one ticket's facts, compiled once per ticket).
The grader calls one function, `grade_texts` (grading.py).
"""

from .canonical import CanonicalText, canonical_text, count_words
from .coverage import (
    ECHO_LIMITS,
    MAX_OFF_TOPIC_FACTS,
    WORD_CAPS,
    Coverage,
    TextComponent,
    coverage_of,
)
from .facts import CANONICAL_FACTS, SYNONYM_TABLE, TicketFacts, compile_task_facts, facts_for
from .grading import TextGrade, grade_texts
from .safety.rules import RULE_NAMES, Hit

__all__ = [
    "CANONICAL_FACTS",
    "ECHO_LIMITS",
    "MAX_OFF_TOPIC_FACTS",
    "RULE_NAMES",
    "SYNONYM_TABLE",
    "WORD_CAPS",
    "CanonicalText",
    "Coverage",
    "Hit",
    "TextComponent",
    "TextGrade",
    "TicketFacts",
    "canonical_text",
    "compile_task_facts",
    "count_words",
    "coverage_of",
    "facts_for",
    "grade_texts",
]
