"""The scored report of a mock interview: figures from the answers, and the report as
terminal text, Markdown, one self-contained web page, or JSON.

Scoring: a graded answer (numeric) scores 1 when right (a unit slip included) and 0
when wrong; an explanation (concept) scores the share of its key points it covers; a
question passed scores 0. A topic's score is the sum over its questions asked.

The three things to drill next rank what cost the most points: first the named mistakes
and the explanations, by the points they lost (a named mistake 1 per wrong answer that
made it; an explanation the share of its key points it missed, so one that missed 4 of 5
points, 0.8, ranks above one that missed 1 of 4, 0.25; ties go to the earlier question),
then the topics that lost points, the weakest share first. Two that would send you to
the same command are one. Everything here is a pure function of the report's rows: the
report of a stored interview (drill.interview.stored) is built from the same rows.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drill.interview.loop import Answer, InterviewResult
from drill.interview.plan import clock
from drill.kinds import kind_of
from drill.kinds.concept import points_text
from drill.reports.html_page import REPORT_CSS, page_head
from drill.reports.markdown_text import md_cell, md_code, md_escape
from drill.text import printable

TITLE = "kvdrill mock interview: report"
DRILL_NEXT = 3
ENDINGS = {
    "done": "",
    "time": "time was up",
    "quit": "ended with q",
    "eof": "input ended",
    "interrupt": "interrupted",
    "cut": "cut short (its end was not saved)",
}


@dataclass(frozen=True)
class QuestionRow:
    number: int
    question_id: str
    topic: str
    kind: str
    follow_up_of: int | None
    asked: str  # the question as asked: a follow-up's words, else its text
    answer: str | None  # None: passed
    verdict: str  # "Right", "Wrong", "Right, with a unit slip", "2 of 3 key points", "Passed"
    expected: str  # the right answer, or a concept question's model answer
    mistake: str | None  # the named mistake, or the wrong claims of an explanation
    missed: tuple[str, ...]  # key points an explanation missed
    duration_ms: int
    points: float
    rating: int
    details: tuple[str, ...]  # the verdict as the quiz would have shown it
    mistake_id: str | None = None  # the named mistake of a wrong answer (Drill next groups them)


@dataclass(frozen=True)
class TopicRow:
    topic: str
    asked: int
    points: float

    @property
    def percent(self) -> int:
        return round(100 * self.points / self.asked) if self.asked else 0


@dataclass(frozen=True)
class Suggestion:
    what: str
    why: str
    command: str


@dataclass(frozen=True)
class Report:
    seed: int
    minutes: float
    planned: int
    ended_by: str
    elapsed_s: float
    rows: tuple[QuestionRow, ...]
    topics: tuple[TopicRow, ...]
    drill_next: tuple[Suggestion, ...]

    @property
    def points(self) -> float:
        return sum(row.points for row in self.rows)

    @property
    def percent(self) -> int:
        return round(100 * self.points / len(self.rows)) if self.rows else 0


# ----------------------------------------------------------------------------- figures


def question_row(answer: Answer) -> QuestionRow:
    """One answer as the report shows it."""
    turn, verdict = answer.turn, answer.verdict
    instance = turn.instance
    kind = kind_of(instance.kind)
    points_total = len(instance.key_points)
    missed: tuple[str, ...] = ()
    mistake = None
    if answer.text is None:
        word, points = "Passed", 0.0
        missed = tuple(point for point, _ in instance.key_points)
    elif kind.self_rated:
        covered = tuple(verdict.covered) + (False,) * points_total
        got = sum(1 for c in covered[:points_total] if c)
        missed = tuple(p for (p, _), c in zip(instance.key_points, covered, strict=False) if not c)
        claims = [claim.strip() for claim in verdict.wrong_claims if claim]
        word = f"{got} of {points_total} key points"
        points = got / points_total if points_total else 0.0
        mistake = "; ".join(f'"{claim}" is wrong' for claim in claims) or None
    else:
        if verdict.correct:
            word = "Right" if verdict.status == "correct" else "Right, with a unit slip"
        else:
            word = "Wrong"
        points = 1.0 if verdict.correct else 0.0
        mistake = verdict.misconception_name
    if kind.self_rated:
        expected = (instance.answer_text or "").strip()
    else:
        expected = kind.expected_text(instance)  # type: ignore[attr-defined]
    return QuestionRow(
        number=turn.number,
        question_id=turn.question_id,
        topic=turn.topic,
        kind=instance.kind,
        follow_up_of=turn.follow_up_of,
        asked=(turn.ask or instance.text).strip(),
        answer=answer.text,
        verdict=word,
        expected=expected,
        mistake=mistake,
        missed=missed,
        duration_ms=answer.duration_ms,
        points=points,
        rating=answer.rating,
        details=tuple(kind.verdict_lines(instance, verdict)),
        mistake_id=verdict.misconception if verdict.correct is False else None,
    )


def _topics(rows: Sequence[QuestionRow]) -> tuple[TopicRow, ...]:
    asked: dict[str, list[float]] = {}
    for row in rows:
        asked.setdefault(row.topic, []).append(row.points)
    return tuple(TopicRow(t, len(p), sum(p)) for t, p in sorted(asked.items()))


def _numbers(numbers: Sequence[int]) -> str:
    word = "question" if len(numbers) == 1 else "questions"
    shown = [str(n) for n in numbers]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return f"{word} {listed}"


def drill_next(rows: Sequence[QuestionRow]) -> tuple[Suggestion, ...]:
    """The three things to drill next (see the module docstring)."""
    ranked: list[tuple[float, int, Suggestion]] = []  # (points lost, first question, what)
    mistakes: dict[str, list[QuestionRow]] = {}
    for row in rows:
        if row.mistake_id:
            mistakes.setdefault(row.mistake_id, []).append(row)
    for hits in mistakes.values():
        what = f'the mistake "{hits[0].mistake}"'
        command = f"kvdrill quiz --topic {hits[0].topic} --cram"
        suggestion = Suggestion(what, _numbers([r.number for r in hits]), command)
        ranked.append((len(hits), hits[0].number, suggestion))
    for row in rows:
        if kind_of(row.kind).self_rated and row.points < 1:
            why = "passed" if row.answer is None else f"covered {row.verdict}"
            item = Suggestion(
                f"the key points of {row.question_id}", why, f"kvdrill ask {row.question_id}"
            )
            ranked.append((1 - row.points, row.number, item))
    found = [item for _, _, item in sorted(ranked, key=lambda r: (-r[0], r[1]))]
    for topic in sorted(_topics(rows), key=lambda t: (t.points / t.asked, t.topic)):
        if topic.points < topic.asked:
            why = f"{score_text(topic.points)} of {topic.asked}, {topic.percent} %"
            found.append(
                Suggestion(
                    f"the topic {topic.topic}", why, f"kvdrill quiz --topic {topic.topic} --cram"
                )
            )
    chosen: list[Suggestion] = []
    for item in found:
        if all(item.command != c.command for c in chosen):
            chosen.append(item)
    return tuple(chosen[:DRILL_NEXT])


def build_report(result: InterviewResult, seed: int) -> Report:
    ended = result.ended_at or result.started_at
    return assemble_report(
        seed,
        result.minutes,
        len(result.turns),
        result.ended_by,
        (ended - result.started_at).total_seconds(),
        [question_row(answer) for answer in result.answers],
    )


def assemble_report(
    seed: int, minutes: float, planned: int, ended_by: str, elapsed_s: float,
    rows: Sequence[QuestionRow],
) -> Report:  # fmt: skip
    """The report of an interview's rows, its topics and Drill next worked out from them."""
    return Report(
        seed=seed,
        minutes=minutes,
        planned=planned,
        ended_by=ended_by,
        elapsed_s=elapsed_s,
        rows=tuple(rows),
        topics=_topics(rows),
        drill_next=drill_next(rows),
    )


