from bot.answer import Answer, Citation
from bot.slack.blocks import (
    BLOCK_LIMIT,
    SECTION_LIMIT,
    answer_blocks,
    chunk_blocks,
    fallback_text,
    split_text,
)


def test_split_text_respects_the_limit_at_boundaries() -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 120 for i in range(20)]
    text = "\n\n".join(paragraphs)
    pieces = split_text(text, limit=1000)
    assert all(len(piece) <= 1000 for piece in pieces)
    assert all(piece.startswith("Paragraph") for piece in pieces)  # cut between paragraphs
    assert "".join(pieces).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace(
        "\n", ""
    )


def test_unbroken_text_is_cut_hard() -> None:
    pieces = split_text("あ" * 7000)
    assert [len(p) for p in pieces] == [SECTION_LIMIT, SECTION_LIMIT, 1000]


def test_long_answer_fits_slack_limits() -> None:
    answer = Answer(
        text="\n\n".join(f"> quote {i} " + "x" * 900 for i in range(200)),
        citations=[Citation(1, "https://example.com/a?b=<c>", "A & B")],
    )
    blocks = answer_blocks("ja", answer, answer_id=7)
    messages = chunk_blocks(blocks)
    assert len(messages) > 1 and all(len(m) <= BLOCK_LIMIT for m in messages)
    sections = [b for b in blocks if b["type"] == "section"]
    assert all(len(b["text"]["text"]) <= SECTION_LIMIT for b in sections)
    context = [b for b in blocks if b["type"] == "context"][-1]["elements"][0]["text"]
    assert "[1] <https://example.com/a?b=&lt;c&gt;|A &amp; B>" in context
    assert blocks[-1]["elements"][0]["value"] == "7"
    assert len(fallback_text("z" * 10_000)) <= 3900


def test_user_text_cannot_inject_slack_markup() -> None:
    blocks = answer_blocks("en", Answer(text="> <!channel> & <@U1>"), answer_id=None)
    assert blocks[0]["text"]["text"] == "> &lt;!channel&gt; &amp; &lt;@U1&gt;"
    assert all(b["type"] != "actions" for b in blocks)


def test_not_found_is_one_section() -> None:
    blocks = answer_blocks("en", Answer(text="", found=False), answer_id=3)
    assert blocks == [
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "Nothing in the knowledge base answers this."},
        }
    ]
