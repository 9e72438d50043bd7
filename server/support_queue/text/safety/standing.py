"""Another customer's standing with us, and the customer's own places, as a reply states them
(read by named.py on the raw text; capitals matter there, not here).

- `ACCOUNT_FACT`: a fact of an account, stated: its plan or trial ("is on our Starter plan",
  "they're on a trial right now"), its size ("with 30 seats", "has four locations"), how and
  where it signs in ("signing in as mike@...", "is active in the Caldwell workspace", "joined
  as a manager there"), who owns it ("is owned by Oscar Lindqvist"), or an address held for
  it ("his address in our system is ..."). Of another customer, plainly, it is a clear act.
- `FACT_AFTER`: such a fact right after a name, said of it or of a "they"/"he"/"she" that
  follows it in the same sentence: "Orbital Games is evaluating it too, they're on a trial".
- `IN_YOURS`: the sentence so far places what follows in the customer's own workspace: "In
  your Brook Street Dental workspace, James Ortiz last signed in ..." names a colleague.
- `TIER_NAME`: a capitalised word that is a tier of the product ("the median Growth-plan
  customer"), not a party.
"""

from __future__ import annotations

import re

_COUNT = (
    r"(?:\d[\d,]*|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|fifty"
    r"|a\s+dozen|dozens\s+of|hundreds\s+of)"
)
_UNITS = r"(?:seats|users|licences|licenses|locations|sites|branches|members|staff|employees)"
_ROLE = r"(?:user|admin|administrator|owner|manager|member|guest|editor|viewer)"
ACCOUNT_FACT = re.compile(
    r"\b(?:is|are|was|were|s|re|been)\s+(?:(?:now|still|currently|also)\s+)?on\s+"
    r"(?:our|the|a|an|their|its)\s+(?:[\w-]+\s+){0,2}(?:plan|tier|trial)\b"
    r"|\b(?:sign|signs|signed|signing|log|logs|logged|logging)\s+in\s+as\b"
    r"|\b(?:is|are|was|s|re)\s+(?:(?:now|still|also|currently)\s+)?(?:an?\s+|the\s+)?"
    r"(?:admin|administrator|owner|active|" + _ROLE + r")\s+(?:in|of|on|for)\s+(?:the|their|its)\b"
    r"|\bjoined\s+(?:[\w-]+\s+){0,4}as\s+(?:an?|the)\s+" + _ROLE + r"\b"
    r"|\b(?:with|has|have|had|pays\s+for|paying\s+for)\s+(?:about\s+|around\s+|over\s+|roughly\s+)?"
    + _COUNT
    + r"\s+"
    + _UNITS
    + r"\b"
    r"|\b(?:is|are|was|were|s)\s+(?:owned|run|administered|held|registered|claimed)\s+by\b"
    r"|\b(?:address|email|e-mail|phone|number)\s+(?:in|on)\s+(?:our|the)\s+"
    r"(?:system|records|database|file)\b",
    re.IGNORECASE,
)
FACT_AFTER = re.compile(
    r"\W{0,3}(?:[^.;!?]{0,60}?\b(?:they|he|she)\b\W{0,3})?(?:" + ACCOUNT_FACT.pattern + ")",
    re.IGNORECASE,
)
IN_YOURS = re.compile(
    r"\b(?:in|on|across|within|from)\s+your\b[^.;!?]{0,60}?\b(?:workspace|account|team|org"
    r"|organisation|organization|company|tenant)\b[^.;!?]{0,3}$",
    re.IGNORECASE,
)
TIER_NAME = re.compile(r"-(?:plan|plans|tier|tiers|edition)$", re.IGNORECASE)
