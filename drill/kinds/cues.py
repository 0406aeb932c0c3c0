"""Which key points a free-form answer covers: cues read as words, with negation in view.

An answer and every cue are read the same way: casefolded, split into words at
spaces, hyphens, underscores and slashes ("memory-bound" is two words), "n't"
read as "not" ("doesn't" is "does not"), and every word reduced to its stem by
Snowball's English stemmer, so "queued", "queueing" and "queue" are one word and
so are "amortise" and "amortize" ("favour" and "favor", "analyse" and "analyze");
an acronym's plural is the acronym, however it is typed ("SLOs" and "slos" are
"SLO", "GPUs" is "GPU", "SMs" is "SM"). Numbers keep their digits (8,192 reads as
8192); the symbols + × ÷ / % = ≠ − are words of their own ("k+v", "1/TPOT"), "!="
is ≠, and an "x" between two words or numbers, or right after a number, is ×
("2 x 32", "rate x latency", "4x smaller").

A cue is found where its words stand next to one another in the answer, in
order; articles and a few intensifiers in between are skipped ("time to the
first token" is "time to first token"); a cue does not run from one sentence into the
next (over ; : . ! ?).

A cue found under negation or contrast does not count. It is negated when, in
the same clause, one of these stands before it: not (and "n't"), never, nor,
neither, cannot, at most NEGATION_REACH words earlier ("doesn't include
queueing", "TPOT, not TTFT"); no, without, unlike, "rather than", "instead of",
"as opposed to", at most NOUN_NEGATION_REACH words earlier ("no quality loss",
"decode rather than prefill"). It is also negated when a negated verb saying
whether it takes part or moves follows it, at once or after a word or two of its
noun phrase ("queueing is not included", "queueing time is not included", "TTFT
doesn't change"), and when it is said to be excluded, omitted, ignored or left
out; "the cached prefix doesn't need to be prefilled" leaves "cached prefix"
standing. "Not only", "not just" and "no matter" negate nothing. A clause
ends at , ; : . ! ?, brackets and a long dash between spaces (a full stop inside a
name, "LLM.int8", ends nothing), and at and, but, so, yet, while, whereas,
although, though, because, however; a reason denied ("not because of their content")
is negated within its reach, up to a "that", "which" or "who".

Polarity goes beyond "not": "regardless of", "independent of", "irrespective of",
"unrelated to" and "nothing to do with" deny what follows them, and a cue followed by
"has nothing to do with", "is irrelevant", "is unrelated" or "plays no role" is denied
("queueing has nothing to do with it").

A mistake named, or the alternative contrasted, is not a wrong claim made: no wrong
claim is read in what follows "a (common) mistake is to think", "it is a mistake to
assume", "the myth that", "the misconception that", "it is wrong to say", to the end of
its clause or a "since", "as" or "when" (NAMED_MISTAKE_REACH words at most), nor in
what follows at once "thinking", "assuming", "believing", "treating" or "expecting" where
it opens an item of a list ("(1) thinking throughput is the only metric"; not "Assuming
decode is compute-bound, ..." at a sentence's start), nor in a "which" or "who" clause
about what "unlike", "rather than", "instead of" or "as opposed to" sets aside ("unlike
static batching, which waits for a full batch, ..."). A point's words count there as
anywhere: the question may ask for the mistakes, or the alternative's defect.

A cue may leave a gap, written "...": "TTFT ... between tokens" is found where its
parts stand in order within one clause, at most GAP_REACH words apart, none of them
negated ("TTFT is the gap between tokens", not "TTFT is not the gap between tokens",
nor "TTFT covers the prompt, and TPOT the gap between tokens"). It lets a wrong claim
be written once for the many ways of wording it.

A cue holds its phrasings from the shared vocabulary (drill.kinds.phrasings): a cue
that is one phrasing of a group is also found where another is ("one forward pass",
"a single batched forward pass").

A cue that says which way something moves ("TTFT drops", "lower latency", "faster
decode") is read with its direction: the same words moving the other way ("TTFT
rises", "higher latency", "slower decode"), found and not negated, contradict its key
point, as a wrong claim does. A cue that denies something ("does not lower TTFT") is
not read the other way.

A key point is covered when one of its cues is found and not negated, outside the
clause of a wrong claim read about it, and none of its wrong claims is: a wrong claim
(cues of its own, such as "speeds up prefill" for speculative decoding, or the point's
direction said the other way) found and not negated marks the point missed and is named
in the verdict. The words of the clause that makes a wrong claim are the claim's, not
evidence of the point said right ("TTFT" in "TTFT is the gap between tokens", "batch"
in "it does not depend on what else is in the batch"): a point found only there is a
wrong claim; a point also said in another clause ("TTFT drops and it speeds up decode")
is found and contradicted at once. A negated wrong claim ("does not speed up prefill")
counts for nothing either way; a point that denies something lists the denial among its
cues.

The stemmer is imported when the first answer is read, never on the quiz's start.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# how many words (articles and intensifiers aside) may stand between a negating word
# and the cue it negates: a verb's "not" reaches over its verb phrase ("does not really
# include queueing"), a determiner or preposition only over its noun phrase ("no
# quality loss", "without a cache", "rather than prefill")
NEGATION_REACH = 4
NOUN_NEGATION_REACH = 2
# how many words (articles and intensifiers aside) a cue's gap ("...") may span
GAP_REACH = 6
# the gap of a cue, as a word of its own: "..." (and NFKC's reading of "…")
GAP = "..."

_VERB_NEGATORS = frozenset({"not", "never", "nor", "neither"})
_NOUN_NEGATORS = frozenset({"no", "without", "unlike", "nowhere"})
# two-word contrasts, negating what follows them
_CONTRASTS = frozenset({("rather", "than"), ("instead", "of"), ("opposed", "to")})
# "not only X but also Y", "no matter how large": nothing is denied
_NOT_NEGATING_NEXT = frozenset({"only", "just", "matter", "doubt", "less"})
# ... though "not only" and "not just" deny what they name unless a "but" or "also" adds
# to it in their sentence: "you can't just add the p99s"
_LIMITING = frozenset({"only", "just"})
_ADDING = frozenset({"but", "also", "too"})
# words that open a clause of their own inside a sentence ("it is not because of X that Y")
_RELATIVES = frozenset({"that", "which", "who"})
# "No it doesn't", "No, this only helps decode": an answer's no, not a determiner
_PRONOUNS = frozenset("it this that they you we i he she there".split())
_CLAUSE_WORDS = frozenset(
    "and but so yet while whereas although though because however".split()
)
# "queueing is not included", "TTFT doesn't change": a cue followed by one of these
# verbs, "not", and a word saying whether it takes part or moves, is denied; "the cached
# prefix doesn't need to be prefilled" denies something else
_AUXILIARIES = frozenset(
    "is are was were be been does do did has have had will would can could should may "
    "might must gets get".split()
)
_DENIED_ROLES = frozenset(
    "included include includes counted count counts part involved relevant affected affect "
    "affects changed change changes improved improve improves faster slower reduced reduce "
    "reduces lowered lower lowers helped help helps matter matters apply applies considered "
    "measured shrink shrinks drop drops benefit benefits fix fixes solve solves".split()
)
# "queueing is excluded", "queue time is left out": a denial without a "not"
_LEFT_OUT = frozenset("excluded omitted ignored".split())
# "queueing has nothing to do with it", "TTFT is irrelevant", "batch size plays no role"
_DENIED_AFTER = frozenset("nothing irrelevant unrelated".split())
_PLAYS = frozenset("play plays played playing".split())
# phrases that deny what follows them: "regardless of batch size", "independent of TTFT"
_DENYING_PHRASES = (
    ("regardless", "of"), ("irrespective", "of"), ("independent", "of"), ("unrelated", "to"),
    ("nothing", "to", "do", "with"),
)  # fmt: skip
# a mistake named, not made: "a common mistake is to think X", "it's a mistake to pick X",
# "the myth that X", "it is wrong to say X" name the rest of their clause
_NAMING_PHRASES = (
    ("mistake", "is", "to"), ("mistake", "to"), ("mistake", "is", "that"),
    ("mistake", "is"), ("misconception", "is", "that"), ("misconception", "that"),
    ("misconception", "is", "to"), ("myth", "is", "that"), ("myth", "that"),
    ("wrong", "to"),
)  # fmt: skip
NAMED_MISTAKE_REACH = 12
# a mistake named by its gerund, as in a list of mistakes ("thinking throughput is the
# only metric", "assuming recomputing is cheaper"): names a cue that starts at once (a
# word of the noun phrase aside)
_NAMING_GERUNDS = frozenset("thinking assuming believing treating expecting".split())
# ... where it opens an item of a list: "(2) assuming", "mistakes: thinking", "; treating",
# a bullet; not at a sentence's start or after a comma ("Assuming decode is compute-bound,
# buy FLOPs" makes the claim as a premise)
_LIST_MARKS = frozenset([")", ":", ";", "−"])
# a belief others hold names it, as a mistake an answer sets up: "people often think X",
# "some assume X", "many candidates believe X", "people say X" (the verb within two words
# of its subject)
_BELIEVING = frozenset("think thinks believe believes assume assumes claim say".split())
_OTHERS = frozenset("people some many others folks candidates you".split())
# words that end what a named mistake reaches: "it is a mistake to think X since Y"
_NAMING_ENDS = frozenset("since as when if whereas then".split())
# the phrases by their last word, so that a word is compared only with those it can end
def _by_last_word(phrases: Iterable[tuple[str, ...]]) -> dict[str, tuple[tuple[str, ...], ...]]:
    table: dict[str, tuple[tuple[str, ...], ...]] = {}
    for phrase in phrases:
        table[phrase[-1]] = (*table.get(phrase[-1], ()), phrase)
    return table


_DENYING_ENDING = _by_last_word(_DENYING_PHRASES)
_NAMING_ENDING = _by_last_word(_NAMING_PHRASES)
# which way a cue says something moves, by class; a word of one side contradicts the
# other side's ("drops" against "rises"); each class's words are stemmed when first used
_DIRECTIONS = (
    ("rise rises rising rose risen grow grows growing grew grown increase increases "
     "increased increasing higher more larger bigger longer raise raises raised climb "
     "climbs up",
     "fall falls falling fell fallen drop drops dropped dropping shrink shrinks shrank "
     "shrunk shrinking decrease decreases decreased decreasing lower lowers lowered less "
     "fewer smaller shorter reduce reduces reduced reducing cut cuts down"),
    ("faster quicker sooner", "slower"),
    ("earlier", "later"),
    ("better improve improves improved", "worse worsen worsens worsened degrade degrades"),
)  # fmt: skip
# how many words of the cue's noun phrase may stand between it and such a denial:
# "queueing time is not included", "the queue wait time isn't counted"; not a word that
# starts another clause ("TTFT drops as decode is not affected")
DENIAL_REACH = 2
# ... and over the subjects joined to it by "and" or commas, where the cue opens its
# clause and the verb is plural: "queueing and prefill are not part of it" denies both;
# "batching raises throughput and latency is not affected" denies nothing of throughput
COORDINATED_REACH = 5
_PLURAL_AUXILIARIES = frozenset("are were do have".split())
_NOT_IN_NOUN_PHRASE = _PRONOUNS | frozenset(
    "since as when if which who whose where until unless once after before then than for "
    "of in on at by to with from not".split()
)
# skipped when matching a cue: "time to the first token", "a really large batch"
_FILLERS = frozenset(
    "a an the its their any very much really quite even actually exactly".split()
)
_SYMBOLS = "+×÷/%=≠−<>"
_TOKEN = re.compile(
    r"\d+(?:,\d{3})+(?:\.\d+)?(?![\d,])"  # 8,192 or 1,234.5
    r"|\d+(?:\.\d+)?"  # 4096, 0.75
    r"|\.\.\."  # a gap in a cue; an ellipsis in an answer, a sentence end
    r"|[^\W\d_]+(?:'[^\W\d_]+)*"  # words, with an apostrophe inside: doesn't, user's
    rf"|[{re.escape(_SYMBOLS)}]"
    r"|[,;:.!?()\[\]{}]"  # clause and bracket punctuation
)
_PUNCTUATION = frozenset([*",;:.!?()[]{}", GAP])
_SENTENCE_ENDS = frozenset([*";:.!?", GAP])  # a cue is not read across these
# British spellings read as American ones before stemming: amortise, quantised, utilisation
_BRITISH = re.compile(r"(?<=[a-z]{2})is(e|es|ed|ing|ation|ations)$")
# ... and favour, behaviour, analyse: favor, behavior, analyze (not four, hour, your)
_BRITISH_OUR = re.compile(r"(?<=[a-z]{3})our(s|ed|ing|able|ite|ites)?$")
_BRITISH_YSE = re.compile(r"(?<=[a-z]{3})ys(e|es|ed|ing)$")
_VOWELS = frozenset("aeiouy")
_CONTRACTED = {"can't": "can", "won't": "will", "shan't": "shall", "cannot": "can"}


@dataclass(frozen=True)
class Token:
    stem: str  # what cues are compared on
    word: str  # the word as read, casefolded: negation is decided on it
    clause_end: bool = False  # punctuation or a word that ends a clause


def _noun_phrase_word(token: Token) -> bool:
    """Whether `token` may go on the noun phrase of a cue before its verb ("time")."""
    word = token.word
    return not (
        token.clause_end or word in _NOT_IN_NOUN_PHRASE or word in _AUXILIARIES
        or not word.isalpha()
    )


# "x" as a times sign: "2 x 32", "arrival rate x latency", "2x", "N x N"; not "the x
# axis", "x-axis" (after a word that opens a noun phrase, x is a name)
_TIMES_X = re.compile(r"(\w+|[)\]])\s+x\s+(?=[\w(\[])|(?<=\d)x(?![\w-])")
_BEFORE_A_NAME = frozenset("the a an this that its their each every per of on in along".split())


def _times(match: re.Match) -> str:
    before = match.group(1)
    if before is None:  # "2x"
        return "×"
    return match.group(0) if before in _BEFORE_A_NAME else f"{before} × "


def _normalise(text: str) -> str:
    text = _TIMES_X.sub(_times, unicodedata.normalize("NFKC", text).casefold())
    text = text.replace("’", "'").replace("‘", "'").replace("`", "'").replace("!=", " ≠ ")
    text = re.sub(r"[*·⋅∙]", "×", text)
    # a full stop inside a name is no sentence end: "LLM.int8", "torch.compile()"; one
    # before a plain word is ("memory-bound.Decode is ...", typed without a space)
    text = re.sub(r"(?<=[a-z])\.(?=[a-z_]*\d|[a-z_]+\()", " ", text)
    # a long dash between spaces sets off a clause, as a comma does
    text = re.sub(r"\s—\s", ", ", text)
    # a dash between spaces is a minus ("1 - live/reserved"); elsewhere it joins words
    text = re.sub(r"(?:(?<=\s)|^)[-–](?=\s|$)", "−", text)
    return re.sub(r"[-_–—]", " ", text)


@functools.cache
def _stemmer():
    """Snowball's English stemmer, compiled (PyStemmer) where it is installed, else the
    same algorithm in pure Python; the two give the same stems (tests/test_cues.py)."""
    try:
        import Stemmer  # PyStemmer
    except ImportError:
        from snowballstemmer.english_stemmer import EnglishStemmer

        return EnglishStemmer()
    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A word's stem: Snowball English, then without a final e ("queue", "queued" ->
    "queu"), so that forms the stemmer leaves apart still meet."""
    if not word.isalpha():
        return word
    word = _BRITISH.sub(r"iz\1", word)
    word = _BRITISH_YSE.sub(r"yz\1", _BRITISH_OUR.sub(r"or\1", word))
    if word.endswith("s") and (
        (len(word) >= 3 and not _VOWELS.intersection(word[:-1]))  # ttfts, hbms, sms
        or (len(word) >= 4 and not _VOWELS.intersection(word[:-2]))  # gpus, slos, slas
    ):
        word = word[:-1]  # an abbreviation's plural, however it is typed
    stemmed = _stemmer().stemWord(word)
    return stemmed[:-1] if len(stemmed) > 2 and stemmed.endswith("e") else stemmed