def score_text(points: float) -> str:
    """Points as a report shows them: 3, 2.5, 2.67."""
    return f"{round(points, 2):g}"


def _nothing_to_drill(report: Report) -> str:
    """What "Drill next" says when it suggests nothing."""
    if not report.rows:  # ended (q, end of input, time) before the first answer
        return "Nothing answered, so nothing to drill yet."
    return "Nothing missed: every answer was right."


def summary_line(report: Report) -> str:
    answered = len(report.rows)
    line = (
        f"{answered} of {report.planned} questions answered in {clock(report.elapsed_s)} "
        f"of {clock(report.minutes * 60)} · score {score_text(report.points)} of {answered} "
        f"({report.percent} %) · seed {report.seed}"
    )
    ending = ENDINGS.get(report.ended_by, "")
    return f"{line} · {ending}" if ending else line


def _verdict_text(row: QuestionRow) -> str:
    """The verdict with the right answer: "Wrong; the answer is 256 MiB"."""
    if kind_of(row.kind).self_rated:
        return row.verdict
    if row.verdict.startswith("Right"):
        return f"{row.verdict}: {row.expected}"
    return f"{row.verdict}; the answer is {row.expected}"


def detail_items(details: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The verdict's lines as a list with sub-lists: an indented line ("  2 × 32 × ...",
    "  [x] 1. ...") belongs to the line above it ("Solution:", "Key points:")."""
    items: list[tuple[str, list[str]]] = []
    for line in details:
        if not line.strip():
            continue
        if line[:1].isspace() and items:
            items[-1][1].append(line.strip())
        else:
            items.append((line.strip(), []))
    return items


def _heading(row: QuestionRow) -> str:
    return f"{row.number}. {_about(row)}"


def _about(row: QuestionRow) -> str:
    """The heading of a question as asked, after its number."""
    about = f"follow-up to {row.follow_up_of}" if row.follow_up_of else row.topic
    return f"{row.question_id} · {about} · {clock(row.duration_ms / 1000)}"


# ----------------------------------------------------------------------------- text


def render_text(report: Report) -> str:
    """The report as the terminal shows it at the end of an interview."""
    out = ["", "Interview report", summary_line(report)]
    for row in report.rows:
        out += ["", _heading(row)]
        out.append(f"   Answer:  {row.answer if row.answer is not None else '(passed)'}")
        out.append(f"   Verdict: {_verdict_text(row)}")
        if row.mistake:
            out.append(f"   Mistake: {row.mistake}")
        if row.missed and row.answer is not None:
            out.append(f"   Missed:  {points_text(row.missed)}")
    if report.topics:
        out += ["", "By topic"]
        width = max(len(t.topic) for t in report.topics)
        for t in report.topics:
            score = f"{score_text(t.points)} of {t.asked}"
            out.append(f"  {t.topic:<{width}}  {score:<9} {t.percent:>3} %")
    out += ["", "Drill next"]
    if not report.drill_next:
        out.append(f"  {_nothing_to_drill(report)}")
    for i, item in enumerate(report.drill_next, 1):
        out.append(f"  {i}. {item.what[:1].upper()}{item.what[1:]} ({item.why}): {item.command}")
    return "".join(printable(line) + "\n" for line in out)


# ----------------------------------------------------------------------------- Markdown


def render_markdown(report: Report) -> str:
    out = [f"# {TITLE}", "", md_escape(summary_line(report)), "", "## Questions", ""]
    out += [
        "| # | question | topic | time | answer | verdict | mistake |",
        "| ---: | --- | --- | ---: | --- | --- | --- |",
    ]
    for row in report.rows:
        name = row.question_id + (f" (follow-up to {row.follow_up_of})" if row.follow_up_of else "")
        answer = row.answer if row.answer is not None else "(passed)"
        cells = [
            str(row.number), md_cell(name), md_cell(row.topic), clock(row.duration_ms / 1000),
            md_cell(answer), md_cell(_verdict_text(row)), md_cell(row.mistake),
        ]  # fmt: skip
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "## By topic", "", "| topic | asked | score | % |", "| --- | ---: | ---: | ---: |"]
    for t in report.topics:
        out.append(f"| {md_cell(t.topic)} | {t.asked} | {score_text(t.points)} | {t.percent} |")
    out += ["", "## Drill next", ""]
    if not report.drill_next:
        out.append(_nothing_to_drill(report))
    for i, item in enumerate(report.drill_next, 1):
        out.append(f"{i}. {md_escape(item.what[:1].upper() + item.what[1:])} "
                   f"({md_escape(item.why)}): {md_code(item.command)}")  # fmt: skip
    out += ["", "## The questions as asked"]
    for row in report.rows:
        out += ["", f"### {row.number}. {md_escape(_about(row))}", ""]
        out += [f"> {md_escape(line)}" if line.strip() else ">" for line in row.asked.splitlines()]
        answer = md_escape(row.answer, code_spans=False) if row.answer is not None else "(passed)"
        out += ["", f"**Your answer:** {answer}", ""]
        for line, under in detail_items(row.details):
            # a sub-list sits under its item, indented to the item's text (CommonMark)
            out.append(f"- {md_escape(line)}")
            out += [f"  - {md_escape(sub)}" for sub in under]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- HTML

# the report look every kvdrill report page shares, and the interview's own marks
_CSS = (
    REPORT_CSS
    + """
