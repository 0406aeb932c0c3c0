"""The head of every web page kvdrill writes (mock interview sheets, the progress report).

A page is one self-contained file: inline CSS, no scripts, nothing loaded from
elsewhere. The Content-Security-Policy forbids scripts and remote loads even if
text from a bank or the database were ever to slip through unescaped.
"""

from __future__ import annotations

CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'"


def page_head(title_html: str, css: str) -> list[str]:
    """The lines from the doctype to `<body>`; `title_html` is escaped already."""
    return [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title_html}</title>",
        f"<style>{css}</style>",
        "</head>",
        "<body>",
    ]
