"""Find, read and validate question banks.

A bank is every deck file of the built-in deck (`question_bank/*.yaml`, less
the misconception catalogue) plus the user's own files or folders. Each file is
parsed with a SafeLoader that remembers the line of every mapping, key and
list item, so that each problem is reported as ``file:line: question-id:
message``. Questions are validated one at a time, so one bad question does not
hide the problems of the next.
"""

from __future__ import annotations

import difflib
import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from drill.errors import BankError, did_you_mean

if TYPE_CHECKING:
    from drill.bank.yaml_lines import LocatedMap

CATALOGUE_NAME = "misconceptions.yaml"
# the built-in folder's files that are not decks: the misconception catalogue and the
# phrasings every cue draws on (drill.kinds.phrasings)
NOT_DECKS = frozenset({CATALOGUE_NAME, "phrasings.yaml"})
BANK_SUFFIXES = (".yaml", ".yml")
DECK_KEYS = ("deck", "description", "questions")
MAX_BANK_FILE_BYTES = 16 * 1024 * 1024  # the built-in deck's files are tens of KiB


# --------------------------------------------------------------------------- problems


@dataclass(frozen=True)
class LintError:
    """One problem in a bank file, at a line, possibly inside one question."""

    path: str
    line: int
    question_id: str | None
    message: str

    def __str__(self) -> str:
        from drill.text import printable

        where = f"{self.path}:{self.line}: "
        who = f"{self.question_id}: " if self.question_id else ""
        # a message may quote the file, and it is printed: no escape sequences
        return printable(f"{where}{who}{self.message}")


# --------------------------------------------------------------------------- YAML errors


def _yaml_problem(path: str, exc: Exception, last_line: int) -> LintError:
    problem_mark = getattr(exc, "problem_mark", None)
    context_mark = getattr(exc, "context_mark", None)
    mark = problem_mark or context_mark
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if context_mark is not None and "end of stream" in problem:
        # an unclosed quote or bracket: where it opened is the useful line
        mark = context_mark
    # a problem noticed at the end of the file is reported on its last line
    line = min(mark.line + 1, last_line) if mark is not None else 1
    marker = "could not determine a constructor for the tag "
    if problem.startswith(marker):
        tag = problem[len(marker) :].strip("'").replace("tag:yaml.org,2002:", "!!")
        return LintError(
            path, line, None, f"YAML tag {tag} is not allowed; bank files hold plain data only"
        )
    context = getattr(exc, "context", None)
    detail = problem
    if context and context_mark is not None and context_mark.line + 1 != line:
        detail += f" ({context} at line {context_mark.line + 1})"
    elif context:
        detail += f" ({context})"
    return LintError(path, line, None, f"YAML syntax error: {detail}")


# --------------------------------------------------------------------------- locating fields


def _child(data: Any, key: Any) -> tuple[bool, Any, int | None]:
    """Step from `data` into `key`: (found, child, line of the child)."""
    if isinstance(data, dict) and key in data:
        lines = getattr(data, "key_lines", {})
        return True, data[key], lines.get(key)
    if isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data):
        lines = getattr(data, "item_lines", [])
        return True, data[key], lines[key] if key < len(lines) else None
    return False, None, None


def locate(data: Any, loc: Sequence[Any]) -> tuple[int, str]:
    """The line and dotted field name that a pydantic `loc` points at in `data`.

    Elements that are not keys of the data (union tags such as `numeric` or
    `RangeParam`) are skipped; the line is that of the deepest element found.
    """
    line = getattr(data, "line", 1)
    parts: list[str] = []
    for key in loc:
        found, child, child_line = _child(data, key)
        if not found:
            continue
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}" if parts else str(key))
        if child_line is not None:
            line = child_line
        data = child
    return line, "".join(parts)


def field_line(data: Any, *path: Any) -> int:
    """The line of the field at `path` inside a located mapping (its own line if absent)."""
    return locate(data, path)[0]


# --------------------------------------------------------------------------- validation


def _question_fields(kind: Any) -> list[str]:
    from dataclasses import fields

    from drill.bank.schema import QUESTION_TYPES

    model = QUESTION_TYPES.get(kind) if isinstance(kind, str) else None
    return [f.name for f in fields(model)] if model else []


