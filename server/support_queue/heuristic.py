"""The Support Queue baseline: a deterministic, keyword-and-rule triage policy.

It reads only the current ticket (subject, body, tier, product area, SLA, recent
events) and applies the triage rules the instructions state: queue from the topic,
priority from impact then tier/SLA, disposition in the order close -> request_info
-> escalate -> respond, trusting the events over the customer's words (an outage is
an incident in the events, not a customer saying "outage"). Summary and reply are
assembled from what it read, with support macros for common situations (lockouts,
rotated secrets, blocked sign-ins, incidents, abuse, unrecorded promises, ambiguous
accounts, churn risk). It knows no ticket ids, no ticket texts, nothing of the grader.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...models import SupportQueueAction, Ticket

QUEUE_CUES: dict[str, tuple[str, int]] = {
    "trust_safety": (
        r"phish|spoof|impersonat|scam|fake (?:copy|sign|login|page)|spam\b|fraud"
        r"|abus|harass|threaten|take ?down|isn.t ours|not ours",
        3,
    ),
    "security": (
        r"hack|breach|compromis|suspicious|unrecogni[sz]ed|locked|lockout|password|2fa"
        r"|mfa|\bsso\b|saml|login code|log ?in|sign.?in",
        1,
    ),
    "technical": (
        r"\bapi\b|webhook|endpoint|\b[45]\d\d\b|error|outage|\bdown\b|integration"
        r"|sync|deploy|\bbug\b|checkout|timeout|export|rate limit",
        1,
    ),
    "billing": (
        r"invoice|\bbill\b|billing|charge|payment|\bcard\b|refund|discount|price|paid"
        r"|dispute",
        1,
    ),
    "success": (
        r"renew|competitor|competing|cancel|contract|churn|\bstay\b|\bleave\b|adoption"
        r"|stopped using|roadmap|onboard|training|feature request|suggestion",
        1,
    ),
}
TEAM_NAMES = {
    "trust_safety": "Trust & Safety",
    "security": "security",
    "technical": "engineering",
    "billing": "billing",
    "success": "customer success",
}
SECURITY_ALARM = r"hack|breach|compromis|did not request|didn.t request|unrequested|suspicious"
BROKEN = r"\bfail|not syncing|stopped working|broken|can.?t|cannot|unable|\berrors?\b|\bdown\b"
WORKAROUND = r"by hand|manual|workaround|in the meantime|for now|running fine|everything else"
TEAM_BLOCKED = r"none of us|nobody can|everyone|whole team|no other way in"
RESOLVED = (
    r"you can close|please close|all sorted|resolved now|sorted now|no longer need|never mind"
    r"|disregard|fine now|back in|works again|everything works"
)
CONFIRMED = r"paid in full|resolved|succeeded|successful|cleared"
REFUND = r"refund|money back|return the duplicate|charged twice"
CLAIMED = r"promis|agreed|told us|assured"
CHURN = (
    r"competitor|competing|another vendor|cancel|not renew|move to|we.ll move|leave"
    r"|not convinced we should stay"
)
SUMMARY_WORDS = 60  # the summary length the task instructions allow
ASKS = r"\b(?:can you|could you|please|i want|i need|i expect)\b"


@dataclass(frozen=True)
class Reading:
    """What the policy takes from one ticket."""

    ticket: Ticket
    said: str
    events: str

    def says(self, pattern: str) -> bool:
        return re.search(pattern, self.said) is not None

    def logs(self, pattern: str) -> re.Match[str] | None:
        return re.search(pattern, self.events, flags=re.IGNORECASE)


def _ticket_of(observation: Any) -> Ticket:
    """The ticket of an observation model or of its JSON form (bare or wrapped)."""
    if isinstance(observation, Mapping):
        inner = observation.get("observation", observation)
        raw = inner.get("ticket") if isinstance(inner, Mapping) else None
    else:
        raw = getattr(observation, "ticket", None)
    if raw is None:
        raise ValueError("no current ticket: the episode is done")
    return raw if isinstance(raw, Ticket) else Ticket.model_validate(raw)


def choose_queue(r: Reading) -> str:
    area = r.ticket.product_area.lower()
    scores = {
        queue: weight * (len(set(re.findall(pattern, r.said))) + 2 * len(re.findall(pattern, area)))
        for queue, (pattern, weight) in QUEUE_CUES.items()
    }
    if not any(scores.values()):
        return "technical"  # a product question no cue names
    return max(QUEUE_CUES, key=lambda queue: scores[queue])


def choose_disposition(r: Reading, queue: str) -> str:
    if r.says(RESOLVED) and r.logs(CONFIRMED):
        return "close"
    if _missing_details(r):
        return "request_info"
    if queue == "trust_safety" or (queue == "success" and r.says(CHURN)):
        return "escalate"
    if queue == "technical" and r.logs(r"\bincident\b"):  # the events, not the words, show one
        return "escalate"
    if r.logs(r"(?<!no )successful sign.?ins? from") or (queue == "billing" and r.says(REFUND)):
        return "escalate"
    return "respond"


def _missing_details(r: Reading) -> list[str]:
    """What the customer must still tell us, or nothing."""
    if r.says(CLAIMED) and r.logs(r"\bno\b[^.;]*\b(?:recorded|on file)"):
        who = "the name of the sales rep you worked with" if r.says(r"\brep\b") else "who agreed it"
        return ["the signed order form or quote showing what was agreed", who]
    several = r.logs(r"\b(\d+|several|multiple) (?:workspaces|accounts|subscriptions)\b")
    if several and several.group(1) not in ("0", "1") and not r.says(r"inv-?\d+"):
        return [
            "which workspace or invoice number you're asking about",
            "the amount you usually pay",
        ]
    return []


def choose_priority(r: Reading, queue: str, disposition: str) -> str:
    people = [
        int(n)
        for n in re.findall(
            r"\b(\d+) (?:of (?:our|them)|staff|people|employees|of)", r.said + " " + r.events
        )
    ]
    if disposition == "close" or queue == "success":
        level = 4
    elif (queue == "technical" and r.logs(r"\bincident\b")) or (
        queue == "trust_safety" and max(people, default=0) >= 10
    ):
        level = 1
    elif (
        r.says(SECURITY_ALARM)
        or (queue == "technical" and r.says(BROKEN))
        or (queue == "security" and r.says(TEAM_BLOCKED))
    ):
        level = 3 if r.says(WORKAROUND) else 2
    else:
        level = 3
    if r.ticket.customer_tier.lower() == "enterprise" or r.logs(r"sla[^.;]*breach"):
        level = max(1, level - 1)
    return f"P{level}"


def _first_name(body: str) -> str:
    """The sender's first name: the first name-like line of the sign-off, or "I'm X"."""
    sign_off = body.strip().split("\n\n")[-1].splitlines()
    for line in sign_off:
        words = line.strip(" ,-").split()
        if (
            1 <= len(words) <= 3
            and all(w[:1].isupper() and w.isalpha() for w in words)
            and words[0].lower() not in ("thanks", "regards", "best", "cheers")
        ):
            return words[0]
    match = re.search(r"\b(?:this is|i am|i'm) ([A-Z][a-z]+)", body)
    return match.group(1) if match else "there"


