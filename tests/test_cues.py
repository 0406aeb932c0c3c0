"""How a free-form answer is read against cues (drill.kinds.cues), sentence by sentence:
apostrophes and symbols as people type them, numbers with separators, and how far a
negation or a denial reaches."""

import pytest

from drill.kinds import cues
from drill.kinds.cues import Answer, coverage, tokens


@pytest.fixture(autouse=True)
def _cues_read_afresh():
    """The cue readers keep what they have read; each test here reads afresh, so a test
    runs every line it checks whatever ran before it (mutation testing relies on it)."""
    for value in vars(cues).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


def finds(answer: str, cue: str) -> bool:
    return Answer(answer).finds(cue)


def test_a_curly_or_backtick_apostrophe_negates_as_a_straight_one():
    assert finds("it doesn't include queueing", "queueing") is False
    assert finds("it doesn’t include queueing", "queueing") is False
    assert finds("it doesn‘t include queueing", "queueing") is False
    assert finds("it doesn`t include queueing", "queueing") is False


def test_cannot_and_cant_negate():
    assert finds("it cannot include queueing", "queueing") is False
    assert finds("it can't include queueing", "queueing") is False
    assert finds("it won't include queueing", "queueing") is False


def test_a_reason_denied_is_negated():
    assert finds("they draw attention not because of their content", "their content") is False
    assert finds("they draw attention isn't because of their content", "their content") is False
    assert finds("they draw attention because of their content", "their content") is True
    # the "not" belongs to another clause
    assert finds("it is not slow, because of their content", "their content") is True
    # and a reason denied reaches no further than a "not" does
    assert finds(
        "not because of what the very first few tokens happen to hold as content", "content"
    ) is True
    # an elliptical "not" before a reason denies the verb left out, not the reason
    assert finds("they are not because decode is memory bound", "memory bound") is True
    assert finds("it can't because decode is memory bound", "memory bound") is True
    # a cleft sentence: what follows "that" is said
    assert finds("it is not because of batch size that tpot grows", "tpot grows") is True
    assert finds("it is not because of batch size that tpot grows", "batch size") is False


def test_a_star_or_a_dot_is_a_times_sign():
    assert finds("the cache is 2*layers*heads", "2 × layers") is True
    assert finds("the cache is 2·layers·heads", "2 × layers") is True


@pytest.mark.parametrize(
    ("answer", "cue", "found"),
    [
        ("the cache is 2 x layers x heads", "2 × layers", True),
        ("arrival rate x latency", "arrival rate × latency", True),
        ("FP8 makes it 2x smaller", "2× smaller", True),
        ("an N x N score matrix", "n × n", True),
        ("the x axis shows the batch", "× axis", False),  # a variable, not a sign
        ("box x", "box ×", False),  # nothing after it to multiply
    ],
)
def test_an_x_between_words_or_after_a_number_is_a_times_sign(answer, cue, found):
    assert finds(answer, cue) is found


def test_an_acronyms_plural_is_the_acronym_however_it_is_typed():
    assert [t.stem for t in tokens("SLOs, slos, GPUs gpus SMs sms LLMs TTFTs")] == [
        "slo", ",", "slo", ",", "gpu", "gpu", "sm", "sm", "llm", "ttft",
    ]  # fmt: skip
    assert finds("requests that meet their SLOs", "meet the slo") is True
    assert finds("requests that meet their slos", "meet the SLO") is True
    assert finds("spread over the gpus", "spread over the GPUs") is True
    # a word with a vowel before its last two letters is the stemmer's: "bias", "status"
    assert [t.stem for t in tokens("bias status tokens")] == ["bias", "status", "token"]


