"""The bank as an Anki package (.apkg), written with genanki.

One note per concept, choice and order question, and one per draw of a numeric
template, in the deck "kvdrill" with the note type "kvdrill question", whose fields are
  Question   the question as a sheet prints it (options and items lettered)
  Answer     the answer as the answer key gives it
  Details    the rest of the key: worked solution, the wrong answers and the mistake
             behind each, key points, why each option is right or wrong, explanation
  Source     question id, topic, difficulty (and a numeric draw's seed)
all HTML with bank text escaped. Tags: kvdrill, the kind, the topic and the bank's tags.

A note's GUID is genanki.guid_for(id) (a numeric draw: guid_for(id, seed)), so
importing a new export of the same draws updates those notes instead of adding copies.
The package is stamped with `stamp` (seconds since 1970: the newest change of the bank
files read): notes and cards take their ids and modification time from it, so an
unchanged bank exports byte for byte the same package, and an edited one gives newer
notes, which Anki's import takes over the old ones. The zip entries carry a fixed date.
"""

from __future__ import annotations

import html
import os
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from drill.exports import ExportItem
from drill.kinds import kind_of
from drill.reports.sheet import html_block, key_blocks

SUFFIX = ".apkg"
MODEL_ID = 1_735_016_411  # fixed: every export is the same note type to Anki
DECK_ID = 1_735_016_412
MODEL_NAME = "kvdrill question"
DECK_NAME = "kvdrill"
FIELDS = ("Question", "Answer", "Details", "Source")
CANNOT_CARRY = (
    "grading: Anki shows the answer and you rate yourself; a typed number is not checked "
    "against the tolerance, and a named mistake is not recognised in it (each numeric "
    "note lists the wrong answers and their mistakes on its back instead)",
    "fresh numbers: each numeric template is -n fixed draws",
    "hints, and the order of a choice question's options beyond the drawn one",
)
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_CSS = """.card { font-family: Arial, "DejaVu Sans", sans-serif; font-size: 18px; text-align: left;
  color: #111; background: #fff; }
.answer { border-left: 4px solid #2b6; padding: .2em .6em; font-weight: bold; }
.label { font-size: .8em; text-transform: uppercase; color: #555; margin-top: .8em; }
.note { font-style: italic; color: #444; }
ol.options { list-style-type: upper-alpha; }
.source { font-size: .75em; color: #777; margin-top: 1.2em; }
"""
_BACK = "{{FrontSide}}<hr id=answer>{{Answer}}{{Details}}<div class=source>{{Source}}</div>"


def note_fields(instance) -> tuple[str, str, str, str]:
    """The four fields of one instance's note (see the module docstring)."""
    kind = kind_of(instance.kind)
    question = "".join(html_block(b) for b in kind.question_blocks(instance) if b.kind != "space")
    answer, *details = key_blocks(instance)
    source = f"{instance.question_id} · {instance.topic} · difficulty {instance.difficulty}/3"
    if kind.templated:
        source += f" · seed {instance.seed}"
    return (
        question,
        html_block(answer),
        "".join(html_block(block) for block in details),
        html.escape(source),
    )


def note_guid(instance) -> str:
    import genanki

    if kind_of(instance.kind).templated:
        return genanki.guid_for(instance.question_id, instance.seed)
    return genanki.guid_for(instance.question_id)


def _tags(question) -> list[str]:
    tags = ["kvdrill", question.kind, question.topic, *question.tags]
    # an Anki tag is one word
    return list(dict.fromkeys("_".join(str(tag).split()) for tag in tags if str(tag).strip()))


def render(items: Sequence[ExportItem], stamp: float) -> tuple[bytes, list[str]]:
    import genanki

    model = genanki.Model(
        MODEL_ID,
        MODEL_NAME,
        fields=[{"name": name} for name in FIELDS],
        templates=[{"name": "Card", "qfmt": "{{Question}}", "afmt": _BACK}],
        css=_CSS,
    )
    description = "Exported from kvdrill. Not carried: " + "; ".join(CANNOT_CARRY) + "."
    deck = genanki.Deck(DECK_ID, DECK_NAME, description=html.escape(description))
    for item in items:
        for instance in item.instances:
            deck.add_note(
                genanki.Note(
                    model=model,
                    fields=list(note_fields(instance)),
                    guid=note_guid(instance),
                    tags=_tags(item.question),
                )
            )
    return _package_bytes(genanki.Package(deck), stamp), []


def _package_bytes(package, stamp: float) -> bytes:
    """genanki's Package.write_to_file, with a fixed stamp and fixed zip entry dates."""
    import io
    import itertools
    import sqlite3

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "collection.anki2"
        conn = sqlite3.connect(path)
        try:
            package.write_to_db(conn.cursor(), stamp, itertools.count(int(stamp * 1000)))
            conn.commit()
        finally:
            conn.close()
        collection = path.read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in (("collection.anki2", collection), ("media", b"{}")):
            entry = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data)
    return out.getvalue()


def bank_stamp(paths: Sequence[Path]) -> float:
    """The newest modification time of the bank files, whole seconds (see the docstring)."""
    times = [int(os.stat(path).st_mtime) for path in paths]
    return float(max(times)) if times else 0.0