def _strip_stamp(event: str) -> str:
    """An event without its timestamp, asides in brackets and e-mail addresses."""
    event = re.sub(
        r"^[\w .:-]*?\b(?:utc|\d{4}-\d\d-\d\d[\d :]*(?:utc)?)\s*:\s*",
        "",
        event,
        flags=re.IGNORECASE,
    )
    event = re.sub(r"\s*\([^)]*\)", "", event)
    return re.sub(r"\s*\b(?:for|by)?\s*\S+@\S+", "", event)


def _words(text: str) -> int:
    """Words as the instructions count them: runs of letters and digits ("sign-in" is two)."""
    return len(re.findall(r"[^\W_]+", text))


def write_summary(r: Reading, queue: str, disposition: str) -> str:
    """Subject, the customer's ask, the key events, the next step: within 60 words."""
    t = r.ticket
    late = ", SLA breached" if r.logs(r"sla[^.;]*breach") else ""
    head = f"{t.customer_tier.title()}{late}: {t.subject.rstrip('.!?')}."
    sentences = [s.strip() for s in re.split(r"(?<=[.?!])\s+", t.body)]
    issue = [s for s in sentences if re.search(SECURITY_ALARM + "|" + BROKEN, s.lower())][:1]
    asks = sorted((s for s in sentences if re.search(ASKS, s.lower())), key=len)[-1:]
    missing = _missing_details(r)
    step = f"ask for {' and '.join(missing)}" if missing else disposition.replace("_", " ")
    tail = f"Next: {step} ({TEAM_NAMES[queue]})."
    budget = SUMMARY_WORDS - _words(head) - _words(tail)
    parts: list[str] = []
    pieces = dict.fromkeys(
        [
            *issue,
            *(" ".join(a.split()[-12:]) for a in asks if a not in issue),
            *(_strip_stamp(e) for e in t.recent_events),
        ]
    )
    for piece in pieces:
        words = piece.split()[:12]
        while words and _words(" ".join(words)) > budget:
            words.pop()
        if words:
            parts.append(" ".join(words).rstrip(".;,"))
            budget -= _words(parts[-1])
    return " ".join([head, *(["; ".join(parts) + "."] if parts else []), tail])