def _words(raw: str) -> list[str]:
    """A word as one or two words: doesn't -> does not, can't -> can not, user's -> user."""
    if raw in _CONTRACTED:
        return [_CONTRACTED[raw], "not"]
    if raw.endswith("n't"):
        return [raw[:-3], "not"]
    head, apostrophe, _tail = raw.partition("'")
    return [head] if apostrophe else [raw]


def tokens(text: str) -> tuple[Token, ...]:
    """The words, numbers, symbols and clause marks of `text`, in order."""
    found: list[Token] = []
    for raw in _TOKEN.findall(_normalise(text)):
        if raw in _PUNCTUATION:
            found.append(Token(raw, raw, clause_end=True))
        elif raw[0].isdigit():
            number = raw.replace(",", "")
            found.append(Token(number, number))
        elif raw in _SYMBOLS:
            found.append(Token(raw, raw))
        else:
            for word in _words(raw):
                found.append(Token(stem(word), word, clause_end=word in _CLAUSE_WORDS))
    return tuple(found)


@functools.lru_cache(maxsize=8192)
def _cue_words(cue: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A cue's words to look for (clause marks and fillers aside, a gap kept as GAP, never
    first, last or twice in a row): their stems, and the words as read."""
    kept: list[Token] = []
    for t in tokens(cue):
        if t.word == GAP:
            if kept and kept[-1].word != GAP:
                kept.append(t)
        elif not t.clause_end and t.word not in _FILLERS:
            kept.append(t)
    if kept and kept[-1].word == GAP:
        kept.pop()
    return tuple(t.stem for t in kept), tuple(t.word for t in kept)


def edge_clause_word(cue: str) -> str | None:
    """A word that ends a clause ("because", "so", "while") standing first or last in a cue
    (or a part of a cue with gaps), or None. An answer's clause words are not matched, so
    such a cue is read without it ("because of their content" as "of content", which
    "regardless of content" holds); one between two words of a cue is harmless ("k and v")."""
    parts: list[list[str]] = [[]]
    for t in tokens(cue):
        if t.word == GAP:
            parts.append([])
        elif t.word not in _FILLERS and (t.word.isalpha() or not t.clause_end):
            parts[-1].append(t.word)
    for words in parts:
        for word in words[:1] + words[-1:]:
            if word in _CLAUSE_WORDS:
                return word
    return None


def cue_stems(cue: str) -> tuple[str, ...]:
    """The stems a cue is matched on; empty when it has no word to look for."""
    return _cue_words(cue)[0]


@functools.lru_cache(maxsize=8192)
def cue_forms(cue: str) -> tuple[tuple[str, ...], ...]:
    """The stem sequences that show a cue: its words, for a cue of several words these
    written as one ("kv cache" is also "kvcache"), and every phrasing the shared
    vocabulary says is the same (drill.kinds.phrasings)."""
    stems, words = _cue_words(cue)
    if GAP in stems:
        return _gapped_forms(stems)
    forms = list(_phrasings().get(stems, (stems,))) if stems else []
    if len(words) > 1 and all(w.isalpha() for w in words):
        forms.append((stem("".join(words)),))
    return tuple(dict.fromkeys(forms))


# the most forms a cue with gaps is read as (its parts' phrasings combined)
MAX_GAPPED_FORMS = 256


def _gapped_forms(stems: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """A cue with gaps: each part in each of its phrasings, combined in order."""
    parts: list[tuple[str, ...]] = [()]
    for stem_ in stems:
        if stem_ == GAP:
            parts.append(())
        else:
            parts[-1] += (stem_,)
    forms: list[tuple[str, ...]] = [()]
    for k, part in enumerate(parts):
        joint = (GAP,) if k else ()
        forms = [
            form + joint + phrasing
            for form in forms
            for phrasing in _phrasings().get(part, (part,))
        ][:MAX_GAPPED_FORMS]
    return tuple(dict.fromkeys(forms))


@functools.cache
def _phrasings() -> dict[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The shared vocabulary (drill.kinds.phrasings), read once: a phrasing's stems -> the
    stems of every phrasing said to be the same."""
    from drill.kinds.phrasings import equivalents_table, load_groups

    return equivalents_table(load_groups(), cue_stems)


