"""The built-in question deck: YAML files shipped as package data."""

from pathlib import Path

BANK_DIR = Path(__file__).resolve().parent