def _describe(error: Mapping[str, Any], raw: Any) -> tuple[int, str]:
    """(line, message) for one pydantic error on the question mapping `raw`."""
    loc = error.get("loc", ())
    line, name = locate(raw, loc)
    kind = error.get("type")
    msg = str(error.get("msg", "invalid"))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        key = loc[-1] if loc else "?"
        message = f"unknown field '{name}'"
        if len(loc) >= 1 and name == str(key):
            close = difflib.get_close_matches(str(key), _question_fields(raw.get("kind")), n=1)
            if close:
                message += f" (did you mean '{close[0]}'?)"
        return line, message
    if kind in ("missing", "missing_argument"):
        missing = loc[-1] if loc else "?"
        parent, _ = locate(raw, loc[:-1])
        prefix = f"{name}." if name else ""
        return parent, f"missing field '{prefix}{missing}'"
    if kind in ("union_tag_not_found", "union_tag_invalid"):
        from drill.bank.schema import QUESTION_TYPES

        kinds = list(QUESTION_TYPES)
        if kind == "union_tag_not_found":
            return line, f"missing field 'kind' ({', '.join(kinds[:-1])} or {kinds[-1]})"
        line = field_line(raw, "kind")
        return line, f"kind '{raw.get('kind')}' is not one of {', '.join(kinds)}"
    return line, f"{name}: {msg}" if name else msg


def _validate_question(path: str, raw: Any, index: int, item_line: int):
    """(Question or None, problems) for one raw question mapping."""
    from pydantic import ValidationError

    from drill.bank.schema import question_adapter

    qid = raw.get("id") if isinstance(raw, dict) else None
    label = qid if isinstance(qid, str) and qid else f"question #{index + 1}"
    if not isinstance(raw, dict):
        return None, [LintError(path, item_line, label, "a question must be a mapping")]
    try:
        return question_adapter().validate_python(raw), []
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            line, message = _describe(error, raw)
            problems.append(LintError(path, line, label, message))
        return None, sorted(problems, key=lambda p: p.line)


# --------------------------------------------------------------------------- one file


@dataclass(frozen=True)
class LoadedQuestion:
    question: Any  # a drill.bank.schema Question
    line: int
    raw: LocatedMap | None  # None when read from the deck cache


@dataclass(frozen=True)
class DeckInfo:
    name: str
    path: Path
    description: str | None
    question_ids: tuple[str, ...]


def display_path(path: Path) -> str:
    """A path as problems show it: relative to the working folder when inside it."""
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            pass
    return str(path)


def read_deck_file(path: Path) -> tuple[DeckInfo | None, list[LoadedQuestion], list[LintError]]:
    """Read and validate one deck file; problems are returned, not raised."""
    shown = display_path(path)
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_BANK_FILE_BYTES + 1)
        if len(data) > MAX_BANK_FILE_BYTES:
            return None, [], [LintError(shown, 1, None, "bank file is larger than 16 MiB")]
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [], [LintError(shown, 1, None, f"not UTF-8 text (byte {exc.start})")]
    except OSError as exc:
        return None, [], [LintError(shown, 1, None, f"cannot read: {exc.strerror}")]
    import yaml

    from drill.bank.yaml_lines import LineLoader

    try:
        data = yaml.load(text, Loader=LineLoader)  # noqa: S506 - LineLoader is a SafeLoader
    except yaml.YAMLError as exc:
        return None, [], [_yaml_problem(shown, exc, max(1, len(text.splitlines())))]
    except RecursionError:  # only without libyaml, whose parser stops at 1,000 levels
        return None, [], [LintError(shown, 1, None, "YAML nested too deeply")]
    return _read_deck(path, data)


def read_deck_file_cached(
    path: Path, cache_dir: Path
) -> tuple[DeckInfo | None, list[LoadedQuestion], list[LintError]]:
    """`read_deck_file` through the built-in deck's validated copy (`drill.bank.validated_deck`)
    and the cache of `drill.bank.deck_cache` (questions without `raw`).

    A file with problems is never cached, so its problems are always found.
    """
    from drill.bank import deck_cache, validated_deck

    shipped = validated_deck.lookup_deck(path)
    if shipped is not None:
        name, description, stored = shipped
        return _cached_deck(path, name, description, stored)
    # the key is taken before reading: a file edited meanwhile is stored under
    # its old size and time, which no later read will ask for
    key = deck_cache.entry_key(path)
    if key is not None:
        entry = deck_cache.read_entry(cache_dir, key)
        if entry is not None:
            return _cached_deck(path, *entry)
    info, loaded, problems = read_deck_file(path)
    if key is not None and info is not None and not problems:
        stored = [(item.question, item.line) for item in loaded]
        deck_cache.write_entry(cache_dir, key, info.name, info.description, stored)
    return info, loaded, problems


