"""Settings that persist in the database, set with `kvdrill config KEY VALUE`.

Each setting has a default, a line of help and a parser that turns typed text into
its value (ValueError with the reason when it cannot). Stored values are the text
form, read back through the same parser, so a value a newer kvdrill wrote that this
one cannot read falls back to the default instead of failing. A setting may name what
must follow a new value, done in the same transaction (new FSRS parameters recompute
the cards' memory states).

`Settings.scheduler` is the one place a user's FSRS scheduler is made: their fitted
parameters (`kvdrill optimize`) or fsrs's defaults, at their retention.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import date, tzinfo
from typing import TYPE_CHECKING, Any

from drill.errors import KvdrillError, did_you_mean
from drill.study.days import DEFAULT_ROLLOVER_HOUR, DayClock

if TYPE_CHECKING:
    from fsrs import Scheduler


class SettingError(KvdrillError):
    """An unknown setting or a value it cannot take."""


def _bounded_int(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        text = text.strip()
        if not (text.isdigit() and text.isascii()) or len(text) > 6:
            raise ValueError(f"a whole number from {low} to {high}")
        value = int(text)
        if not low <= value <= high:
            raise ValueError(f"a whole number from {low} to {high}")
        return value

    return parse


def _retention(text: str) -> float:
    try:
        value = float(text.strip().rstrip("%")) / (100 if text.strip().endswith("%") else 1)
    except ValueError:
        value = math.nan
    if not 0.7 <= value <= 0.99:  # nan fails both
        raise ValueError("a probability from 0.70 to 0.99 (or 70% to 99%)")
    return round(value, 4)


def _time_zone(text: str) -> str:
    name = text.strip()
    if name.lower() == "local":
        return "local"
    zone_of(name)  # raises ValueError for a name it cannot use
    return name


def _interview_date(text: str) -> date | None:
    text = text.strip()
    if text.lower() in ("none", "off", ""):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError("a date such as 2027-01-15, or none") from None


def _fsrs_parameters(text: str) -> tuple[float, ...] | None:
    from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS as LOW
    from fsrs.scheduler import UPPER_BOUNDS_PARAMETERS as HIGH

    from drill.json_input import parse_json

    if text.strip().lower() in ("none", "default", ""):
        return None
    need = f"a JSON list of {len(LOW)} numbers within FSRS's bounds, or none"
    try:
        values = parse_json(text) if len(text) <= 4096 else None
    except ValueError:
        values = None
    if not (isinstance(values, list) and len(values) == len(LOW)) or not all(
        type(v) in (int, float) for v in values
    ):
        raise ValueError(need)
    for index, (value, low, high) in enumerate(zip(values, LOW, HIGH, strict=True)):
        if not low <= value <= high:
            raise ValueError(f"{need} (w{index} from {low} to {high})")
    return tuple(float(v) for v in values)


def _easy_days(text: str) -> str:
    from drill.study.load_balance import parse_easy_days

    return parse_easy_days(text)


def _shown_parameters(values: tuple[float, ...]) -> str:
    first = " ".join(f"{v:.3g}" for v in values[:4])
    return f"fitted ({len(values)}): {first} ... {values[-1]:.3g}"


def _memory_follows_parameters(db, settings: Settings) -> None:
    """FSRS's memory state (stability, difficulty) means something only under the
    parameters that computed it: every card's is recomputed from its history."""
    from drill.storage.reviews import refresh_memory_states

    refresh_memory_states(db, settings.scheduler(fuzz=False))


def zone_of(name: str) -> tzinfo | None:
    """The zone called `name` (an IANA name such as Europe/Berlin); None for "local"."""
    if name == "local":
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError("an IANA time zone such as Europe/Berlin, or local") from None


