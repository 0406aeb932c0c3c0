"""The `kvdrill` command line: one click group whose commands load lazily.

Each command lives in its own module under `drill.commands` and is imported
only when it runs, so `kvdrill kv` never pays for sqlite_utils and no command
on the quiz path pays for torch. Code below the CLI raises `KvdrillError`;
this module turns it, and any SQLite or output error, into one line
`Error: ...` and exit status 1. Nothing reaches the user as a traceback:
an unexpected exception is reported in one line too (KVDRILL_DEBUG=1 shows it
whole).
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import io
import os
import sys
from pathlib import Path

import click

from drill import __version__
from drill.errors import KvdrillError

# command name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "quiz": "drill.commands.quiz:quiz",
    "ask": "drill.commands.item:ask",
    "check": "drill.commands.item:check",
    "bank": "drill.commands.bank:bank",
    "kv": "drill.commands.kv:kv",
    "sheet": "drill.commands.sheet:sheet",
    "interview": "drill.commands.interview:interview",
    "stats": "drill.commands.stats:stats",
    "plan": "drill.commands.plan:plan_cmd",
    "export": "drill.commands.history:export_cmd",
    "import": "drill.commands.history:import_cmd",
    "backup": "drill.commands.maintenance:backup_cmd",
    "restore": "drill.commands.maintenance:restore_cmd",
    "doctor": "drill.commands.maintenance:doctor_cmd",
    "config": "drill.commands.config:config_cmd",
    "optimize": "drill.commands.optimize:optimize_cmd",
    "unsuspend": "drill.commands.unsuspend:unsuspend_cmd",
    "mistakes": "drill.commands.mistakes:mistakes_cmd",
    "engine": "drill.commands.engine:engine",
}

DEBUG_ENV = "KVDRILL_DEBUG"


class OutputClosed(Exception):
    """Standard output was closed by its reader (a broken pipe): stop quietly."""


def describe_error(exc: Exception, database: Path | None = None) -> str | None:
    """The one-line message for an exception escaping a command; None for a closed pipe.
    `database`: the one the command used (a SQLite error is named after it)."""
    if isinstance(exc, KvdrillError):
        return str(exc)
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.Error):
        from drill.paths import default_db_path
        from drill.storage.database import describe_sqlite_error

        return describe_sqlite_error(exc, database or default_db_path())
    if isinstance(exc, BrokenPipeError):
        return None
    if isinstance(exc, OSError):
        if exc.filename:
            return f"cannot use {exc.filename}: {exc.strerror or exc}"
        return f"cannot write to standard output: {exc.strerror or exc}"
    if isinstance(exc, MemoryError):
        return "out of memory; the input is too large"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply"
    return (
        f"internal error ({type(exc).__name__}: {str(exc)[:200]}); please report it with the "
        f"command that caused it ({DEBUG_ENV}=1 shows the traceback)"
    )


MAX_MESSAGE_CHARS = 600


def _one_line(message: str) -> str:
    """A message as one printable line of bounded length (it may quote a file or a value)."""
    from drill.text import printable

    text = " ".join(printable(message).split())
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 1] + "…"
    return text


class LazyGroup(click.Group):
    """A group that imports a command's module only when the command is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        present = [
            name
            for name, target in COMMANDS.items()
            if importlib.util.find_spec(target.split(":")[0]) is not None
        ]
        return sorted(set(present) | set(super().list_commands(ctx)))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Click's main, with every error reported in one line on stderr.

        A usage error is `Error: <what>; see `kvdrill CMD -h`.` (exit 2) rather than
        click's usage block; a group called without its subcommand prints its help.
        """
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(0)
        except click.UsageError as exc:
            message = _one_line(exc.format_message()).rstrip(".")
            where = f" (see `{exc.ctx.command_path} -h`)" if exc.ctx else ""
            click.echo(f"Error: {message}{where}.", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if os.environ.get(DEBUG_ENV) and not isinstance(exc, KvdrillError):
                raise
            from drill.commands.options import DATABASE_KEY

            message = describe_error(exc, ctx.meta.get(DATABASE_KEY))
            if message is None:
                raise OutputClosed() from None
            raise click.ClickException(_one_line(message)) from None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kvdrill")
def cli() -> None:
    """Drill KV-cache math and LLM-serving concepts, and measure them on your machine."""


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so exit does not fail flushing it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


class _ClosedBytes(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


class _ClosedOutput(io.TextIOBase):
    """Standard output when the process was started without one (`kvdrill ... >&-`):
    writing to it, as text or to its `buffer` as bytes, fails as a closed descriptor
    does, so it is reported in one line."""

    buffer = _ClosedBytes()

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def main() -> None:
    status: int | str | None = 0
    if sys.stdout is None:
        sys.stdout = _ClosedOutput()
    if sys.stdin is None:  # started without one (`kvdrill quiz <&-`): nothing to read
        sys.stdin = open(os.devnull, encoding="utf-8")
    try:
        cli(prog_name="kvdrill")  # standalone: ends with SystemExit
    except SystemExit as exc:
        status = exc.code
    except OutputClosed:
        _silence_stdout()
        status = 1
    except OSError as exc:  # help or version printed outside a command (kvdrill -h > /dev/full)
        message = describe_error(exc)
        _silence_stdout()
        if message is not None:
            click.echo(f"Error: {_one_line(message)}", err=True)
        status = 1
    try:
        sys.stdout.flush()
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            click.echo(f"Error: cannot write to standard output: {exc.strerror}", err=True)
        _silence_stdout()
        status = status or 1
    sys.exit(status)