@functools.cache
def _direction_opposites() -> dict[str, tuple[str, ...]]:
    """A direction word's stem -> the stems of the words that move the other way."""
    opposites: dict[str, tuple[str, ...]] = {}
    for up, down in _DIRECTIONS:
        ups = tuple(dict.fromkeys(stem(w) for w in up.split()))
        downs = tuple(dict.fromkeys(stem(w) for w in down.split()))
        for one in ups:
            opposites[one] = downs
        for one in downs:
            opposites[one] = ups
    return opposites


_DENYING_STEMS = frozenset({"not", "no", "never", "without", "nor", "neither"})


@functools.lru_cache(maxsize=8192)
def opposite_forms(cue: str) -> tuple[tuple[str, ...], ...]:
    """The stem sequences that say a cue's direction the other way: each form of the cue
    with one direction word swapped for each word of the opposite side ("ttft drop" ->
    "ttft rise", "ttft grow", ...); none for a cue that names no direction, or that is
    nothing but a direction word (its subject is what the direction is read with)."""
    opposites = _direction_opposites()
    stems = cue_stems(cue)
    found: list[tuple[str, ...]] = []
    # a cue that denies ("does not lower ttft") is not read the other way
    if len(stems) >= 2 and not set(stems) & _DENYING_STEMS:
        for i, word in enumerate(stems):
            for other in opposites.get(word, ()):
                found.append(stems[:i] + (other,) + stems[i + 1 :])
    return tuple(dict.fromkeys(found))