def write_reply(r: Reading, queue: str, disposition: str) -> str:
    """A first reply from support macros filled in with what the ticket says."""
    lines = [f"Hi {_first_name(r.ticket.body)},\n"]
    if r.logs(r"sla[^.;]*breach") or r.says(r"haven.t heard|no response|chase"):
        lines.append("I'm sorry for the delay in getting back to you.")
    lines += _macro(r, queue, disposition)
    if queue == "security":
        lines.append("We will never ask for your password or codes, and please never share them.")
    if r.says(r"other compan|other customers|who else"):
        lines.append("For privacy reasons we can't share information about other customers.")
    return " ".join(lines) + "\n\nOrbitdesk Support"


def _macro(r: Reading, queue: str, disposition: str) -> list[str]:
    if disposition == "close":
        paid = r.logs(r"(inv-\d+)[^;]*paid in full")
        what = f"{paid.group(1).upper()} is now paid in full" if paid else "everything is in order"
        return [
            f"Thanks for letting us know. I can confirm {what}, so there is nothing more "
            "you need to do. I'll close this ticket now; just reply here if anything else "
            "comes up."
        ]
    if disposition == "request_info":
        return _ask_for(r)
    if disposition == "escalate":
        return _escalate(r, queue)
    return _respond(r)


def _ask_for(r: Reading) -> list[str]:
    lines = []
    several = r.logs(r"(\d+) (workspaces|accounts)[^(]*\(([^)]*)\)")
    if several:
        lines.append(
            f"Your email is the billing contact for {several.group(1)} "
            f"{several.group(2)} ({several.group(3).strip()}), each billed separately."
        )
    unrecorded = r.logs(r"no ([^.;]*?) recorded")
    if unrecorded:
        what = "a discount" if "discount" in unrecorded.group(1).lower() else "this"
        lines.append(f"I've checked your account and I can't see {what} recorded.")
    lines.append("Could you send us " + " and ".join(_missing_details(r)) + "?")
    lines.append("Once we have it, I'll review the charges and explain what we find.")
    due = r.logs(r"due (\d{4}-\d\d-\d\d)")
    if due:
        lines.append(
            f"The invoice is not due until {due.group(1)}, so there is time to sort this "
            "out before any charge is taken."
        )
    return lines


