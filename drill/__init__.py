"""kvdrill: drills and mock interviews for LLM inference and serving."""

__version__ = "0.1.0"
