from pathlib import Path

import pytest

from bot.ingest.extract import extract_html, link_density
from tests.conftest import TEST_PAGES

PAGES = Path(__file__).resolve().parents[1] / "benchmarks" / "extraction_pages"


def test_structure_is_kept_as_markdown() -> None:
    page = extract_html((TEST_PAGES / "table_numeric.html").read_bytes())
    assert page.title == "数値テーブル - ゲームステータス"
    assert page.text.startswith("# モンスターステータス一覧")
    assert "## ボスモンスター" in page.text
    assert "| りゅうおう | 200 | 100 | 140 | 75 | 90 | 5000 | 10000 |" in page.text


def test_boilerplate_is_dropped_without_article_or_main() -> None:
    page = extract_html((PAGES / "en-blog.html").read_text())
    assert page.text.startswith("# Five lessons from running our first marathon")
    for noise in ("Subscribe to our newsletter", "Twitter", "You may also like", "Archive"):
        assert noise not in page.text
    assert "- Sleep at least eight hours" in page.text


def test_cookie_banner_sidebar_and_comments_are_dropped() -> None:
    page = extract_html((PAGES / "en-news.html").read_text())
    for noise in ("We use cookies", "Most read", "Advertisement", "Great news"):
        assert noise not in page.text
    assert "Priya Nair" in page.text


def test_layout_tables_are_walked_not_converted() -> None:
    html = """<html><body><table><tr><td><p>This long paragraph of real text is
    the article body that a reader came for, placed in a layout cell.</p>
    <table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table></td>
    <td><a href="/1">Home</a> <a href="/2">About</a></td></tr></table></body></html>"""
    text = extract_html(html).text
    assert "| a | b |\n|---|---|\n| 1 | 2 |" in text
    assert "| This long paragraph" not in text
    assert "This long paragraph of real text" in text
    assert "Home" not in text


def test_link_density() -> None:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup("<div><a href='/x'>menu</a> <a href='/y'>items</a></div>", "html.parser")
    assert link_density(soup.div) == pytest.approx(1.0)  # type: ignore[arg-type]
    soup = BeautifulSoup("<div>plain text with <a href='/x'>a</a> link</div>", "html.parser")
    assert link_density(soup.div) < 0.1  # type: ignore[arg-type]


def test_shift_jis_bytes_with_meta_charset() -> None:
    html = "<html><head><meta charset='Shift_JIS'><title>題名</title></head><body><p>本文です。</p></body></html>"
    page = extract_html(html.encode("cp932"))
    assert page.title == "題名" and page.text == "本文です。"


def test_empty_and_script_only_pages() -> None:
    assert extract_html("").text == ""
    assert extract_html("<html><body><script>var x=1</script></body></html>").text == ""