def _escalate(r: Reading, queue: str) -> list[str]:
    if queue == "trust_safety":
        source = r.logs(r"workspace '([^']+)'")
        what = f"the '{source.group(1)}' workspace" if source else "the sender"
        return [
            f"Thank you for the report. I've escalated this to our Trust & Safety team as an "
            f"urgent abuse case so they can suspend {what} and stop further invitations.",
            "Please keep warning your staff not to click the link or enter their credentials.",
            "If anyone did enter their details, ask them to reset their password right away.",
        ]
    if queue == "success":
        csm = r.logs(r"customer success manager[^:]*: ([a-z]+ [a-z]+)")
        who = csm.group(1).title() if csm else "your Customer Success Manager"
        topics = [
            m.group(1)
            for m in [
                re.search(r"\bthe (\w+ (?:changes|redesign))\b", r.said),
                re.search(r"(competitor)\b.*\boffer", r.said),
            ]
            if m
        ]
        topics = [f"{topic} offer" if topic == "competitor" else topic for topic in topics]
        about = f", including the {' and the '.join(topics)}," if topics else ""
        return [
            f"Thank you for being direct. I've passed your message{about} to {who}, your "
            "Customer Success Manager, and flagged it as urgent.",
            "I'm not able to agree to pricing or other commitments from support, so they "
            "will follow up with you directly.",
        ]
    incident = r.logs(r"\b(inc-\d+)")
    working_on = f" working on {incident.group(1).upper()}" if incident else ""
    lines = [
        f"I've escalated your ticket to the {TEAM_NAMES[queue]} incident team{working_on} "
        "and flagged your account as affected.",
        "We'll update you here every 30 minutes until it is resolved.",
    ]
    if r.says(r"credit|compensation|refund"):
        lines.append(
            "Your request for service credits has been passed to your account manager, "
            "who will review it under your contract."
        )
    return lines


def _respond(r: Reading) -> list[str]:
    lock = r.logs(r"locked[^.;]*?for (\d+) minutes")
    if lock:
        lines = [
            f"Your account was locked automatically after several failed sign-in attempts; "
            f"the lock lifts on its own after {lock.group(1)} minutes."
        ]
        if r.logs(r"reset also clears"):
            lines.append(
                "If you'd rather not wait, use the Forgot password link to reset your "
                "password, which also clears the lock."
            )
        return lines
    if r.logs(r"secret rotated"):
        lines = [
            "Our logs show your webhook signing secret was rotated shortly before the "
            "failures began, so your endpoint is still verifying signatures with the old "
            "secret. Please update the secret configured on your endpoint with the current "
            "one from your webhook settings."
        ]
        retry = r.logs(r"retried automatically for up to (\d+) hours")
        if retry:
            lines.append(
                f"Failed deliveries are retried automatically for up to {retry.group(1)} "
                "hours, so they will go through once the new secret is in place."
            )
        return lines
    if r.logs(r"blocked at the 2fa step"):
        quiet = r.logs(r"no successful sign")
        none = " and there have been no successful sign-ins" if quiet else ""
        return [
            "We checked your account: someone entered your password, but the sign-in was "
            f"blocked at the 2FA step and the code was never entered{none}.",
            "Because your password is known to someone, please change your password now and "
            "keep 2FA on.",
        ]
    return [
        "Thanks for the details. Here is what we can see: "
        + "; ".join(_strip_stamp(e) for e in r.ticket.recent_events)
        + "."
    ]


def triage(observation: Any) -> SupportQueueAction:
    """One triage decision for the observation's current ticket."""
    ticket = _ticket_of(observation)
    reading = Reading(
        ticket, f"{ticket.subject}\n{ticket.body}".lower(), "\n".join(ticket.recent_events).lower()
    )
    queue = choose_queue(reading)
    disposition = choose_disposition(reading, queue)
    return SupportQueueAction(
        priority=choose_priority(reading, queue, disposition),
        queue=queue,
        disposition=disposition,
        summary=write_summary(reading, queue, disposition),
        response=write_reply(reading, queue, disposition),
        confidence=0.6,
    )
