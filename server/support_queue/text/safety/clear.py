"""Which rule hits are *clear acts*: hits the learned model may not overrule.

The rules decide scope (which negation, hedge or condition governs which verb); the model
(model.py) knows no grammar but has read many replies. The verdict (verdict.py) lets the
model overrule a rule only where the rule's reading could be wrong, never where the act is
stated plainly. A frame match is a clear act when both hold:
- *the frame states the act itself*: its object is named in it, not a pronoun whose
  antecedent is looked for elsewhere (`antecedent`), nor a word whose meaning a context word
  nearby decides (`context`: a bare "code" is a secret next to "SMS"), nor a frame the rules'
  data marks `"direct": false` (what it states is the act only in some readings);
- *nothing in its sentence could cancel it under any reading of scope*: no word that cancels
  one of the rule's frames anywhere in the sentence (negations, hedges, conditions, verbs of
  report or doubt, the rule's own cancelling words: `inner_cancel`, `cancel`, `clause_cancel`,
  `subject_cancel`, the rule's `doubt`, the grammar's `NEG` and `UNCERTAIN`: "if", "assuming",
  "maybe", "scammers", "you mentioned", "could mean"; a hedging modal before the act's end
  unless a request's subject follows it: "you *could* turn it off", "it *can* be turned off",
  not "*could you* send it", "send it so we *can* check", nor a verb of assertion: "I *can
  confirm* ..."; a word a frame `stated` inside its own match is no doubt either), no third
  party before the act (a word that cancels only as the act's subject, "scammers ... ask you
  to send"), and no text a
  cancelling template of the rule matches anywhere in it (`after_cancel`, `verb_after_cancel`,
  `sentence_cancel`: "into the box on the settings page", "which is why we advise against it");
  and a question only in a request's form ("Could you send...?", "What is your...?", or a
  `question` frame's whole sentence: "Your 2FA code?"), not "Did you rotate the secret after
  it ended up in the repo?";
- *it is not told as something else*: an act named as its clause's subject, with a hedging
  modal and a verb of consequence after it, is a consequence explained ("*switching off*
  certificate checks *would let* anyone in"; "disabling 2FA would solve this" and "disabling
  2FA will fix it" stay clear), and for a rule with `history`, a past act of someone other
  than the speaker that its clause dates is the account's record ("billing approved the
  refund *on Tuesday*"; "we refunded it yesterday" and "the fix will be deployed on Thursday"
  stay clear).
"Send the CVV.", "Paste your API key here.", "Turn off 2FA for them.", "We've issued a full
refund." are clear; "No problem, please send us the code", "If billing approves it, you'll
get a refund", "It's possible someone has accessed the account" are not (whatever the rules
decide about them, the model may overrule them).
"""

from __future__ import annotations

import re

from .clauses import MENU_STEP, Reply
from .frames import Frame, UnsafeRule, any_of
from .templates import CLAUSE, Grammar


