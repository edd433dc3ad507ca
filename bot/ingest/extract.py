"""HTML → main text as light Markdown: headings (`#`), tables (pipe rows), lists, paragraphs.

Keeping headings and tables as Markdown lets the chunker cut by section and by table row.
Boilerplate (scripts, styles, navigation, page header and footer, forms) is dropped and the
main region is chosen as `<article>`, then `<main>`, then `<body>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bs4 import BeautifulSoup
from bs4.element import NavigableString, Tag

DROPPED_TAGS = (
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "iframe", "svg", "canvas", "button", "select", "input", "textarea", "dialog",
)  # fmt: skip
BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "section",
        "article",
        "main",
        "blockquote",
        "figure",
        "figcaption",
        "dl",
        "dt",
        "dd",
        "address",
        "details",
        "summary",
        "center",
    ]
)
HEADING_LEVELS = {f"h{level}": level for level in range(1, 7)}
_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u3000]+")
_BLANK_LINES = re.compile(r"\n{3,}")


@dataclass(frozen=True, slots=True)
class ExtractedPage:
    title: str
    text: str


def _inline_text(node: Tag | NavigableString) -> str:
    if isinstance(node, NavigableString):
        return str(node)
    parts = []
    for child in node.children:
        if isinstance(child, Tag) and child.name == "br":
            parts.append("\n")
        elif isinstance(child, Tag | NavigableString):
            parts.append(_inline_text(child))
    return "".join(parts)


def _clean(text: str) -> str:
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _cell(cell: Tag) -> str:
    return _clean(_inline_text(cell)).replace("\n", " ").replace("|", "\\|")


def _table_markdown(table: Tag) -> str:
    rows = []
    for row in table.find_all("tr"):
        cells = [_cell(cell) for cell in row.find_all(["th", "td"], recursive=False)]
        if any(cells):
            rows.append(cells)
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    if width == 1:  # a one-column "table" is layout, not data
        return "\n\n".join(row[0] for row in rows if row[0])
    lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in rows]
    separator = "|" + "|".join(["---"] * width) + "|"
    return "\n".join([lines[0], separator, *lines[1:]])


class _Writer:
    """Walks the main region and emits Markdown blocks in document order."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self._inline: list[str] = []

    def _flush(self) -> None:
        text = _clean("".join(self._inline))
        if text:
            self.blocks.append(text)
        self._inline.clear()

    def walk(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if type(child) is NavigableString:  # skip comments, doctype, CDATA
                    self._inline.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name in HEADING_LEVELS:
                self._flush()
                text = _clean(_inline_text(child)).replace("\n", " ")
                if text:
                    self.blocks.append("#" * HEADING_LEVELS[name] + " " + text)
            elif name == "table":
                self._flush()
                table = _table_markdown(child)
                if table:
                    self.blocks.append(table)
            elif name in {"ul", "ol"}:
                self._flush()
                self._list(child)
            elif name == "pre":
                self._flush()
                self.blocks.append("```\n" + child.get_text().strip("\n") + "\n```")
            elif name == "br":
                self._inline.append("\n")
            elif name in BLOCK_TAGS or name == "li":
                self._flush()
                self.walk(child)
                self._flush()
            else:
                self.walk(child)
        return

    def _list(self, node: Tag) -> None:
        for item in node.find_all("li", recursive=False):
            nested = item.find_all(["ul", "ol"], recursive=False)
            for sub in nested:
                sub.extract()
            text = _clean(_inline_text(item)).replace("\n", " ")
            if text:
                self.blocks.append("- " + text)
            for sub in nested:
                self._list(sub)


def extract_html(html: str | bytes) -> ExtractedPage:
    """Main content of an HTML page as light Markdown, with the page title.

    Bytes are decoded by BeautifulSoup from the `<meta charset>` or by detection, so
    Shift_JIS and EUC-JP pages read correctly.
    """
    soup = BeautifulSoup(html, "html.parser")
    title = ""
    if soup.title and soup.title.string:
        title = _clean(soup.title.string).replace("\n", " ")
    for tag in soup.find_all(DROPPED_TAGS):
        tag.decompose()
    root = soup.find("article") or soup.find("main") or soup.body or soup
    if not title:
        heading = root.find("h1") if isinstance(root, Tag) else None
        title = _clean(heading.get_text()) if heading else ""
    writer = _Writer()
    if isinstance(root, Tag):
        writer.walk(root)
        writer._flush()
    text = _BLANK_LINES.sub("\n\n", "\n\n".join(writer.blocks)).strip()
    return ExtractedPage(title=title, text=text)
