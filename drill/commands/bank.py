"""`kvdrill bank`: list, lint and describe question banks."""

from __future__ import annotations

import json
from pathlib import Path

import click

from drill.commands.options import bank_option


@click.group()
def bank() -> None:
    """List, check and describe question banks."""


@bank.command("list")
@click.option("--topic", help="Only questions of this topic.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list (see below).")
@bank_option
def list_cmd(topic: str | None, as_json: bool, banks: tuple[Path, ...]) -> None:
    """List the questions of the built-in deck and any extra banks.

    --json prints a list of objects with id, kind, topic, difficulty, tags,
    deck, file and line. Questions drawn from your own measurements are listed once
    the run they read is stored in the database; until then one line says so.
    """
    from drill.bank.loader import display_path, eligible_questions, load_default_bank
    from drill.bank.run_params import waiting_line
    from drill.commands.measurements import measured_at
    measured = measured_at(None)
    loaded = load_default_bank(banks).with_runs(measured)
    held = {qid: q for qid, q in loaded.waiting.items() if topic in (None, q.topic)}
    waiting = waiting_line(held, measured)
    rows = []
    for question in eligible_questions(loaded, topic):
        source = loaded.source(question.id)
        rows.append(
            {
                "id": question.id,
                "kind": question.kind,
                "topic": question.topic,
                "difficulty": question.difficulty,
                "tags": list(question.tags),
                "deck": source.deck,
                "file": display_path(source.path),
                "line": source.line,
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        _print_table(rows)
    if waiting:
        click.echo(waiting, err=True)


def _print_table(rows: list[dict]) -> None:
    from drill.text import printable

    headers = ("id", "kind", "topic", "diff", "tags")
    # tags are free text from bank files: no escape sequences reach the terminal
    table = [
        (r["id"], r["kind"], r["topic"], str(r["difficulty"]), printable(", ".join(r["tags"])))
        for r in rows
    ]
    widths = [max([len(h)] + [len(row[i]) for row in table]) for i, h in enumerate(headers)]
    click.echo("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    for row in table:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


@bank.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--draws",
    default=200,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Seeded draws of each numeric template.",
)
@click.option(
    "--coverage",
    is_flag=True,
    help="First list, per numeric template, the slips the grader names no mistake for.",
)
def lint_cmd(paths: tuple[Path, ...], draws: int, coverage: bool) -> None:
    """Check bank files: schema, ids, expressions, placeholders, many seeded draws, and
    the slips each formula invites (a term or factor left out, a count off by one, a
    unit slip) against the tolerance.

    PATHs are files or folders (searched for *.yaml and *.yml); without any, the
    built-in deck is checked. Ids must not clash with the built-in deck. Each problem is
    printed as file:line: id: message, and the exit status is 1 if there is any.

    \b
    --coverage prints, before that, one block per numeric template:
      file:line: id: N slips, K without a name
        SLIP                               no mistake named on any draw where it differs
        SLIP (no name on U of D draws)     no mistake named on some of them
    and a last line: coverage: N slips in T numeric templates, K without a name.
    """
    from drill.bank.lint import lint_bank
    from drill.bank.loader import builtin_bank_files, id_clashes, read_bank
    from drill.kinds import kind_of
    from drill.serving.measured import EXAMPLE_MEASURED

    loaded, problems = read_bank(paths or builtin_bank_files())
    # templates drawn from the user's runs are checked with a fixed example run
    loaded = loaded.with_runs(EXAMPLE_MEASURED)
    if paths:
        builtin, _ = read_bank(builtin_bank_files())
        problems += id_clashes(loaded, builtin)
    problems += lint_bank(loaded, draws=draws)
    if coverage:
        from drill.kinds.numeric_coverage import coverage_lines
        from drill.serving.kvmath import load_presets

        for line in coverage_lines(loaded, draws, load_presets()):
            click.echo(line)
    if problems:
        for problem in problems:
            click.echo(str(problem))
        files = len({p.path for p in problems})
        noun = "problem" if len(problems) == 1 else "problems"
        click.echo(f"Error: {len(problems)} {noun} in {files} file{'s' * (files != 1)}", err=True)
        raise SystemExit(1)
    # templates are what lint draws `draws` times (numeric questions)
    templates = sum(kind_of(q.kind).templated for q in loaded)
    files = len(loaded.files)
    click.echo(
        f"ok: {len(loaded)} questions in {files} file{'s' * (files != 1)}, "
        f"{templates} numeric templates × {draws} draws"
    )


@bank.command("coverage")
@click.option("--topic", help="Only questions of this topic.")
@click.option(
    "--draws",
    default=20,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Seeded draws of each numeric template for comparing answers.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object (see below).")
@bank_option
def coverage_cmd(topic: str | None, draws: int, as_json: bool, banks: tuple[Path, ...]) -> None:
    """Show what the deck asks and where it repeats itself.

    \b
    1. Questions per topic and kind, with totals, and the numeric share.
    2. The numeric templates that use the KV-size formula (2 x layers x KV heads
       x head_dim x bytes per element, times tokens unless per token, some
       factors fixed or from a model preset), read from each formula with its
       derived values written out; the target is at most a fifth of the numeric
       templates. Templates whose kv-formula tag says otherwise are listed.
    3. The catalogue's misconceptions that no question names (the grader still
       names a few by their ratio to the answer, e.g. bits-vs-bytes).
    4. Near-duplicate numeric templates, each pair once with its strongest reason:
       same formula (the same function of the same roles, names read as roles:
       m_layers is layers, cap_gb is memory in GB); same answers (one formula
       gives the other's answer on at least half of the other's draws); special
       case (one formula with a role at one, 100 % or one token, gives the
       other's answers on at least half of its draws). Both places are given.

    \b
    --json prints one object:
      questions               the number of questions
      kinds                   the kinds, in column order
      topics                  per topic: topic, counts (kind -> questions), total
      totals                  kind -> questions
      numeric_share           numeric templates / questions
      kv_formula              templates (id, file, line), count, numeric,
                              share, target_share, tag_disagrees (id, file,
                              line, tagged)
      unnamed_misconceptions  id and name of each
      near_duplicates         first and second (id, file, line), why, agree and
                              draws (second's draws that agree / compared),
                              fixed (special case: the role of first set)
    """
    from drill.bank.coverage import coverage_json, coverage_lines, deck_coverage
    from drill.bank.loader import eligible_questions, load_default_bank
    from drill.bank.misconceptions import load_misconception_catalogue
    from drill.kinds import KINDS
    from drill.serving.kvmath import load_presets
    from drill.serving.measured import EXAMPLE_MEASURED

    # what the deck asks, those drawn from the user's runs with a fixed example run
    loaded = load_default_bank(banks).with_runs(EXAMPLE_MEASURED)
    questions = eligible_questions(loaded, topic)
    report = deck_coverage(
        loaded, questions, KINDS, load_misconception_catalogue(), load_presets(), draws
    )
    if as_json:
        click.echo(json.dumps(coverage_json(report), indent=2, ensure_ascii=False))
        return
    for line in coverage_lines(report):
        click.echo(line)


@bank.command("schema")
def schema_cmd() -> None:
    """Print the JSON Schema of a deck file, for editor completion and checks."""
    from drill.bank.schema import deck_adapter

    schema = deck_adapter().json_schema()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": "kvdrill deck file",
    }
    click.echo(json.dumps(schema, indent=2))


EXPORT_HELP = """Export the bank for Anki, Moodle or any tool that reads GIFT.

\b
--format anki    an Anki package (.apkg): a note per concept, choice and order
                 question, -n notes per numeric template (one per draw); a note's
                 GUID comes from its id (and a draw's seed), so importing a new
                 export of the same draws updates those notes
--format moodle  Moodle XML: numeric templates as calculated questions with their
                 tolerance and datasets (the -n draws), or as -n numerical questions
                 where Moodle cannot work a template out; choice as multichoice,
                 concept as essay with the model answer as grader information
--format gift    GIFT: numeric draws as numerical questions, choice as multiple
                 choice, concept as essay

Numeric templates are drawn with seeds --seed, --seed + 1, ...: the same bank,
draws and seed give the same file, byte for byte. What each format cannot carry
(also written at the top of a Moodle or GIFT file, and in the Anki deck's
description):
"""


class _ExportCommand(click.Command):
    """Its help lists each format's CANNOT_CARRY, read when help is asked for."""

    def get_help(self, ctx: click.Context) -> str:
        import textwrap

        from drill.exports import FORMATS, exporter

        lines = [EXPORT_HELP.rstrip(), "", "\b"]
        for name in FORMATS:
            for i, item in enumerate(exporter(name).CANNOT_CARRY):
                head = f"{name if i == 0 else '':<7} - "
                lines += textwrap.wrap(item, 78, initial_indent=head, subsequent_indent=" " * 10)
        self.help = "\n".join(lines)
        return super().get_help(ctx)


@bank.command("export", cls=_ExportCommand, short_help="Export the bank for Anki, Moodle or GIFT.")
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(["anki", "moodle", "gift"]),
    help="The format to write.",
)
@click.option(
    "-n",
    "--draws",
    type=click.IntRange(1, 1000),
    default=3,
    show_default=True,
    help="Draws of each numeric template.",
)
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="The first draw's seed.")  # fmt: skip
@click.option("--topic", help="Only questions of this topic.")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The file to write.",
)
@bank_option
def export_cmd(fmt, draws, seed, topic, output, banks) -> None:
    from drill.bank.loader import eligible_questions, load_default_bank
    from drill.exports import export_items, exporter
    from drill.exports.anki import bank_stamp
    from drill.kinds import make_instance
    from drill.storage.outfile import atomic_output, check_outputs, protected_files

    protected = protected_files(None)
    check_outputs([output], protected)  # before the bank is drawn
    loaded = load_default_bank(banks)
    questions = eligible_questions(loaded, topic)
    items = export_items(questions, draws, seed, make_instance)
    data, notes = exporter(fmt).render(items, bank_stamp(loaded.files))
    with atomic_output(output, protected, binary=True) as out:
        out.write(data)
    entries = sum(len(item.instances) for item in items)
    click.echo(
        f"Wrote {output}: {len(items)} questions, {entries} with the numeric draws "
        f"({draws} per template, seeds {seed} to {seed + draws - 1}).",
        err=True,
    )
    for note in notes:
        click.echo(f"Note: {note}.", err=True)