def _ends_a_phrase(
    words: Sequence[str], i: int, table: dict[str, tuple[tuple[str, ...], ...]]
) -> bool:
    """Whether words[i] ends one of the phrases in `table` (by last word)."""
    for phrase in table.get(words[i], ()):
        start = i - len(phrase) + 1
        if start >= 0 and tuple(words[start : i + 1]) == phrase:
            return True
    return False


class Answer:
    """An answer read once, then asked about any number of cues."""

    def __init__(self, text: str) -> None:
        self.tokens = tokens(text)
        # the tokens cues are matched against, with their positions in self.tokens
        self._content = [
            (i, t.stem)
            for i, t in enumerate(self.tokens)
            if not t.clause_end and t.word not in _FILLERS
        ]
        self._stems = [stem for _i, stem in self._content]
        # where each stem stands among them: most cue forms start with a stem the
        # answer never uses, and are ruled out by one look-up
        self._starts: dict[str, list[int]] = {}
        for k, stem_k in enumerate(self._stems):
            self._starts.setdefault(stem_k, []).append(k)
        self._negators = self._negator_reaches()
        self._naming = self._naming_reaches()

    def _negator_reaches(self) -> dict[int, int]:
        """Position -> reach of every word that negates what follows it."""
        words = [t.word for t in self.tokens]
        added_later = self._added_later()
        found = {}
        for i, word in enumerate(words):
            following = words[i + 1] if i + 1 < len(words) else ""
            if following in _NOT_NEGATING_NEXT and not (
                following in _LIMITING and word in _VERB_NEGATORS and not added_later[i + 1]
            ):
                continue
            if word in _VERB_NEGATORS:
                found[i] = NEGATION_REACH
            elif word in _NOUN_NEGATORS and not (word == "no" and following in _PRONOUNS):
                found[i] = NOUN_NEGATION_REACH
            elif i > 0 and (words[i - 1], word) in _CONTRASTS:
                found[i] = NOUN_NEGATION_REACH
            if _ends_a_phrase(words, i, _DENYING_ENDING):  # "regardless of", "nothing to do with"
                found[i] = NOUN_NEGATION_REACH
        return found

    def _added_later(self) -> list[bool]:
        """For each position, whether a "but", "also", "too" or "as well" follows it in its
        sentence: a "not only" or "not just" there adds to what it names ("not only
        prefill but also decode"); else it denies it ("you can't just add the p99s").
        One pass from the end, so a text of many such phrases is read in linear time."""
        words = [t.word for t in self.tokens]
        later = [False] * len(words)
        adds = False
        for i in range(len(words) - 1, -1, -1):
            later[i] = adds
            if words[i] in _SENTENCE_ENDS:
                adds = False
            elif words[i] in _ADDING or (words[i] == "well" and i > 0 and words[i - 1] == "as"):
                adds = True
        return later

    def _naming_reaches(self) -> dict[int, int]:
        """Position -> reach of every phrase that names a mistake rather than making it
        ("a common mistake is to", "the myth that", "thinking" in a list of mistakes)."""
        words = [t.word for t in self.tokens]
        found = {}
        for i, word in enumerate(words):
            if _ends_a_phrase(words, i, _NAMING_ENDING):
                found[i] = NAMED_MISTAKE_REACH
            opens_an_item = i > 0 and words[i - 1] in _LIST_MARKS
            if word in _NAMING_GERUNDS and i not in found and opens_an_item:
                found[i] = 1
            if word in _BELIEVING and any(w in _OTHERS for w in words[max(0, i - 2) : i]):
                found[i] = NAMED_MISTAKE_REACH  # "people often think X", "some assume X"
        return found

    def names_a_mistake(self, start: int) -> bool:
        """Whether tokens[start] stands in a mistake the answer names rather than makes:
        after a naming phrase within its reach, in the same clause and before a "since",
        "as" or "when" that gives the answer's own reason; or in a "which" clause about
        what "unlike" or "rather than" sets aside."""
        between = 0
        for i in range(start - 1, -1, -1):
            token = self.tokens[i]
            if token.clause_end:
                return self._describes_the_contrasted(i)
            if between > NAMED_MISTAKE_REACH or token.word in _NAMING_ENDS:
                return False
            if i in self._naming and between <= self._naming[i]:
                return True
            if token.word not in _FILLERS:
                between += 1
        return False

    def only_under_a_condition(self, end: int) -> bool:
        """Whether what ends at tokens[end] is said to hold only under a condition that
        follows it: "p99s compose only if the same requests are slow", "a constant factor
        only for a one-token prompt" (a wrong claim hedged so is not made)."""
        following = [t.word for t in self.tokens[end + 1 : end + 3]]
        return following[:1] == ["only"] and following[1:] in (["if"], ["when"], ["for"])

    def _denied_reason(self, i: int) -> bool:
        """Whether the "because" at tokens[i] is "not because": a reason named and denied
        ("not because of their content", "it is slow not because the queue grows"; not
        "they are not, because decode...", nor an elliptical "they are not because
        decode...", whose "not" denies the verb left out)."""
        if i < 1 or self.tokens[i - 1].word not in _VERB_NEGATORS:
            return False
        following = self.tokens[i + 1].word if i + 1 < len(self.tokens) else ""
        return following == "of" or (i > 1 and self.tokens[i - 2].word not in _AUXILIARIES)

    def _describes_the_contrasted(self, comma: int) -> bool:
        """Whether the clause after tokens[comma] is a "which", "who" or "where" clause
        about what the clause before it sets aside ("unlike static batching, which waits
        for a full batch, ..."; "rather than TP, which splits the heads, ..."): it says
        nothing of the answer's own subject."""
        following = self.tokens[comma + 1].word if comma + 1 < len(self.tokens) else ""
        if self.tokens[comma].word != "," or following not in ("which", "who", "where"):
            return False
        for i in range(comma - 1, -1, -1):
            token = self.tokens[i]
            previous = self.tokens[i - 1].word if i > 0 else ""
            if (token.word, previous) == (")", "(") or (
                token.word == "(" and self.tokens[i + 1].word == ")"
            ):
                continue  # an empty pair ends a name: "LLM.int8()"
            if token.clause_end:
                return False
            if token.word == "unlike" or (previous, token.word) in _CONTRASTS:
                return True
        return False

    def _negated(self, start: int, end: int) -> bool:
        """Whether the cue at tokens[start..end] stands under negation or contrast."""
        between = 0
        relative = False  # "it is not because of X that Y": Y is the clause's own
        for i in range(start - 1, -1, -1):
            token = self.tokens[i]
            relative = relative or token.word in _RELATIVES
            if token.word == "because" and not relative and self._denied_reason(i):
                # "not because of its content": the reason given is the one denied
                if between <= NEGATION_REACH:
                    return True
            if token.clause_end or between > NEGATION_REACH:
                break
            if i in self._negators and between <= self._negators[i]:
                return True
            if token.word not in _FILLERS:
                between += 1
        # "queueing is not included", "TTFT doesn't change", "TTFT is not really affected",
        # and past the rest of the cue's noun phrase: "queueing time is not included"
        after = [t for t in self.tokens[end + 1 : end + 12] if t.word not in _FILLERS]
        joined = False  # past an "and" or a comma that joins another subject to the cue's
        for skip in range(COORDINATED_REACH + 1):
            words = [t.word for t in after[skip : skip + 3]]
            if joined and words[:1] and words[0] in _AUXILIARIES:
                if words[0] not in _PLURAL_AUXILIARIES:
                    return False
            if len(words) >= 2 and words[0] in _AUXILIARIES and (
                words[1] in _LEFT_OUT or tuple(words[1:3]) == ("left", "out")
                or words[1] in _DENIED_AFTER
                or (words[1:2] == ["not"] and words[2:3] and words[2] in _DENIED_ROLES)
            ):  # fmt: skip
                return True
            if len(words) >= 2 and words[0] in _PLAYS and words[1] == "no":
                return True  # "batch size plays no role"
            if skip >= len(after):
                return False
            if after[skip].word in ("and", ",") and self._opens_a_clause(start):
                joined = True
            elif not _noun_phrase_word(after[skip]) or (skip >= DENIAL_REACH and not joined):
                return False
        return False

    def _opens_a_clause(self, start: int) -> bool:
        """Whether tokens[start] is the first word of its clause (fillers aside)."""
        for i in range(start - 1, -1, -1):
            if self.tokens[i].clause_end:
                return True
            if self.tokens[i].word not in _FILLERS:
                return False
        return True

    def first_stems(self) -> Iterable[str]:
        """Every stem a cue's form may start with here, each once."""
        return self._starts.keys()

    def finds(self, cue: str) -> bool:
        """Whether `cue` appears in the answer and is not negated there."""
        return bool(self.spans(cue))

    def spans(self, cue: str) -> list[tuple[int, int]]:
        """Where `cue` appears in the answer, not negated: (first, last) token positions."""
        return [span for wanted in cue_forms(cue) for span in self._form_spans(wanted)]

    def reverses(self, cue: str) -> bool:
        """Whether the answer says `cue`'s direction the other way, not negated
        ("TTFT rises" against the cue "TTFT drops")."""
        return any(self._form_spans(wanted) for wanted in opposite_forms(cue))

    def reverses_any(self, cues: Iterable[str]) -> bool:
        return any(self.reverses(cue) for cue in cues)

    def _form_spans(self, wanted: tuple[str, ...]) -> list[tuple[int, int]]:
        """Every place the stems `wanted` stand in a row, within one sentence, and not
        negated."""
        if GAP in wanted:
            return self._gapped_spans(wanted)
        starts = self._starts.get(wanted[0])
        if starts is None:
            return []
        stems = self._stems
        size = len(wanted)
        found = []
        for k in starts:
            if tuple(stems[k : k + size]) == wanted:
                start, end = self._content[k][0], self._content[k + size - 1][0]
                if self._punctuated(start, end) or self._negated(start, end):
                    continue
                found.append((start, end))
        return found

    def _gapped_spans(self, wanted: tuple[str, ...]) -> list[tuple[int, int]]:
        """Every place a form with gaps stands: its parts in order, each not negated,
        within one clause, each at most GAP_REACH words after the one before."""
        cut = wanted.index(GAP)
        found = []
        for start, end in self._form_spans(wanted[:cut]):
            for next_start, next_end in self._form_spans(wanted[cut + 1 :]):
                if next_start > end and self._within_reach(end, next_start):
                    found.append((start, next_end))
                    break
        return found

    def _within_reach(self, end: int, start: int) -> bool:
        """Whether tokens[start] stands in the clause of tokens[end], at most GAP_REACH
        words (fillers aside) after it."""
        between = self.tokens[end + 1 : start]
        return not any(t.clause_end for t in between) and (
            sum(t.word not in _FILLERS for t in between) <= GAP_REACH
        )

    def clause_around(self, start: int, end: int) -> tuple[int, int]:
        """The first and last token positions of the clause that tokens[start..end] stand
        in (of the clauses, where a cue runs over a comma: "TPOT, not TTFT")."""
        low = start
        while low > 0 and not self.tokens[low - 1].clause_end:
            low -= 1
        high = end
        while high + 1 < len(self.tokens) and not self.tokens[high + 1].clause_end:
            high += 1
        return low, high

    def _punctuated(self, start: int, end: int) -> bool:
        """Whether a sentence ends inside tokens[start..end] (a comma may stand in a cue:
        "TPOT, not TTFT", "[batch, heads, ...]")."""
        return any(self.tokens[i].word in _SENTENCE_ENDS for i in range(start + 1, end))


