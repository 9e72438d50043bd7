"""Coverage: the fraction of a ticket's facts a summary or reply mentions, and its guards.

The text is the canonical one (canonical.py), read once. A fact is credited when one of its
phrasings occurs in the text (words.py: normalised, stemmed, synonyms, any order within a
window). A text earns no coverage at all (flag in brackets) when
- it has more words than its word cap, `WORD_CAPS`, by the word rule of canonical.py
  [over_word_cap];
- it mentions more than `MAX_OFF_TOPIC_FACTS` facts that belong only to other tickets of
  the same task (canonical or generated: `compile_task_facts` gives each ticket its task's
  other facts): a text padded with every ticket's keywords is not about this ticket
  [off_topic_facts];
- one content word makes up more than `MAX_REPEAT_SHARE` of its (at least
  `REPEAT_MIN_WORDS`) content words and occurs at least `REPEAT_MIN_COUNT` times: keyword
  repetition [repeated_keywords];
- it echoes the ticket (server/support_queue/text/echo.py): at least `ECHO_LIMITS.share` of
  its ticket-and-fact words are copied from the ticket, and at least `min_copied` of them
  [echoes_ticket], or its words carry the ticket's story rather than its facts
  (`ECHO_LIMITS.lifted`) in no order of their own or as a 90% in-order copy
  (`lifted_order`, `lifted_share`: a genuine note names the customer and the times too, but
  tells them in its own sentences). A reply that restates a fact in the ticket's words keeps its
  coverage; a pasted ticket, pasted with light edits or padded with filler, or an excerpt of
  its sentences, however short, in any order, does not, nor do
  its words shuffled, reversed, glued or interleaved (with the filler set aside, a paste woven
  with filler is a paste: `ECHO_LIMITS.dense_share`); a text with many of the ticket's words
  in an order no more the ticket's than chance is a sample of them
  (`ECHO_LIMITS.sample_*`), and one that splits the ticket's word pairs with filler is a
  copy woven with it (`ECHO_LIMITS.woven_*`); a sample too short for that order to tell,
  whose small words stand where English never puts them, is one too (`ECHO_LIMITS.salad_*`,
  fluency.py), and so is a text of the ticket's own sentences, whole, in any order
  (`ECHO_LIMITS.excerpt_*`). `EchoLimit.echoed_by` names the tests a text fails. The summary is an
  internal note and may quote the ticket's phrases, so only a (near-)verbatim excerpt loses it.
A list of only this ticket's facts earns the same as a genuine text, never more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from .canonical import CanonicalText
from .echo import EchoLimit, measure
from .facts import SYNONYM_TABLE, TicketFacts
from .words import NormalisedText, most_repeated_share

TextComponent = Literal["summary", "response"]

WORD_CAPS: Mapping[str, int] = MappingProxyType({"summary": 60, "response": 150})
MAX_OFF_TOPIC_FACTS = 2
MAX_REPEAT_SHARE = 0.25
REPEAT_MIN_COUNT = 4
REPEAT_MIN_WORDS = 8


ECHO_LIMITS: Mapping[str, EchoLimit] = MappingProxyType(
    {
        "summary": EchoLimit(
            share=0.95, min_copied=8, lifted=0.79, dense_share=0.97, salad_fluency=0.19
        ),
        "response": EchoLimit(
            share=0.75, min_copied=8, lifted=0.88, dense_share=0.85, salad_fluency=0.3
        ),
    }
)


@dataclass(frozen=True, slots=True)
class Coverage:
    """One text's coverage of its component's facts, with the flags that zeroed it."""

    coverage: float
    matched: list[str]
    missing: list[str]
    off_topic: list[str]
    flags: list[str]
    word_count: int
    word_cap: int
    echo_share: float
    lifted_share: float


def coverage_of(text: CanonicalText, component: TextComponent, facts: TicketFacts) -> Coverage:
    """Coverage of the ticket's facts for one text component, with the anti-gaming flags."""
    own = facts.own[component]
    words = NormalisedText(text.text, SYNONYM_TABLE)
    found = [f.found_in(words) for f in own]
    matched = [f.name for f, hit in zip(own, found, strict=True) if hit]
    off_topic = [f.name for f in facts.off_topic if f.found_in(words)]
    word_count = len(text.words)
    flags: list[str] = []
    if word_count > WORD_CAPS[component]:
        flags.append("over_word_cap")
    if len(off_topic) > MAX_OFF_TOPIC_FACTS:
        flags.append("off_topic_facts")
    top_count, top_share = most_repeated_share(words.words)
    if (
        len(words.words) >= REPEAT_MIN_WORDS
        and top_count >= REPEAT_MIN_COUNT
        and top_share > MAX_REPEAT_SHARE
    ):
        flags.append("repeated_keywords")
    limit = ECHO_LIMITS[component]
    echo = measure(text, facts.echo, component, limit)
    if limit.echoed_by(echo):
        flags.append("echoes_ticket")
    return Coverage(
        coverage=0.0 if flags else len(matched) / len(own),
        matched=matched,
        missing=[f.name for f, hit in zip(own, found, strict=True) if not hit],
        off_topic=off_topic,
        flags=flags,
        word_count=word_count,
        word_cap=WORD_CAPS[component],
        echo_share=echo.share,
        lifted_share=echo.lifted,
    )
