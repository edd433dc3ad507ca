from storage.tokenizer import normalize, phrases, tokenize


def test_japanese_keeps_content_words_in_dictionary_form() -> None:
    tokens = tokenize("盧舎那仏像は誰の発願で造られましたか。")
    assert tokens == ["盧舎那", "仏像", "発願", "造る"]


def test_english_is_stemmed_and_stop_words_dropped() -> None:
    assert tokenize("The running shoes are running") == ["run", "shoe", "run"]


def test_full_width_and_case_are_normalized() -> None:
    assert tokenize("ＡＢＣ１２３") == tokenize("abc123")
    assert normalize("Ｔｅｓｔ") == "test"


def test_mixed_script_text() -> None:
    tokens = tokenize("Pythonのasync/awaitについて教えて")
    assert {"python", "async", "await"} <= set(tokens)


def test_phrases_rejoin_what_mecab_split() -> None:
    # MeCab cuts りゅうおう into りゅう|おう; the phrase keeps the whole name.
    assert "りゅうおう" in phrases("りゅうおうのHPは？")
    assert phrases("ＡＢＣ　テスト") == ["テスト"]  # no phrase across white space


def test_empty_and_symbol_only_text() -> None:
    assert tokenize("") == []
    assert tokenize("、。!?…") == []
    assert phrases("") == []
