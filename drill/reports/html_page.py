"""The head of every web page kvdrill writes (mock interview sheets, the progress report).

A page is one self-contained file: inline CSS, no scripts, nothing loaded from
elsewhere. The Content-Security-Policy forbids scripts and remote loads even if
text from a bank or the database were ever to slip through unescaped.
"""

from __future__ import annotations

CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'"

# The look of a report page (the progress report, an engine run): an A4 column of
# headings, notes, inline charts and right-aligned number tables. Pages add their own.
REPORT_CSS = """
@page { size: A4; margin: 14mm 15mm; }
* { box-sizing: border-box; }
body { font: 10.5pt/1.45 "Helvetica Neue", Arial, "DejaVu Sans", sans-serif; color: #222;
       max-width: 54em; margin: 2em auto; padding: 0 1.2em; }
h1 { font-size: 1.6em; margin: 0 0 .15em; }
h2 { font-size: 1.1em; margin: 1.8em 0 .3em; border-bottom: 1px solid #ccc; padding-bottom: .2em; }
.meta, .note { color: #666; }
.note { font-size: .9em; margin: .3em 0; }
svg.chart { display: block; width: 100%; height: auto; }
table { border-collapse: collapse; width: 100%; font-size: .95em; }
th, td { padding: .3em .6em; border-bottom: 1px solid #e3e3e3; text-align: right; }
th { color: #555; font-weight: normal; border-bottom: 2px solid #bbb; }
th.text, td.text { text-align: left; }
section { break-inside: avoid; page-break-inside: avoid; }
"""


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
