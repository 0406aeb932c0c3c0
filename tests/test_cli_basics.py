import subprocess
import sys

from click.testing import CliRunner

from drill import __version__
from drill.cli import cli


def test_version_flag_prints_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"kvdrill, version {__version__}\n"


def test_module_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "drill", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"kvdrill, version {__version__}"


def test_unknown_command_is_a_usage_error():
    result = CliRunner().invoke(cli, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command 'no-such-command'" in result.output