@pytest.mark.parametrize(
    ("answer", "cue", "read"),
    [
        # a mistake named is not a wrong claim made
        ("A common mistake is to think the weights are the hard part",
         "weights are the hard part", False),
        ("It's a mistake to think throughput is the only metric",
         "throughput is the only metric", False),
        ("a mistake is assuming recomputing is cheaper", "recomputing is cheaper", False),
        ("A common mistake is to think that at batch 256 the step still reads only 13B",
         "reads only 13b", False),
        ("It's a mistake to pick the largest group", "pick the largest group", False),
        ("(1) thinking throughput is the only metric that matters",
         "throughput is the only metric", False),
        ("(2) assuming recomputing is cheaper than a cache", "recomputing is cheaper", False),
        ("p99 first; treating percentiles as additive", "percentiles as additive", False),
        ("the myth that FP8 costs nothing", "fp8 costs nothing", False),
        ("the misconception is that TTFT excludes queueing", "ttft excludes queueing", False),
        ("it is wrong to think decode is compute bound", "decode is compute bound", False),
        ("Mistakes: thinking decode is compute bound", "decode is compute bound", False),
        ("- assuming recomputing is cheaper", "recomputing is cheaper", False),
        # a belief others hold: set up to be corrected
        ("People often think batching only affects throughput", "batching only affects", False),
        ("Some assume a higher budget raises TTFT", "higher budget raises ttft", False),
        ("many candidates believe decode is compute bound", "decode is compute bound", False),
        ("If you think the KV cache hardly matters, size it", "kv cache hardly matters", False),
        # said to hold only under a condition that follows it
        ("p99s compose only if the same requests are slow", "p99s compose", False),
        ("it is a constant factor only for a one-token prompt", "constant factor", False),
        ("it is a constant factor for a one-token prompt", "constant factor", True),
        # ... up to the answer's own reason, and not a premise at a sentence's start
        ("It is a mistake to think decode is memory bound since decode is compute bound",
         "decode is compute bound", True),
        ("It is a mistake to think X as decode is compute bound", "decode is compute bound",
         True),
        ("Assuming decode is compute bound, buy FLOPs", "decode is compute bound", True),
        ("So, assuming decode is compute bound, buy FLOPs", "decode is compute bound", True),
        # ... and only that mistake: the next clause, or a gerund's far object, is said
        ("a common mistake is to think TTFT excludes queueing; then TTFT excludes queueing",
         "ttft excludes queueing", True),
        ("thinking about it, decode is compute bound", "decode is compute bound", True),
        ("the weights are the hard part", "weights are the hard part", True),
        ("I think decode is compute bound", "decode is compute bound", True),
        ("some claims: decode is compute bound", "decode is compute bound", True),
    ],
)  # fmt: skip
def test_a_mistake_named_is_not_a_wrong_claim_made(answer, cue, read):
    found = coverage(answer, [("P", ("zzz",))], [(0, "W", (cue,))])
    assert found.wrong_claims == (("W",) if read else (None,))


def test_a_point_named_in_a_mistake_is_still_read():
    """A question may ask for the mistakes: their words are its points."""
    found = coverage("A common mistake is forgetting the dtype", [("P", ("forgetting the dtype",))])
    assert found.covered == (True,)
    assert coverage("thinking speculative decoding helps prefill", [("P", ("speculative",))]
                    ).covered == (True,)  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "cue", "read"),
    [
        # a "which" clause about what "unlike" or "rather than" sets aside is not claimed
        # of the answer's own subject
        ("unlike tensor parallelism, which splits the attention heads, it splits the "
         "sequence", "splits the attention heads", False),
        ("Unlike LLM.int8(), which keeps the outlier channels in FP16, SmoothQuant scales",
         "keeps outlier channels in fp16", False),
        ("rather than TP, which splits the heads, we use PP", "splits the heads", False),
        ("Unlike a contiguous allocator, where the pool becomes fragmented, paging wastes "
         "little", "pool becomes fragmented", False),
        # a "which" clause with no contrast before it, or after a sentence's end, is said
        ("TP splits the attention heads, which needs all-reduces", "needs all reduces", True),
        ("Unlike X. Decode, which is slow, streams", "is slow", True),
        ("Prefill is fast (unlike decode), which matters", "matters", True),
        ("Unlike static batching, continuous batching, which pads requests, wastes slots",
         "pads requests", True),
    ],
)  # fmt: skip
def test_what_a_contrast_sets_aside_is_no_wrong_claim(answer, cue, read):
    found = coverage(answer, [("P", ("zzz",))], [(0, "W", (cue,))])
    assert found.wrong_claims == (("W",) if read else (None,))


def test_the_defect_of_what_a_contrast_sets_aside_is_still_a_point():
    answer = (
        "Unlike static batching, which holds every slot until the longest sequence "
        "finishes, continuous batching re-forms the batch every step."
    )
    assert coverage(answer, [("P", ("holds every slot",))]).covered == (True,)


def test_a_full_stop_inside_a_name_ends_no_sentence():
    assert [t.word for t in tokens("LLM.int8() or torch.compile() now. Next")] == [
        "llm", "int", "8", "(", ")", "or", "torch", "compile", "(", ")", "now", ".", "next",
    ]  # fmt: skip
    # typed without a space, a full stop before a plain word still ends a sentence
    assert [t.word for t in tokens("not memory-bound.Decode is")] == [
        "not", "memory", "bound", ".", "decode", "is",
    ]  # fmt: skip
    assert finds("Prefill is not memory-bound.Decode is compute-bound", "decode is compute bound")


def test_a_long_dash_between_spaces_sets_off_a_clause():
    assert [t.word for t in tokens("a mistake — decode")] == ["a", "mistake", ",", "decode"]


def test_british_spellings_meet_american_ones():
    assert finds("schedulers favour short jobs", "favor short") is True
    assert finds("we analysed the behaviour", "analyzed the behavior") is True
    # words that only end the same way are left alone
    assert [t.stem for t in tokens("four hours of flour")] == ["four", "hour", "of", "flour"]


def test_not_equal_is_a_symbol_not_a_sentence_end():
    assert [t.word for t in tokens("TTFT != TPOT")] == ["ttft", "≠", "tpot"]
    assert finds("TTFT != TPOT", "ttft ≠ tpot") is True