h3 { font-size: 1em; margin: 1.2em 0 .3em; }
.score { font-size: 1.3em; font-weight: bold; margin: .3em 0; }
td { vertical-align: top; }
td.topic { white-space: nowrap; }
tr.right td.verdict { color: #1a7f37; }
tr.wrong td.verdict { color: #b42318; }
tr.part td.verdict { color: #9a6700; }
.bar { display: inline-block; height: .7em; background: #2b6; vertical-align: middle; }
.barbox { display: inline-block; width: 8em; height: .7em; background: #eee; margin-right: .5em; }
blockquote { margin: .3em 0; padding: .2em .8em; border-left: 4px solid #ccc; color: #333; }
ol.next li { margin: .3em 0; }
code { font: .95em "DejaVu Sans Mono", Menlo, Consolas, monospace; background: #f4f4f4;
       padding: 0 .25em; white-space: pre-wrap; overflow-wrap: anywhere; }
td, li, p, blockquote { overflow-wrap: anywhere; }
ul.details { color: #333; }
article { break-inside: avoid; page-break-inside: avoid; }
"""
)


def _e(text: str | None) -> str:
    return html.escape(printable(text or ""))


def _row_class(row: QuestionRow) -> str:
    if row.points >= 1:
        return "right"
    return "part" if row.points > 0 else "wrong"


def render_html(report: Report) -> str:
    """One self-contained page (drill.reports.html_page): tables, a bar per topic, the details."""
    out = [
        *page_head(_e(TITLE), _CSS),
        f"<header><h1>{_e(TITLE)}</h1>",
        f'<p class="score">Score {_e(score_text(report.points))} of {len(report.rows)} '
        f"({report.percent} %)</p>",
        f'<p class="meta">{_e(summary_line(report))}</p></header>',
        "<section><h2>Questions</h2><table>",
        '<tr><th>#</th><th class="text">question</th><th class="text">topic</th><th>time</th>'
        '<th class="text">answer</th><th class="text">verdict</th>'
        '<th class="text">mistake</th></tr>',
    ]
    for row in report.rows:
        name = _e(row.question_id)
        if row.follow_up_of:
            name += f"<br><small>follow-up to {row.follow_up_of}</small>"
        answer = _e(row.answer) if row.answer is not None else "<em>(passed)</em>"
        out.append(
            f'<tr class="{_row_class(row)}"><td>{row.number}</td><td class="text">{name}</td>'
            f'<td class="text topic">{_e(row.topic)}</td>'
            f"<td>{clock(row.duration_ms / 1000)}</td>"
            f'<td class="text">{answer}</td><td class="text verdict">{_e(_verdict_text(row))}</td>'
            f'<td class="text">{_e(row.mistake)}</td></tr>'
        )
    out += ["</table></section>", "<section><h2>By topic</h2><table>"]
    out.append('<tr><th class="text">topic</th><th>asked</th><th>score</th><th class="text"></th></tr>')
    for t in report.topics:
        bar = f'<span class="barbox"><span class="bar" style="width:{t.percent}%"></span></span>'
        out.append(
            f'<tr><td class="text">{_e(t.topic)}</td><td>{t.asked}</td>'
            f'<td>{_e(score_text(t.points))}</td><td class="text">{bar}{t.percent} %</td></tr>'
        )
    out += ["</table></section>", '<section><h2>Drill next</h2><ol class="next">']
    if not report.drill_next:
        out.append(f"<li>{_nothing_to_drill(report)}</li>")
    for item in report.drill_next:
        what = item.what[:1].upper() + item.what[1:]
        out.append(f"<li>{_e(what)} ({_e(item.why)}): <code>{_e(item.command)}</code></li>")
    out += ["</ol></section>", "<section><h2>The questions as asked</h2>"]
    for row in report.rows:
        answer = _e(row.answer) if row.answer is not None else "<em>(passed)</em>"
        details = "".join(
            f"<li>{_e(line)}"
            + (f"<ul>{''.join(f'<li>{_e(sub)}</li>' for sub in under)}</ul>" if under else "")
            + "</li>"
            for line, under in detail_items(row.details)
        )
        out += [
            f"<article><h3>{_e(_heading(row))}</h3>",
            "<blockquote>" + "<br>".join(_e(line) for line in row.asked.splitlines()) + "</blockquote>",
            f"<p><strong>Your answer:</strong> {answer}</p>",
            f'<ul class="details">{details}</ul></article>',
        ]
    out += ["</section>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- JSON


def report_json(report: Report) -> dict[str, Any]:
    """The report for machines (the keys `kvdrill interview -h` names)."""
    return {
        "seed": report.seed,
        "minutes": report.minutes,
        "planned": report.planned,
        "answered": len(report.rows),
        "ended_by": report.ended_by,
        "elapsed_s": round(report.elapsed_s, 3),
        "score": {"points": round(report.points, 4), "of": len(report.rows), "percent": report.percent},
        "questions": [
            {
                "number": r.number, "question_id": r.question_id, "topic": r.topic,
                "kind": r.kind, "follow_up_of": r.follow_up_of, "asked": r.asked,
                "answer": r.answer, "verdict": r.verdict, "expected": r.expected,
                "mistake": r.mistake, "missed": list(r.missed), "duration_ms": r.duration_ms,
                "points": round(r.points, 4), "rating": r.rating,
            }
            for r in report.rows
        ],  # fmt: skip
        "topics": [
            {"topic": t.topic, "asked": t.asked, "points": round(t.points, 4), "percent": t.percent}
            for t in report.topics
        ],
        "drill_next": [
            {"what": s.what, "why": s.why, "command": s.command} for s in report.drill_next
        ],
    }


RENDERERS = {"md": render_markdown, "html": render_html}


def report_format(name: str) -> str:
    """The RENDERERS key for a report file's name: "html" for .html or .htm, else "md"."""
    return "html" if name.lower().endswith((".html", ".htm")) else "md"
