import pytest

from bot.commands import Add, Ask, Crawl, Delete, Help, Status, clean_slack_text, parse
from bot.errors import CommandError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rag status", Status()),
        ("RAG Status", Status()),
        ("rag help", Help()),
        ("rag add https://example.com/a", Add("https://example.com/a")),
        ("rag add 'my file.html'", Add("my file.html")),
        ("rag delete https://example.com/a", Delete("https://example.com/a")),
        ("rag crawl https://example.com/docs", Crawl("https://example.com/docs")),
        (
            r"rag crawl https://example.com/docs \.html$",
            Crawl("https://example.com/docs", r"\.html$"),
        ),
        ("<@U123> rag add <https://example.com/a|example.com/a>", Add("https://example.com/a")),
        ("<@U123> りゅうおうのHPは？", Ask("りゅうおうのHPは？")),
        ("ragged edges?", Ask("ragged edges?")),
        ("", Ask("")),
    ],
)
def test_parse(text: str, expected: object) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    "text", ["rag", "rag add", "rag add a b", "rag status now", "rag crawl", "rag fly away"]
)
def test_malformed_commands_show_usage(text: str) -> None:
    with pytest.raises(CommandError, match="usage: rag add"):
        parse(text)


def test_bad_regex_is_reported() -> None:
    with pytest.raises(CommandError, match="invalid regex"):
        parse("rag crawl https://example.com [unclosed")


def test_clean_slack_text() -> None:
    assert clean_slack_text("<@U1> see <https://a.example/x>") == "see https://a.example/x"
