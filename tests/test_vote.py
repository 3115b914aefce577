"""Token-level majority vote: majority wins, ties keep engine order, alignment survives splits."""

from __future__ import annotations

from pagerouter.ocr.vote import vote


def test_majority_token_wins_per_slot():
    r = vote([
        ("rapidocr_hires", "Tbe quick brown fox jumps ovcr the lazy dog"),
        ("tesseract", "The quick brovn fox jumps over the lazy dog"),
        ("rapidocr", "The quick brown fox jumps over the 1azy dog"),
    ])
    assert r.text == "The quick brown fox jumps over the lazy dog"
    assert r.witnesses == ["rapidocr_hires", "tesseract", "rapidocr"]
    the = r.tokens[0]
    assert (the.text, the.votes, the.total, the.sources) == ("The", 2, 3, ["tesseract", "rapidocr"])
    assert 0.5 < r.agreement < 1.0 and r.disagreements == 4


def test_ties_keep_fixed_engine_order():
    # three different readings of one word: the first engine's wins
    assert vote([("a", "alpha"), ("b", "alpba"), ("c", "a1pha")]).text == "alpha"
    assert vote([("c", "a1pha"), ("a", "alpha"), ("b", "alpba")]).text == "a1pha"
    # two witnesses: every disagreement is a tie, so the first witness's text stands
    r = vote([("hires", "Total due: 1,250.00 EUR"), ("tesseract", "Tota1 due 1,250.00 EUR extra")])
    assert r.text == "Total due: 1,250.00 EUR"
    assert r.agreement < 1.0


def test_insertions_and_deletions_need_a_majority():
    # a word two of three witnesses saw is inserted; a word only one saw is not
    r = vote([("a", "the dog"), ("b", "the lazy dog"), ("c", "the lazy dog")])
    assert r.text == "the lazy dog"
    r = vote([("a", "the dog"), ("b", "the lazy dog"), ("c", "the dog")])
    assert r.text == "the dog"
    # a word two witnesses dropped is dropped
    assert vote([("a", "the very lazy dog"), ("b", "the lazy dog"), ("c", "the lazy dog")]).text == "the lazy dog"
    # a split word pairs by similarity; the majority reading wins
    assert vote([("a", "some thing here"), ("b", "something here"), ("c", "some thing here")]).text == "some thing here"


def test_empty_witnesses_do_not_lose_text_and_lines_come_from_the_pivot():
    r = vote([("a", ""), ("b", "hello world\nsecond line"), ("c", "hello world second line")])
    assert r.text == "hello world\nsecond line" and r.pivot == "b"
    assert vote([]).text == "" and vote([("a", ""), ("b", " ")]).text == ""
    assert vote([("only", "just one reading")]).text == "just one reading"


def test_unspaced_scripts_vote_per_character():
    r = vote([("a", "我们今天去公园"), ("b", "我们明天去公园"), ("c", "我们明天去公园")])
    assert r.text == "我们明天去公园"
    r = vote([("a", "Привет мир"), ("b", "Првиет мир"), ("c", "Привет мир")])
    assert r.text == "Привет мир"


def test_long_garbage_witness_is_outvoted_quickly():
    good = " ".join(f"word{i}" for i in range(400))
    garbage = " ".join(f"x{i}y" for i in range(400))
    r = vote([("a", garbage), ("b", good), ("c", good)])
    assert r.text == good
