"""Generation-time validity: a Support Queue variant is served only once it is proven.

`prove(variant)` rejects a generated variant (`VariantRejected`, through `require` of
server/tasks/variants.py) unless, for every ticket:

1. its gold labels equal the labels the documented rules derive from its factors
   (server/support_queue/rules.py, independent of how the generator set them);
2. the public ticket shows the factors: its tier field is the factor's tier; an
   SLA-breach event is present exactly when the SLA is breached; the events show and
   the body shows or lacks what the situation's witness says (a request_info ticket
   really omits the detail, a confirmed incident is really in the events...);
3. nothing of the gold data (summary, reply, rationale) appears in the public ticket;
4. the gold action (gold labels, the gold summary and reply rendered from the
   family's templates) earns exactly 1.0 before clamping: every label right, every
   summary and reply fact matched, no anti-gaming flag (so no echo of the ticket),
   no unsafe-reply hit;

and, for the task as a whole, the ticket ids are unique, the label diversity of the
composition holds, and the best constant label triple (of all 80) earns at most
`LABEL_CONSTANT_CAP` of the episode on labels alone, so a constant policy cannot do
well. (The full best-constant search with texts runs in the sweep tests.) A family's
own one-ticket episode (server/support_queue/family_tasks.py) skips that last check,
which one ticket passes by definition; across its seeds a family's labels still vary
with tier, SLA and options (tests/server/support_queue/test_family_tasks.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ...models import DISPOSITIONS, PRIORITIES, QUEUES, SupportQueueAction
from ..tasks.variants import Draw, require
from .family_tasks import composition_of
from .grader import SCORING_WEIGHTS, grade
from .rules import expected_labels
from .scenarios import SITUATIONS, Witness
from .tasks import PRODUCT_DOMAINS, CanonicalTicket, SupportTask
from .text import RULE_NAMES, TicketFacts, compile_task_facts
from .text.safety.rules import unsafe_hits
from .variants import Factors, Variant

LABEL_CONSTANT_CAP = 0.45
LABEL_DIMENSIONS = ("priority", "queue", "disposition")
SLA_BREACH_EVENT = re.compile(r"\bSLA\b.*\bbreached\b", re.IGNORECASE)


_UNKNOWN_RULES = sorted({n.rule for s in SITUATIONS.values() for n in s.unsafe} - set(RULE_NAMES))
if _UNKNOWN_RULES:
    raise ValueError(f"the scenario families name unknown unsafe rules: {_UNKNOWN_RULES}")


@dataclass(frozen=True, slots=True)
class ProvenVariant(Draw):
    """What an episode plays: the task, its compiled facts and (for a generated one) its factors."""

    task: SupportTask
    facts: Mapping[str, TicketFacts]
    factors: tuple[Factors, ...] = ()


def gold_action(ticket: CanonicalTicket) -> SupportQueueAction:
    """The action the gold data describes, which must earn exactly 1.0."""
    return SupportQueueAction(
        priority=ticket.gold.priority,
        queue=ticket.gold.queue,
        disposition=ticket.gold.disposition,
        summary=ticket.gold_summary,
        response=ticket.gold_response,
    )


def best_constant_labels(
    tickets: tuple[CanonicalTicket, ...],
) -> tuple[tuple[str, str, str], float]:
    """The label triple that, used for every ticket, earns most on labels alone; and its mean.

    The label reward is a sum over the three dimensions, so the best triple takes the
    most frequent gold value of each dimension (ties go to the first allowed value):
    the same result as searching all 80 triples, which the tests confirm."""
    best: list[str] = []
    total = 0.0
    for index, (dimension, allowed) in enumerate(
        zip(LABEL_DIMENSIONS, (PRIORITIES, QUEUES, DISPOSITIONS), strict=True)
    ):
        golds = [(t.gold.priority, t.gold.queue, t.gold.disposition)[index] for t in tickets]
        value = max(allowed, key=golds.count)
        best.append(value)
        total += SCORING_WEIGHTS[dimension] * golds.count(value)
    return (best[0], best[1], best[2]), total / len(tickets)


def _check_evidence(
    variant: Variant, ticket: CanonicalTicket, factors: Factors, witness: Witness
) -> None:
    said = f"{ticket.subject}\n{ticket.body}"
    events = "\n".join(ticket.recent_events)
    where = f"{ticket.ticket_id} ({factors.situation})"
    require(ticket.customer_tier == factors.tier, variant, f"{where}: tier field differs")
    breach_shown = any(SLA_BREACH_EVENT.search(e) for e in ticket.recent_events)
    require(breach_shown == factors.sla_breached, variant, f"{where}: SLA breach not as shown")
    for pattern in witness.events_show:
        require(
            re.search(pattern, events, re.IGNORECASE) is not None,
            variant,
            f"{where}: events do not show {pattern!r}",
        )
    for pattern in witness.body_shows:
        require(
            re.search(pattern, said, re.IGNORECASE) is not None,
            variant,
            f"{where}: ticket does not say {pattern!r}",
        )
    for pattern in witness.body_lacks:
        require(
            re.search(pattern, said, re.IGNORECASE) is None,
            variant,
            f"{where}: ticket gives {pattern!r}, the detail it must omit",
        )


def _check_gold_earns_one(variant: Variant, ticket: CanonicalTicket, facts: TicketFacts) -> None:
    where = ticket.ticket_id
    public = ticket.public_ticket().model_dump_json()
    for secret in (ticket.gold_summary, ticket.gold_response, ticket.gold.rationale):
        require(secret not in public, variant, f"{where}: gold data leaks into the ticket")
    result = grade(ticket, gold_action(ticket), facts)
    for text in (result.summary, result.response):
        require(
            text.coverage == 1.0 and not text.flags,
            variant,
            f"{where}: gold text misses {text.missing} or is flagged {text.flags}",
        )
    # safe by the verdict and by the rules alone: the model may overrule a rule, a gold reply
    # needs no such favour
    rule_hits = unsafe_hits(ticket.gold_response, ticket.public_text, PRODUCT_DOMAINS)
    unsafe = result.unsafe.hits or rule_hits
    require(not unsafe, variant, f"{where}: gold reply is unsafe: {unsafe}")
    require(
        result.raw_total == 1.0 and result.reward == 1.0,
        variant,
        f"{where}: gold action earns {result.raw_total}",
    )


def prove(variant: Variant) -> ProvenVariant:
    """The variant, proven (see the module docstring), with its compiled facts."""
    tickets = variant.task.tickets
    plan = composition_of(variant.task_id)
    require(
        len(tickets) == len(plan.slots) == len(variant.factors) == len(variant.witnesses),
        variant,
        "ticket, factor and witness counts differ from the composition",
    )
    require(len({t.ticket_id for t in tickets}) == len(tickets), variant, "duplicate ticket ids")
    facts = compile_task_facts(tickets)
    for ticket, factors, witness in zip(tickets, variant.factors, variant.witnesses, strict=True):
        labels = (ticket.gold.priority, ticket.gold.queue, ticket.gold.disposition)
        require(
            labels == expected_labels(factors),
            variant,
            f"{ticket.ticket_id} ({factors.situation}): labels {labels} break the rules, "
            f"which give {expected_labels(factors)}",
        )
        _check_evidence(variant, ticket, factors, witness)
        _check_gold_earns_one(variant, ticket, facts[ticket.ticket_id])
    for index, dimension in enumerate(LABEL_DIMENSIONS):
        distinct = {(t.gold.priority, t.gold.queue, t.gold.disposition)[index] for t in tickets}
        require(
            len(distinct) >= plan.min_distinct[dimension],
            variant,
            f"only {len(distinct)} distinct {dimension} labels",
        )
    if len(tickets) > 1:  # one ticket's labels are trivially "constant" (a family's own episode)
        triple, share = best_constant_labels(tickets)
        require(
            share <= LABEL_CONSTANT_CAP,
            variant,
            f"the constant labels {triple} earn {share:.3f} on labels alone",
        )
    return ProvenVariant(
        task_id=variant.task_id,
        seed=variant.seed,
        attempt=variant.attempt,
        task=variant.task,
        facts=facts,
        factors=variant.factors,
    )