@dataclass(frozen=True)
class Setting:
    key: str  # as typed: new-per-day; the Settings field is the same with underscores
    parse: Callable[[str], Any]
    help: str
    # what must follow a new value, run in the transaction that stores it
    changed: Callable[[Any, Settings], None] | None = None

    @property
    def attribute(self) -> str:
        return self.key.replace("-", "_")

    @property
    def default(self) -> Any:
        return getattr(Settings(), self.attribute)


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting("retention", _retention, "chance of recall FSRS aims for when a card is due"),
        Setting("new-per-day", _bounded_int(0, 9999), "new questions a day"),
        Setting("max-per-session", _bounded_int(1, 9999), "questions in one quiz session"),
        Setting(
            "learn-ahead", _bounded_int(0, 1440),
            "minutes ahead a learning card is shown when nothing else is left",
        ),
        Setting(
            "leech-threshold", _bounded_int(0, 99),
            "lapses that make a card a leech, suspended (0: never)",
        ),
        Setting("rollover-hour", _bounded_int(0, 23), "local hour at which a new day begins"),
        Setting("timezone", _time_zone, "IANA zone of your days (Europe/Berlin), or local"),
        Setting(
            "interview-date", _interview_date,
            "YYYY-MM-DD: bring every card back before it, raising retention (none: off)",
        ),
        Setting(
            "easy-days", _easy_days,
            "days of the week with fewer reviews: sat,sun (none) or sun:0.5 (half a load)",
        ),
        Setting(
            "fsrs-parameters", _fsrs_parameters,
            "FSRS's weights, fitted by `kvdrill optimize` (none: FSRS's defaults)",
            changed=_memory_follows_parameters,
        ),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """Every setting's value; the defaults here are the settings' defaults."""

    retention: float = 0.9
    new_per_day: int = 10
    max_per_session: int = 20
    learn_ahead: int = 20  # minutes, Anki's learn-ahead limit
    leech_threshold: int = 8  # Anki's default
    rollover_hour: int = DEFAULT_ROLLOVER_HOUR  # drill.study.days: 4 am, as Anki's
    timezone: str = "local"
    interview_date: date | None = None  # drill.study.deadline schedules toward it
    easy_days: str = ""  # drill.study.load_balance: "sat,sun:0.5"; "" for none
    fsrs_parameters: tuple[float, ...] | None = None  # None: fsrs's defaults

    def day_clock(self) -> DayClock:
        return DayClock(zone_of(self.timezone), self.rollover_hour)

    def scheduler(self, retention: float | None = None, *, fuzz: bool = True) -> Scheduler:
        """The user's FSRS scheduler: their parameters at `retention` (default: theirs)."""
        from drill.srs import make_scheduler

        return make_scheduler(
            self.retention if retention is None else retention,
            fuzz=fuzz,
            parameters=self.fsrs_parameters,
        )

    def json_value(self, key: str) -> Any:
        """The value as `kvdrill config --json` prints it (a date as YYYY-MM-DD)."""
        value = getattr(self, setting(key).attribute)
        if value == "":  # easy-days none
            return None
        return value.isoformat() if isinstance(value, date) else value

    def shown(self, key: str) -> str:
        value = getattr(self, setting(key).attribute)
        if isinstance(value, tuple):
            return _shown_parameters(value)
        return "none" if value is None or value == "" else str(value)


def setting(key: str) -> Setting:
    typed = key.strip().lower().replace("_", "-") if isinstance(key, str) else ""
    found = SETTINGS.get(typed)
    if found is None:
        hint = did_you_mean(typed, list(SETTINGS)) or f"settings: {', '.join(SETTINGS)}"
        raise SettingError(f"no setting called {key!r}; {hint}")
    return found


def parse_value(key: str, text: str) -> Any:
    """The value `text` gives setting `key`; SettingError saying what it must be."""
    item = setting(key)
    try:
        return item.parse(text)
    except ValueError as exc:
        raise SettingError(f"{item.key} must be {exc}, not {text[:40]!r}") from None


def settings_from(stored: Mapping[str, str]) -> Settings:
    """Settings from stored text by key; unknown keys and unreadable values are skipped."""
    values: dict[str, Any] = {}
    for key, text in stored.items():
        item = SETTINGS.get(key)
        if item is None:
            continue
        try:
            values[item.attribute] = item.parse(text)
        except ValueError:
            continue
    return replace(Settings(), **values)


def read_settings(db) -> Settings:
    """The stored settings (defaults for a database without a settings table yet)."""
    tables = {row[0] for row in db.execute("select name from sqlite_master where type='table'")}
    if "settings" not in tables:
        return Settings()
    return settings_from(dict(db.execute("select key, value from settings").fetchall()))


def write_setting(db, key: str, text: str | None) -> Settings:
    """Store `key` = `text` (None: back to the default); returns the settings now."""
    from drill.storage.reviews import write_transaction

    item = setting(key)
    with write_transaction(db):
        if text is None:
            db.execute("delete from settings where key = ?", [item.key])
        else:
            value = parse_value(item.key, text)
            stored = json.dumps(list(value)) if isinstance(value, tuple) else str(value)
            db.execute(
                "insert into settings (key, value) values (?, ?)"
                " on conflict(key) do update set value = excluded.value",
                [item.key, stored],
            )
        if item.changed is not None:
            item.changed(db, read_settings(db))
    return read_settings(db)