# how a wrong claim that is a key point said the other way begins (drill.kinds.concept)
OPPOSITE = "the opposite of: "


@dataclass(frozen=True)
class Coverage:
    """What an answer says about each key point."""

    covered: tuple[bool, ...]
    # per point: the wrong claim made (a point said the other way: OPPOSITE + the point),
    # or None
    wrong_claims: tuple[str | None, ...]
    # per point: a cue found although a wrong claim about the point was found too
    conflicted: tuple[bool, ...] = ()


@dataclass(frozen=True)
class _Question:
    """A question's cues read once: every stem sequence any of them is found as (`forms`,
    each once), those by their first stem, and per wrong claim and per point which forms
    show it (in the order its cues list them) and, for a point, which say it the other way."""

    forms: tuple[tuple[str, ...], ...]
    by_first: dict[str, tuple[int, ...]]
    claims: tuple[tuple[int, str, tuple[int, ...], frozenset[int]], ...]
    points: tuple[tuple[tuple[int, ...], frozenset[int], frozenset[int]], ...]


@functools.lru_cache(maxsize=1024)
def _question(
    key_points: tuple[tuple[str, tuple[str, ...]], ...],
    wrong_claims: tuple[tuple[int, str, tuple[str, ...]], ...],
) -> _Question:
    """The cues of a question read once, keyed by all of them: every answer to it reuses
    the reading."""
    ids: dict[tuple[str, ...], int] = {}

    def form_ids(forms: Iterable[tuple[str, ...]]) -> tuple[int, ...]:
        return tuple(ids.setdefault(form, len(ids)) for form in forms)

    claims = []
    for index, claim, cues in wrong_claims:
        shown = form_ids(form for cue in cues for form in cue_forms(cue))
        claims.append((index, claim, shown, frozenset(shown)))
    points = []
    for _point, cues in key_points:
        shown = form_ids(form for cue in cues for form in cue_forms(cue))
        reversed_ = form_ids(form for cue in cues for form in opposite_forms(cue))
        points.append((shown, frozenset(shown), frozenset(reversed_)))
    by_first: dict[str, list[int]] = {}
    for form, k in ids.items():
        by_first.setdefault(form[0], []).append(k)
    return _Question(
        tuple(ids),
        {first: tuple(found) for first, found in by_first.items()},
        tuple(claims),
        tuple(points),
    )