def test_a_dash_between_spaces_is_a_minus_and_elsewhere_joins_words():
    assert [t.word for t in tokens("waste = 1 - live/reserved")] == [
        "waste", "=", "1", "−", "live", "/", "reserved",
    ]  # fmt: skip
    assert [t.word for t in tokens("memory-bound kv_cache")] == ["memory", "bound", "kv", "cache"]


def test_a_number_reads_the_same_with_or_without_thousands_commas():
    assert finds("a batch of 8,192 tokens", "8192") is True
    assert finds("a batch of 8192 tokens", "8,192") is True
    assert [t.word for t in tokens("8,192 tokens")][0] == "8192"


def test_a_number_or_a_symbol_matches_only_itself():
    assert finds("a batch of 4096 tokens", "8192") is False
    assert finds("the cache holds k + v", "k × v") is False
    assert finds("the cache holds k × v", "k × v") is True


def test_a_number_after_a_cue_ends_its_noun_phrase():
    assert finds("TTFT 100 ms later", "ttft") is True


def test_not_only_denies_nothing_but_a_later_not_still_does():
    assert finds("not only prefill; decode does not include queueing", "queueing") is False


def test_of_course_at_the_start_is_no_contrast_with_instead_at_the_end():
    assert finds("of course decode is memory-bound, it reads weights instead", "decode") is True


def test_a_denial_after_the_cue_counts_even_at_the_start_of_a_sentence():
    assert finds("Measured from arrival. Queueing is not included", "queueing") is False


def test_a_denial_reaches_over_two_words_of_the_cues_noun_phrase_not_three():
    assert finds("queueing wait time is not included", "queueing") is False
    assert finds("queueing wait time delay is not included", "queueing") is True


def test_a_denial_after_subjects_joined_by_and_denies_each_of_them():
    text = "Queueing and prefill are not part of it."
    assert (finds(text, "queueing"), finds(text, "prefill")) == (False, False)
    assert finds("The queue wait and the prefill time aren't counted", "queue wait") is False
    assert finds("Queueing, prefill and decode are not included", "queueing") is False


def test_an_and_joins_subjects_only_at_the_clause_start_and_with_a_plural_verb():
    # the second clause's subject is another's: throughput is raised, latency unaffected
    assert finds("batching raises throughput and latency is not affected", "throughput") is True
    # a singular verb: "and" joins two clauses, the first says nothing is denied
    assert finds("Queueing and prefill is not included", "queueing") is True
    # past the reach of a joined subject
    assert finds("queueing and the long prefill pass over the prompt are not counted", "queueing") is True


def test_not_just_or_not_only_denies_what_it_names_unless_something_is_added_to_it():
    assert finds("You can't just add the p99s", "add the p99s") is False
    assert finds("not only the first token is sent, the whole cache moves", "first token") is False
    assert finds("not only prefill but also decode", "prefill") is True
    assert finds("not just prefill, decode too", "prefill") is True
    assert finds("not just prefill; decode as well", "prefill") is False  # another sentence


def test_a_reason_denied_with_not_because_is_not_given():
    assert finds("It is slow not because the queue grows", "queue grows") is False
    assert finds("It is slow not because of the queue", "queue") is False
    assert finds("It is not, because the queue grows", "queue grows") is True


def test_a_fix_or_solve_denied_after_the_cue_denies_it():
    assert finds("a fixed seed won't fix it", "fixed seed") is False
    assert finds("paging does not solve it", "paging") is False
    assert finds("paging solves it", "paging") is True


def test_nowhere_near_denies_what_follows():
    assert finds("decode is nowhere near peak FLOPs", "near peak flops") is False
    assert finds("decode is nowhere near peak FLOPs", "peak flops") is False
    assert finds("prefill runs near peak FLOPs", "near peak flops") is True


def test_no_doubt_at_the_end_of_an_answer_denies_nothing():
    assert finds("prefill is compute-bound, no doubt", "doubt") is True


def test_a_wrong_claim_about_a_point_that_does_not_exist_is_ignored():
    result = coverage("queueing", [("p", ["queue"])], [(1, "claim", ["queue"])])
    assert (result.covered, result.wrong_claims) == ((True,), (None,))


def test_the_compiled_stemmer_and_the_pure_python_one_agree_on_every_word_of_the_deck():
    import re
    from pathlib import Path

    Stemmer = pytest.importorskip("Stemmer")
    from snowballstemmer.english_stemmer import EnglishStemmer

    bank = Path(cues.__file__).resolve().parents[2] / "question_bank"
    words = sorted(
        {w for path in bank.glob("*.yaml") for w in re.findall(r"[a-z]+", path.read_text().lower())}
    )
    assert len(words) > 3000
    compiled, pure = Stemmer.Stemmer("english"), EnglishStemmer()
    assert [w for w in words if compiled.stemWord(w) != pure.stemWord(w)] == []
    assert [compiled.stemWord(w) for w in ("queueing", "batched", "generously")] == [
        "queue", "batch", "generous",
    ]  # fmt: skip