class Clarity:
    """Each rule's words of doubt, gathered once from the rules' grammar."""

    def __init__(self, grammar: Grammar) -> None:
        self._general = grammar.words("NEG") | grammar.words("UNCERTAIN")
        self._hedges = grammar.words("HEDGE_MODAL")
        self._askers = grammar.words("REQUEST_ASKER")
        self._contrasts = grammar.words("CONTRAST")
        self._concessives = grammar.words("CONCESSIVE")
        self._results = grammar.words("RESULT")
        self._reasons = grammar.words("REASON")
        self._result_subjects = grammar.words("RESULT_SUBJECT")
        self._asserting = grammar.words("ASSERTING_VERB")
        self._subordinators = grammar.words("SUBORDINATOR")
        self._request_leads = grammar.words("REQUEST_LEAD")
        self._auxiliaries = grammar.words("AUX") | grammar.words("ADV")
        self._causatives = grammar.words("CAUSATIVE")
        self._request_question = any_of(grammar, ["{REQUEST_QUESTION}"], anchored=True)
        self._dated = any_of(grammar, ["{DATED}"])
        self._past_forms = grammar.words("PAST_FORM")
        self._adverbs = grammar.words("ADV")
        self._not_past = grammar.words("NOT_PAST_LEAD")
        self._future = grammar.words("FUTURE_MARK")
        self._speakers = grammar.words("US_PRON")
        self._gerund_leads = grammar.words("GERUND_LEAD")
        # the word after a modal that makes it a request's or an assertion's, not a hedge
        self._stating = {(word,) for word in self._askers | self._asserting}
        self._consequences = {(word,) for word in grammar.words("CONSEQUENCE_VERB")}
        self._doubt: dict[str, frozenset[str]] = {}

    def doubt(self, rule: UnsafeRule) -> tuple[frozenset[str], frozenset[str]]:
        """Every word that cancels one of the rule's frames wherever it governs it, apart from
        the third parties, which cancel only as its subject: (the words that doubt an act on
        either side of it, those that doubt it only from its left). A word that cancels only
        as its clause's governor (`clause_cancel` and nothing else) governs what follows it,
        never what went before: "it's what *stops* someone taking over your number", not "your
        account was hacked, so we locked it to *protect* you"."""
        words = self._doubt.get(rule.name)
        if words is None:
            scope = rule.scope
            either = (
                self._general
                | rule.inner_cancel
                | (scope.cancel - scope.subject_only)
                | scope.subject_cancel
                | rule.doubt
            )
            words = either, scope.clause_cancel - either
            self._doubt[rule.name] = words
        return words

    def is_clear(
        self, rule: UnsafeRule, frame: Frame, reply: Reply, sentence: int, span: tuple[int, int]
    ) -> bool:
        """True if the frame's match over tokens `span` (first, last) of `sentence` is a clear
        act."""
        if not frame.direct:
            return False
        first = reply.sentence_starts[sentence]
        tokens = reply.tokens[first : first + reply.sentence_lengths[sentence]]
        at, last = span[0] - first, span[1] - first
        if frame.verb and rule.requests_only and not self._request_position(tokens, at):
            return False
        either, left_only = self.doubt(rule)
        doubt = either | frame.inner_also
        # for a rule whose doubts are its clause's (`doubt_in_clause`), a doubt before ", but" is
        # the first clause's and one after ", so" the result's: "normally there's a fee, but
        # I've waived it, so you can cancel with nothing to pay"
        cut, end = self._clause_of(tokens, at, last) if rule.doubt_in_clause else (0, len(tokens))
        cut, end = self._beside_reasons(tokens, at, last, cut, end)
        # the frame's own verb is the act, not a doubt about it: "*tell* us your PIN"; nor are
        # the words it states inside its match: "accessed it *without* permission"
        if any(
            (t in doubt or (t in left_only and i < at)) and not self._concessive(tokens, i, at)
            for i, t in enumerate(tokens)
            if cut <= i < end
            and not (frame.verb and i == at)
            and not (at <= i <= last and t in frame.stated)
        ):
            return False
        if any(
            t in self._hedges and tokens[i + 1 : i + 2] not in self._stating
            for i, t in enumerate(tokens[:last])
            if i >= cut and not (i >= at and t in frame.stated)
        ):
            return False  # "you could turn it off", "it can be turned off"; not "could you send
            # it", nor "I can confirm": a modal before a verb of assertion states, not hedges
        if self._consequence_told(reply, frame, tokens, (at, last), span[0], end):
            return False  # "switching off the checks would let anyone in"
        if (
            rule.history
            and not self._spoken(tokens, at)
            and self._dated_past(reply, sentence, tokens, (at, last))
        ):
            return False  # "billing approved the refund on Tuesday": the account's history
        if self._third_party_before(rule, tokens, cut, at):
            return False
        low, high = reply.offset_of_sentence(sentence), reply.offset_of_sentence(sentence + 1)
        if (
            reply.questions[sentence]
            and not frame.question  # a whole question that is only the secret: "Your 2FA code?"
            and not self._request_question.match(reply.text, low, high)
        ):
            return False  # "did you rotate the secret after it ended up in the repo?"
        return not any(
            _found(pattern, reply.text, low, high)
            for pattern in (rule.after_cancel, rule.verb_after_cancel, rule.sentence_cancel)
        )

    def _consequence_told(
        self,
        reply: Reply,
        frame: Frame,
        tokens: tuple[str, ...],
        act: tuple[int, int],
        start: int,
        end: int,
    ) -> bool:
        """True if the act is named as its clause's subject and a hedging modal right after it
        leads a verb of consequence: "*switching off* certificate checks *would let* anyone
        in", "*skipping* verification *would make* the connection open". A remedy stays the
        act: "disabling 2FA would solve this", "disabling 2FA will fix it"."""
        at, last = act
        if not self._named_act(reply, frame, tokens, at, start):
            return False
        return any(
            tokens[i] in self._hedges and tokens[i + 1 : i + 2] in self._consequences
            for i in range(last + 1, min(last + 3, end))
        )

    def _named_act(
        self, reply: Reply, frame: Frame, tokens: tuple[str, ...], at: int, start: int
    ) -> bool:
        """True if the frame's verb is an "-ing" form opening its sentence or clause (or a
        subordinate one: "because *removing* a second factor is..."): the act is named as the
        subject of what is said of it, not done or asked for. Not after a word that takes an
        "-ing" request ("try *disabling* it", "please *stop* sending")."""
        if not frame.verb or start not in reply.ings:
            return False
        before = tokens[at - 1] if at > 0 else CLAUSE
        if before in self._gerund_leads:
            return False
        return before == CLAUSE or before in self._subordinators or before in self._reasons

    def _spoken(self, tokens: tuple[str, ...], at: int) -> bool:
        """True if the act's subject is the speaker ("*I* refunded it on Monday"): opening the
        match, or the first word left of it past auxiliaries and adverbs."""
        if tokens[at] in self._speakers:
            return True
        subject = _left_of(tokens, at, self._auxiliaries)
        return subject >= 0 and tokens[subject] in self._speakers

    def _dated_past(
        self, reply: Reply, sentence: int, tokens: tuple[str, ...], act: tuple[int, int]
    ) -> bool:
        """True if the match (`act`: its first and last token in the sentence's `tokens`) holds
        a verb in the past tense and its clause dates it. A participle after a present or
        future auxiliary is no past: "the fix *will be deployed* on Thursday", "it *is waived*
        from Monday"."""
        at, last = act
        start = reply.sentence_starts[sentence]
        if not any(self._past_at(reply, start + i) for i in range(at, last + 1)):
            return False
        opens = next((i + 1 for i in range(at - 1, -1, -1) if tokens[i] == CLAUSE), 0)
        closes = next((i for i in range(last + 1, len(tokens)) if tokens[i] == CLAUSE), None)
        low = reply.starts[start + opens]
        end = reply.offset_of_sentence(sentence + 1)
        high = end if closes is None else reply.starts[start + closes]
        return self._dated is not None and self._dated.search(reply.text, low, high) is not None

    def _past_at(self, reply: Reply, i: int) -> bool:
        tokens = reply.tokens
        if i not in reply.pasts and tokens[i] not in self._past_forms:
            return False
        lead = _left_of(tokens, i, self._adverbs)
        if lead >= 0 and tokens[lead] in self._not_past:
            return False
        return self._future.isdisjoint(tokens[max(0, i - 4) : i])

    def _request_position(self, tokens: tuple[str, ...], at: int) -> bool:
        """True if the verb at `at` stands where a request's verb does, past auxiliaries and
        adverbs: opening its sentence or clause, after a word that leads a request ("please",
        "to", "and", "by"), after its hearer ("you must send", "could you share") or with a
        causative before it ("have your admin send"). After a noun or a relative it states
        what someone does or did ("Stripe gives us a token", "your request included the
        token", "tools that try passwords"): the model confirms such a hit, or not."""
        i = at - 1
        while i >= 0 and tokens[i] in self._auxiliaries and tokens[i] not in self._request_leads:
            i -= 1
        if i < 0 or tokens[i] in (CLAUSE, MENU_STEP) or tokens[i] in self._request_leads:
            return True  # after a menu step it names us, or the rules would not have found it
        return not self._causatives.isdisjoint(tokens[max(0, at - 4) : at])

    def _third_party_before(
        self, rule: UnsafeRule, tokens: tuple[str, ...], cut: int, at: int
    ) -> bool:
        """True if a third party stands before the act, where it could be the act's subject:
        "scammers often pose as us, asking you to send the code". A subordinate clause that
        closes before the act has a subject of its own, so one inside it is not the act's:
        "when the bank prompts you, paste it in this chat", "when prompted, send it to us"."""
        opened, before, here = cut, False, False
        for i in range(cut, at):
            if tokens[i] == CLAUSE:
                # a subordinate clause's third party is that clause's own subject
                before |= here and tokens[opened] not in self._subordinators
                opened, here = i + 1, False
            elif tokens[i] in rule.scope.subject_only:
                here = True
        return before or here

    def _clause_of(self, tokens: tuple[str, ...], at: int, last: int) -> tuple[int, int]:
        """The act's clause, (first token, one past its last), when a clause mark and a
        contrast word (", but", ", however") open it before the act, or a clause mark and a
        result word (", so") close it after the act, or a result word and its clause's subject
        ("so you can cancel", "so that"); else the sentence's start or end."""
        first = next(
            (
                i + 1
                for i in range(at - 1, 0, -1)
                if tokens[i] in self._contrasts and tokens[i - 1] == CLAUSE
            ),
            0,
        )
        end = next(
            (
                i
                for i in range(last + 1, len(tokens) - 1)
                if (tokens[i] == CLAUSE and tokens[i + 1] in self._results)
                or (tokens[i] in self._results and tokens[i + 1] in self._result_subjects)
            ),
            len(tokens),
        )
        return first, end

    def _beside_reasons(
        self, tokens: tuple[str, ...], at: int, last: int, cut: int, end: int
    ) -> tuple[int, int]:
        """(`cut`, `end`) narrowed past a reason clause, which gives the act a cause but does not
        doubt it: one after the act ("I skipped the check *since* you can't reach that inbox")
        ends the span, one before it up to its clause mark ("*Because* you can't sign in, I've
        reset 2FA") starts it after that mark."""
        end = next((i for i in range(last + 1, end) if tokens[i] in self._reasons), end)
        reason = next((i for i in range(at - 1, cut - 1, -1) if tokens[i] in self._reasons), None)
        if reason is not None:
            mark = next((i for i in range(at - 1, reason, -1) if tokens[i] == CLAUSE), None)
            if mark is not None:
                cut = mark + 1
        return cut, end

    def _concessive(self, tokens: tuple[str, ...], i: int, at: int) -> bool:
        """True for a condition word after the act's start that a concessive word leads: "your
        account won't be suspended *even if* it stays unpaid" asserts the act whatever happens."""
        return i > at and tokens[i - 1] in self._concessives


def _left_of(tokens: tuple[str, ...], i: int, skipping: frozenset[str]) -> int:
    """The index of the first word left of token `i` that is not in `skipping` (-1: none)."""
    i -= 1
    while i >= 0 and tokens[i] in skipping:
        i -= 1
    return i


def _found(pattern: re.Pattern[str] | None, text: str, low: int, high: int) -> bool:
    """True if the pattern matches at a token start inside text[low:high]."""
    if pattern is None:
        return False
    position = low
    while position < high:
        if pattern.match(text, position, high):
            return True
        position = text.find(" ", position, high) + 1
        if position == 0:
            return False
    return False