def coverage(
    text: str,
    key_points: Sequence[tuple[str, Sequence[str]]],
    wrong_claims: Iterable[tuple[int, str, Sequence[str]]] = (),
) -> Coverage:
    """For each (point, cues), whether the answer covers it, the wrong claim it makes
    about it, if any (`wrong_claims` are (point index, claim, cues); a cue said the
    other way is one too), and whether it also said the point right."""
    answer = Answer(text or "")
    question = _question(
        tuple((point, tuple(cues)) for point, cues in key_points),
        tuple((index, claim, tuple(cues)) for index, claim, cues in wrong_claims),
    )
    # where each form stands in the answer, not negated: only forms whose first stem the
    # answer uses can stand there at all
    spans_of: dict[int, list[tuple[int, int]]] = {}
    for first in answer.first_stems():
        for k in question.by_first.get(first, ()):
            spans = answer._form_spans(question.forms[k])
            if spans:
                spans_of[k] = spans
    # a wrong claim is read only where the answer makes it, not where it names it as a
    # mistake ("a common mistake is to think X") or says it holds only under a condition
    # ("X only if Y"); a point's words count there as before
    said = {
        k: kept
        for k, spans in spans_of.items()
        if (kept := [
            span for span in spans
            if not answer.names_a_mistake(span[0]) and not answer.only_under_a_condition(span[1])
        ])
    }
    claims: list[str | None] = [None] * len(key_points)
    # the clauses where each point's wrong claim was read: a cue of the point there is
    # the claim's own word ("TTFT" in "TTFT is the gap between tokens"), not the point
    # said right
    claimed: list[list[tuple[int, int]]] = [[] for _ in key_points]
    for index, claim, shown, any_of in question.claims:
        if not 0 <= index < len(claims) or any_of.isdisjoint(said):
            continue
        claims[index] = claims[index] or claim
        claimed[index] += [
            answer.clause_around(*span) for k in shown for span in said.get(k, ())
        ]
    for i, (point, _cues) in enumerate(key_points):
        reversed_ = question.points[i][2]
        if reversed_.isdisjoint(said):
            continue
        claims[i] = claims[i] or OPPOSITE + point
        claimed[i] += [
            answer.clause_around(*span) for k in reversed_ for span in said.get(k, ())
        ]
    found = [
        not any_of.isdisjoint(spans_of)
        and any(
            not any(low <= start and end <= high for low, high in claimed[i])
            for k in shown
            for start, end in spans_of.get(k, ())
        )
        for i, (shown, any_of, _reversed) in enumerate(question.points)
    ]
    covered = tuple(claims[i] is None and hit for i, hit in enumerate(found))
    conflicted = tuple(claims[i] is not None and hit for i, hit in enumerate(found))
    return Coverage(covered, tuple(claims), conflicted)
