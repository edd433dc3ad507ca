"""HTML → main text as light Markdown: headings (`#`), tables (pipe rows), lists, paragraphs.

Keeping headings and tables as Markdown lets the chunker cut by section and by table row.
Boilerplate goes in three passes: tags that never hold content (scripts, navigation, forms…),
elements named like boilerplate (`class`/`id` tokens such as nav, sidebar, cookie, share,
ranking; ARIA landmarks), and link-dense blocks (menus, tag clouds). The main region is
`<article>`, then `<main>`, else the element where most paragraph text concentrates
(readability's scoring, simplified), else `<body>`. Layout tables are walked as containers;
only data tables become Markdown tables.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from bs4 import BeautifulSoup
from bs4.element import NavigableString, Tag

DROPPED_TAGS = (
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "iframe", "svg", "canvas", "button", "select", "input", "textarea", "dialog", "menu",
)  # fmt: skip
BOILERPLATE_TOKENS = frozenset(
    """nav navi navbar navigation menu menus breadcrumb breadcrumbs topbar toolbar header
    footer sidebar side aside cookie cookies consent banner share sharing social sns
    related recommend recommended ranking popular newsletter subscribe signup login ad ads
    advert advertisement adsense sponsor sponsored promo popup modal widget widgets pagination
    pager comment comments skip tags tagcloud""".split()
)
CONTENT_TOKENS = frozenset("article content main post entry story body text detail".split())
BOILERPLATE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
BLOCK_TAGS = frozenset(
    "p div section article main blockquote figure figcaption dl dt dd address details "
    "summary center td th".split()
)
HEADING_LEVELS = {f"h{level}": level for level in range(1, 7)}
PARAGRAPH_TAGS = ("p", "pre", "blockquote")
CONTAINER_PARAGRAPHS = ("div", "td", "section")
MIN_PARAGRAPH = 25
LINK_DENSE = 0.5
DATA_CELL_MAX = 200
_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u3000]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_TOKEN_SPLIT = re.compile(r"[-_\s]+|(?<=[a-z])(?=[A-Z])")


@dataclass(frozen=True, slots=True)
class ExtractedPage:
    title: str
    text: str


def _inline_text(node: Tag | NavigableString) -> str:
    if isinstance(node, NavigableString):
        return str(node) if type(node) is NavigableString else ""
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


def _text_length(node: Tag) -> int:
    return len(_SPACES.sub("", node.get_text()))


def link_density(node: Tag) -> float:
    """Share of a block's text that sits inside links (menus are nearly all links)."""
    total = _text_length(node)
    if total == 0:
        return 0.0
    linked = sum(_text_length(anchor) for anchor in node.find_all("a"))
    return min(linked / total, 1.0)


def _name_tokens(tag: Tag) -> set[str]:
    names = [str(tag.get("id") or "")]
    classes: object = tag.get("class") or []
    if isinstance(classes, list):
        names.extend(str(name) for name in classes)
    else:
        names.append(str(classes))
    return {token.lower() for name in names for token in _TOKEN_SPLIT.split(name) if token}


def _is_boilerplate(tag: Tag) -> bool:
    if tag.name in {"html", "body", "main", "article"}:
        return False
    if str(tag.get("role") or "").lower() in BOILERPLATE_ROLES:
        return True
    if tag.has_attr("hidden") or str(tag.get("aria-hidden") or "") == "true":
        return True
    tokens = _name_tokens(tag)
    return bool(tokens & BOILERPLATE_TOKENS) and not tokens & CONTENT_TOKENS


def _remove_boilerplate(soup: BeautifulSoup) -> None:
    for tag in soup.find_all(DROPPED_TAGS):
        tag.decompose()
    for tag in soup.find_all(_is_boilerplate):
        if not tag.decomposed:
            tag.decompose()


def _direct_text_length(node: Tag) -> int:
    return sum(len(str(child).strip()) for child in node.children if type(child) is NavigableString)


def _best_region(root: Tag) -> Tag:
    """The element where paragraph text concentrates (no `<article>`/`<main>` to go by)."""
    scores: dict[int, float] = defaultdict(float)
    nodes: dict[int, Tag] = {}

    def credit(node: Tag | None, points: float) -> None:
        if isinstance(node, Tag):
            nodes[id(node)] = node
            scores[id(node)] += points

    for paragraph in root.find_all([*PARAGRAPH_TAGS, *CONTAINER_PARAGRAPHS]):
        if paragraph.name in CONTAINER_PARAGRAPHS:
            length = _direct_text_length(paragraph)
        else:
            length = len(paragraph.get_text(strip=True))
        if length < MIN_PARAGRAPH:
            continue
        text = paragraph.get_text()
        points = 1 + text.count(",") + text.count("、") + text.count("。") + min(length / 100, 3)
        if paragraph.name in CONTAINER_PARAGRAPHS:
            credit(paragraph, points)
            credit(paragraph.parent, points / 2)
        else:
            credit(paragraph.parent, points)
            credit(paragraph.parent.parent if paragraph.parent else None, points / 2)
    if not scores:
        return root
    best = max(scores, key=lambda key: scores[key] * (1 - link_density(nodes[key])))
    return nodes[best]


