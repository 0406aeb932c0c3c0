"""Loading a bank pauses the cyclic garbage collector and gives it back as it found it."""

from __future__ import annotations

import gc

import pytest

from drill.bank.loader import builtin_bank_files, read_bank
from drill.errors import BankError


def test_the_collector_is_back_on_after_a_load():
    assert gc.isenabled()
    bank, problems = read_bank(builtin_bank_files())
    assert problems == [] and len(bank.ids) > 300
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_caller_stays_off():
    gc.disable()
    try:
        read_bank(builtin_bank_files())
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_failed_load_gives_the_collector_back(tmp_path):
    with pytest.raises(BankError):
        read_bank([tmp_path / "missing.yaml"])
    assert gc.isenabled()
