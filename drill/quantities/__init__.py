"""Quantities: units and dimensions, the safe arithmetic of templates and answers, and placeholders in question text."""