def _cached_deck(
    path: Path, name: str, description: str | None, stored: list
) -> tuple[DeckInfo, list[LoadedQuestion], list[LintError]]:
    loaded = [LoadedQuestion(question, line, None) for question, line in stored]
    ids = tuple(item.question.id for item in loaded)
    return DeckInfo(name, path, description, ids), loaded, []


def _read_deck(path: Path, data: Any):
    import re

    from drill.bank.schema import ID_PATTERN

    shown = display_path(path)
    problems: list[LintError] = []
    if not isinstance(data, dict):
        line = getattr(data, "line", 1)
        what = "empty" if data is None else "not a mapping"
        message = f"bank file is {what}; expected the keys deck and questions"
        return None, [], [LintError(shown, line, None, message)]
    data = cast("LocatedMap", data)
    for key in data:
        if key not in DECK_KEYS:
            message = f"unknown top-level key '{key}' (expected deck, description, questions)"
            problems.append(LintError(shown, data.key_lines[key], None, message))
    deck = data.get("deck")
    if deck is None:
        problems.append(LintError(shown, data.line, None, "missing key 'deck' (the deck's name)"))
    elif not isinstance(deck, str) or not re.match(ID_PATTERN, deck):
        message = f"deck name {deck!r} must be a lowercase slug like kv-basics"
        problems.append(LintError(shown, data.key_lines["deck"], None, message))
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        problems.append(
            LintError(shown, data.key_lines["description"], None, "description must be text")
        )
    questions = data.get("questions")
    if not isinstance(questions, list) or not questions:
        line = data.key_lines.get("questions", data.line)
        message = "missing key 'questions'" if questions is None else "questions must be a list"
        if isinstance(questions, list):
            message = "questions is empty"
        problems.append(LintError(shown, line, None, message))
        questions = []
    loaded: list[LoadedQuestion] = []
    item_lines = getattr(questions, "item_lines", [])
    for index, raw in enumerate(questions):
        item_line = item_lines[index] if index < len(item_lines) else data.line
        question, found = _validate_question(shown, raw, index, item_line)
        problems.extend(found)
        if question is not None:
            loaded.append(LoadedQuestion(question, raw.line, raw))
    name = deck if isinstance(deck, str) else path.stem
    info = DeckInfo(
        name=name,
        path=path,
        description=description if isinstance(description, str) else None,
        question_ids=tuple(item.question.id for item in loaded),
    )
    return info, loaded, sorted(problems, key=lambda p: p.line)


# --------------------------------------------------------------------------- finding files


def builtin_bank_files(bank_dir: Path | None = None) -> list[Path]:
    """The built-in deck files, by name; the catalogue and the phrasings are no decks."""
    if bank_dir is None:
        from question_bank import BANK_DIR

        bank_dir = BANK_DIR
    return sorted(p for p in bank_dir.glob("*.yaml") if p.name not in NOT_DECKS)


def _is_builtin_non_deck(path: Path) -> bool:
    from question_bank import BANK_DIR

    return path.name in NOT_DECKS and path.resolve().parent == BANK_DIR


def expand_bank_paths(paths: Iterable[Path]) -> list[Path]:
    """Files as given and folders searched recursively for *.yaml / *.yml.

    Each file appears once, in the order given (a folder's files sorted by path).
    """
    files: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        path = Path(path)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in BANK_SUFFIXES and p.is_file())
            found = [p for p in found if not _is_builtin_non_deck(p)]
        elif path.is_file():
            found = [path]
        else:
            raise BankError(f"{path}: no such bank file or folder")
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                files.append(file)
    return files


