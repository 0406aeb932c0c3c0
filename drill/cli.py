"""The `kvdrill` command line: one click group whose commands load lazily.

Each command lives in its own module under `drill.commands` and is imported
only when it runs, so `kvdrill kv` never pays for sqlite_utils and no command
on the quiz path pays for torch. Code below the CLI raises `KvdrillError`;
this module turns it into `Error: ...` and exit status 1.
"""

from __future__ import annotations

import importlib
import importlib.util

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
    "stats": "drill.commands.stats:stats",
    "export": "drill.commands.history:export_cmd",
    "import": "drill.commands.history:import_cmd",
    "engine": "drill.commands.engine:engine",
}


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

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KvdrillError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kvdrill")
def cli() -> None:
    """Drill KV-cache math and LLM-serving concepts, and measure them on your machine."""


def main() -> None:
    cli(prog_name="kvdrill")