def _is_data_table(table: Tag) -> bool:
    """Rows and columns of short cells; a table holding tables or long text is layout."""
    if table.find("table"):
        return False
    rows = _rows(table)
    if len(rows) < 2 or max(len(row) for row in rows) < 2:
        return False
    cells = [cell for row in rows for cell in row]
    return all(_text_length(cell) <= DATA_CELL_MAX for cell in cells)


def _rows(table: Tag) -> list[list[Tag]]:
    """Rows of this table only (not of tables nested in it)."""
    rows: list[list[Tag]] = []
    for row in table.find_all("tr"):
        if row.find_parent("table") is table:
            rows.append(list(row.find_all(["th", "td"], recursive=False)))
    return rows


def _cell(cell: Tag) -> str:
    return _clean(_inline_text(cell)).replace("\n", " ").replace("|", "\\|")


def _table_markdown(table: Tag) -> str:
    rows = [[_cell(cell) for cell in row] for row in _rows(table)]
    rows = [row for row in rows if any(row)]
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in rows]
    separator = "|" + "|".join(["---"] * width) + "|"
    return "\n".join([lines[0], separator, *lines[1:]])


class _Writer:
    """Walks the main region and emits Markdown blocks in document order."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self._inline: list[str] = []

    def flush(self) -> None:
        text = _clean("".join(self._inline))
        if text:
            self.blocks.append(text)
        self._inline.clear()

    def walk_one(self, tag: Tag) -> None:
        self._element(tag)

    def walk(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if type(child) is NavigableString:  # not comments, doctype, CDATA
                    self._inline.append(str(child))
            elif isinstance(child, Tag):
                self._element(child)

    def _element(self, tag: Tag) -> None:
        name = tag.name
        if name in HEADING_LEVELS:
            self.flush()
            text = _clean(_inline_text(tag)).replace("\n", " ")
            if text:
                self.blocks.append("#" * HEADING_LEVELS[name] + " " + text)
        elif name == "table":
            self.flush()
            if _is_data_table(tag):
                self.blocks.append(_table_markdown(tag))
            else:
                self.walk(tag)
                self.flush()
        elif name in {"ul", "ol"}:
            self.flush()
            if link_density(tag) <= LINK_DENSE:
                self._list(tag)
        elif name == "pre":
            self.flush()
            self.blocks.append("```\n" + tag.get_text().strip("\n") + "\n```")
        elif name == "br":
            self._inline.append("\n")
        elif name in BLOCK_TAGS or name in {"li", "tr", "tbody", "thead"}:
            self.flush()
            if not (name in BLOCK_TAGS and _is_link_block(tag)):
                self.walk(tag)
            self.flush()
        else:
            self.walk(tag)

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


def _is_link_block(tag: Tag) -> bool:
    """A block of mostly links with little text of its own: a menu, tag list or ad strip."""
    return _text_length(tag) < 500 and link_density(tag) > LINK_DENSE and bool(tag.find("a"))


def _title_heading_outside(body: Tag | BeautifulSoup, region: Tag) -> Tag | None:
    """A scored region often starts below the article's `<h1>`: keep that heading when the
    region has none and the page's first `<h1>` comes before it."""
    if region.find("h1") is not None or region.name == "body":
        return None
    heading = body.find("h1")
    if not isinstance(heading, Tag):
        return None
    following = heading.find_all_next()
    return heading if region in following else None


def extract_html(html: str | bytes) -> ExtractedPage:
    """Main content of an HTML page as light Markdown, with the page title.

    Bytes are decoded by BeautifulSoup from the `<meta charset>` or by detection, so
    Shift_JIS and EUC-JP pages read correctly.
    """
    soup = BeautifulSoup(html, "html.parser")
    title = ""
    if soup.title and soup.title.string:
        title = _clean(soup.title.string).replace("\n", " ")
    _remove_boilerplate(soup)
    body = soup.body or soup
    root = soup.find("article") or soup.find("main")
    if not isinstance(root, Tag):
        root = _best_region(body) if isinstance(body, Tag) else None
    if not title and isinstance(root, Tag):
        heading = root.find("h1")
        title = _clean(heading.get_text()) if heading else ""
    writer = _Writer()
    if isinstance(root, Tag):
        heading = _title_heading_outside(body, root)
        if heading is not None:
            writer.walk_one(heading)
        writer.walk(root)
        writer.flush()
    text = _BLANK_LINES.sub("\n\n", "\n\n".join(writer.blocks)).strip()
    return ExtractedPage(title=title, text=text)