def default_bank_paths(extra: Iterable[Path] = ()) -> list[Path]:
    """The built-in deck, then `KVDRILL_BANK`, then `extra` (e.g. each --bank)."""
    from drill.paths import bank_paths_from_env

    return [*builtin_bank_files(), *bank_paths_from_env(), *map(Path, extra)]


# --------------------------------------------------------------------------- the bank


@dataclass(frozen=True)
class QuestionSource:
    path: Path
    line: int
    deck: str
    # the question as read, for finding a field's line; None when it came from
    # the deck cache (Bank.field_line then reads the file again)
    raw: LocatedMap | None


class Bank:
    """Validated questions by id, in file order, with where each came from.

    A template drawn from the user's own measurements (a `run:` param) is in the bank only
    when `measured` holds every field it reads (drill.bank.run_params); until then it waits
    apart: not iterated, not counted, and `get` says what it waits for. `with_runs` gives
    the bank with the measurements of a stored run.
    """

    def __init__(
        self,
        decks: Sequence[DeckInfo],
        loaded: Sequence[tuple[DeckInfo, LoadedQuestion]],
        measured: Mapping[str, Any] | None = None,
    ):
        from drill.bank.run_params import bind_run_params

        self._read = (tuple(decks), tuple(loaded))
        self.measured: Mapping[str, Any] = measured or {}
        self._questions: dict[str, Any] = {}
        self._sources: dict[str, QuestionSource] = {}
        self._raw_from_source: dict[str, Any] = {}
        self.waiting: dict[str, Any] = {}  # id -> template whose run is not stored
        for deck, item in loaded:
            qid = item.question.id
            question = bind_run_params(item.question, self.measured)
            if question is None:
                self.waiting[qid] = item.question
                continue
            self._questions[qid] = question
            self._sources[qid] = QuestionSource(deck.path, item.line, deck.name, item.raw)
        self.decks: tuple[DeckInfo, ...] = tuple(
            replace(d, question_ids=tuple(q for q in d.question_ids if q not in self.waiting))
            for d in decks
        )

    def with_runs(self, measured: Mapping[str, Any]) -> Bank:
        """This bank with the templates `measured` (drill.serving.measured) can fill in."""
        return Bank(*self._read, measured)

    def __len__(self) -> int:
        return len(self._questions)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._questions.values())

    def __contains__(self, qid: object) -> bool:
        return qid in self._questions

    @property
    def ids(self) -> list[str]:
        return list(self._questions)

    @property
    def files(self) -> list[Path]:
        return [deck.path for deck in self.decks]

    def get(self, qid: str) -> Any:
        """The question with this id; BankError suggesting close ids when there is none."""
        try:
            return self._questions[qid]
        except KeyError:
            if qid in self.waiting:
                from drill.bank.run_params import waiting_reason

                raise BankError(waiting_reason(self.waiting[qid], self.measured)) from None
            raise BankError(unknown_id_message(qid, self.ids)) from None

    def source(self, qid: str) -> QuestionSource:
        self.get(qid)
        return self._sources[qid]

    def field_line(self, qid: str, *path: Any) -> int:
        """The line of a field of a question, e.g. ("misconceptions", 1, "expr")."""
        return field_line(self._raw(qid), *path)

    def _raw(self, qid: str) -> Any:
        source = self.source(qid)
        if source.raw is not None:
            return source.raw
        if qid not in self._raw_from_source:
            _, loaded, _ = read_deck_file(source.path)
            for item in loaded:
                self._raw_from_source.setdefault(item.question.id, item.raw)
            # a file changed since it was cached: its own line is the best we know
            self._raw_from_source.setdefault(qid, None)
        raw = self._raw_from_source[qid]
        return raw if raw is not None else _LineOnly(source.line)


@dataclass(frozen=True)
class _LineOnly:
    line: int


def unknown_id_message(qid: str, ids: Sequence[str]) -> str:
    hint = did_you_mean(qid, ids) or "`kvdrill bank list` shows them all"
    return f"unknown question id '{qid}'; {hint}"


