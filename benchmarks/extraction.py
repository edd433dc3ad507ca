"""Main-content extraction quality: shiori's extractor against trafilatura, by token F1.

Gold: mozilla/readability expected pages and scrapinghub article bodies (Japanese) from
`../shared/data/html-ja/`, the trafilatura NHK page's must/must-not snippets, and three
English pages with boilerplate written for this benchmark (`extraction_pages/`).

    pip install trafilatura   # benchmark only; not a dependency of shiori
    python -m benchmarks.extraction
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import fugashi
from bs4 import BeautifulSoup

from bot.ingest.extract import extract_html

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "html-ja"
PAGES = Path(__file__).resolve().parent / "extraction_pages"
_TAGGER = fugashi.Tagger()
_WORDISH = re.compile(r"\w")


def tokens(text: str) -> Counter[str]:
    """Word tokens (MeCab, so Japanese is split too), markup and punctuation ignored."""
    text = re.sub(r"[#|>*`\-]{1,}\s", " ", text)
    return Counter(w.surface.lower() for w in _TAGGER(text) if _WORDISH.search(w.surface))


def token_f1(predicted: str, gold: str) -> tuple[float, float, float]:
    got, want = tokens(predicted), tokens(gold)
    overlap = sum((got & want).values())
    precision = overlap / max(sum(got.values()), 1)
    recall = overlap / max(sum(want.values()), 1)
    f1 = 2 * precision * recall / (precision + recall) if overlap else 0.0
    return precision, recall, f1


@dataclass(frozen=True)
class Case:
    name: str
    html: str
    gold: str


def cases() -> list[Case]:
    found = []
    for source in sorted(DATA.glob("readability-*.source.html")):
        expected = source.with_name(source.name.replace(".source.", ".expected."))
        gold = BeautifulSoup(expected.read_text(encoding="utf-8"), "html.parser").get_text("\n")
        found.append(
            Case(source.stem.replace(".source", ""), source.read_text(encoding="utf-8"), gold)
        )
    truth = json.loads((DATA / "scrapinghub-ground-truth.json").read_text(encoding="utf-8"))
    for key, entry in sorted(truth.items()):
        page = DATA / f"scrapinghub-{key}.html"
        found.append(
            Case(f"scrapinghub-{key[:8]}", page.read_text(encoding="utf-8"), entry["articleBody"])
        )
    for page in sorted(PAGES.glob("*.html")):
        gold = page.with_suffix(".gold.txt").read_text(encoding="utf-8")
        found.append(Case(page.stem, page.read_text(encoding="utf-8"), gold))
    return found


def shiori(html: str) -> str:
    return extract_html(html).text


def trafilatura_markdown(html: str) -> str:
    import trafilatura

    return trafilatura.extract(html, output_format="markdown", include_tables=True) or ""


def snippet_check(extractor: Callable[[str], str]) -> tuple[int, int, int, int]:
    """(must-have found, must-have total, must-not found, must-not total) on the NHK page."""
    spec = next(iter(json.loads((DATA / "trafilatura-evaldata-nhk.json").read_text()).values()))
    text = extractor((DATA / "trafilatura-nhk.or.jp.k100.html").read_text(encoding="utf-8"))
    flat = re.sub(r"\s+", "", text)
    hits = sum(re.sub(r"\s+", "", s) in flat for s in spec["with"])
    leaks = sum(re.sub(r"\s+", "", s) in flat for s in spec["without"])
    return hits, len(spec["with"]), leaks, len(spec["without"])


SEED_PAGES = DATA.parent / "seed-fixtures" / "rag_test_pages"


def heading_retention(extractor: Callable[[str], str]) -> tuple[int, int]:
    """Headings of the seed test pages kept as Markdown heading lines (the heading chunker
    needs them to give chunks their section path)."""
    kept = total = 0
    for page in sorted(SEED_PAGES.glob("*.html")):
        html = page.read_text(encoding="utf-8")
        soup = BeautifulSoup(html, "html.parser")
        headings = [h.get_text(" ", strip=True) for h in soup.find_all(re.compile("^h[1-6]$"))]
        lines = {
            line.lstrip("#").strip()
            for line in extractor(html).splitlines()
            if line.startswith("#")
        }
        total += len(headings)
        kept += sum(heading in lines for heading in headings)
    return kept, total


def main() -> None:
    extractors: dict[str, Callable[[str], str]] = {"shiori": shiori}
    try:
        import trafilatura  # noqa: F401

        extractors["trafilatura"] = trafilatura_markdown
    except ImportError:
        print("(trafilatura not installed: shiori only)")
    rows = []
    totals: dict[str, list[float]] = {name: [] for name in extractors}
    for case in cases():
        row = [case.name]
        for name, extractor in extractors.items():
            p, r, f = token_f1(extractor(case.html), case.gold)
            totals[name].append(f)
            row.append(f"{p:.3f} / {r:.3f} / {f:.3f}")
        rows.append(row)
    header = ["page", *(f"{name} P / R / F1" for name in extractors)]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    means = [f"**{sum(v) / len(v):.3f}**" for v in totals.values()]
    print("| mean F1 | " + " | ".join(means) + " |")
    for name, extractor in extractors.items():
        hits, total, leaks, bad = snippet_check(extractor)
        print(f"NHK snippets, {name}: {hits}/{total} wanted found, {leaks}/{bad} unwanted leaked")
        kept, headings = heading_retention(extractor)
        print(f"seed-page headings kept as headings, {name}: {kept}/{headings}")


if __name__ == "__main__":
    main()