def read_bank(paths: Iterable[Path], cache_dir: Path | None = None) -> tuple[Bank, list[LintError]]:
    """Load every deck file under `paths`, collecting problems instead of raising.

    The bank holds the questions that are valid; of two questions with the same
    id, the first wins and the second is a problem naming both places. A path
    that does not exist raises BankError. With `cache_dir`, valid files are
    read through the deck cache there (`drill.bank.deck_cache`).
    """
    # Loading makes many small objects and frees few: the cyclic collector would rescan the
    # growing heap again and again (a 30x deck took 1.8x the CPU it takes without it), so
    # it waits until the bank is read.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read_bank(paths, cache_dir)
    finally:
        if collecting:
            gc.enable()


def _read_bank(paths: Iterable[Path], cache_dir: Path | None) -> tuple[Bank, list[LintError]]:
    decks: list[DeckInfo] = []
    loaded: list[tuple[DeckInfo, LoadedQuestion]] = []
    problems: list[LintError] = []
    first_seen: dict[str, tuple[Path, int]] = {}
    for file in expand_bank_paths(paths):
        if cache_dir is None:
            deck, questions, found = read_deck_file(file)
        else:
            deck, questions, found = read_deck_file_cached(file, cache_dir)
        problems.extend(found)
        if deck is None:
            continue
        kept: list[str] = []
        for item in questions:
            qid = item.question.id
            if qid in first_seen:
                where, line = first_seen[qid]
                message = f"duplicate id; first defined at {display_path(where)}:{line}"
                problems.append(LintError(display_path(file), item.line, qid, message))
                continue
            first_seen[qid] = (file, item.line)
            kept.append(qid)
            loaded.append((deck, item))
        decks.append(DeckInfo(deck.name, deck.path, deck.description, question_ids=tuple(kept)))
    return Bank(decks, loaded), problems


def load_bank(paths: Iterable[Path], cache_dir: Path | None = None) -> Bank:
    """Load the deck files under `paths`; BankError (file:line) on the first problem."""
    bank, problems = read_bank(paths, cache_dir)
    if problems:
        more = len(problems) - 1
        suffix = f" (and {more} more; `kvdrill bank lint` lists them)" if more else ""
        raise BankError(f"{problems[0]}{suffix}")
    return bank


def load_default_bank(extra: Iterable[Path] = (), *, cached: bool = True) -> Bank:
    """The built-in deck plus `KVDRILL_BANK` plus `extra`, through the deck cache."""
    from drill.bank.deck_cache import default_cache_dir

    return load_bank(default_bank_paths(extra), default_cache_dir() if cached else None)


def id_clashes(bank: Bank, other: Bank) -> list[LintError]:
    """Questions of `bank` whose id a question of `other` in another file already uses.

    `kvdrill bank lint my.yaml` uses this against the built-in deck: the two are
    loaded together by the quiz, where the clash would stop it.
    """
    problems: list[LintError] = []
    for qid in bank.ids:
        if qid not in other:
            continue
        mine, theirs = bank.source(qid), other.source(qid)
        if mine.path.resolve() == theirs.path.resolve():
            continue
        where = f"{display_path(theirs.path)}:{theirs.line}"
        message = f"id already used by the built-in deck at {where}"
        problems.append(LintError(display_path(mine.path), mine.line, qid, message))
    return problems


def quiz_order(questions: Iterable[Any]) -> list[Any]:
    """Questions in the order the quiz first asks them: easier first, bank order within a
    difficulty (drill.study.session; `kvdrill plan` and stats' plan simulate that order)."""
    return sorted(questions, key=lambda q: q.difficulty)


def eligible_questions(questions: Iterable[Any], topic: str | None) -> list[Any]:
    """The questions of `topic` (all when None), in bank order; BankError if none match
    (saying what they wait for when the topic's questions wait for a stored run)."""
    waiting = getattr(questions, "waiting", {})
    measured = getattr(questions, "measured", {})
    questions = list(questions)
    if topic is None:
        return questions
    chosen = [q for q in questions if q.topic == topic]
    held = {qid: q for qid, q in waiting.items() if q.topic == topic}
    if not chosen and held:
        from drill.bank.run_params import waiting_line

        raise BankError(waiting_line(held, measured) or "")
    if not chosen:
        topics = sorted({q.topic for q in questions})
        listed = ", ".join(topics) if topics else "none: the bank is empty"
        hint = did_you_mean(topic, topics)
        raise BankError(f"no questions with topic '{topic}'; {hint}" if hint
                        else f"no questions with topic '{topic}' (topics: {listed})")  # fmt: skip
    return chosen
