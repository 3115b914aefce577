"""Text-layer extraction with layout: order, roles, tables, furniture, hyphenation, scripts."""

from __future__ import annotations

import time
from pathlib import Path

import pymupdf
import pytest

from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.ocr.text_stats import char_error_rate
from pagerouter.common.pagetext import extract_textdict
from pagerouter.bench.synth import add_text_page
from pagerouter.textlayer import FurnitureModel, join_lines, read_text_layer

from . import textlayer_fixtures as F

CFG = TextLayerConfig()
REAL = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "real"


def read(page: pymupdf.Page, furniture: FurnitureModel | None = None, **kw):
    return read_text_layer(page, extract_textdict(page), page.number + 1, CFG, furniture, **kw)


def body_text(blocks) -> str:
    return "\n".join(b.text for b in blocks if b.role not in ("header", "footer", "page_number"))


@pytest.fixture(scope="module")
def doc():
    d = pymupdf.open()
    cols2 = F.column_page(d, 2)
    cols3 = F.column_page(d, 3)
    F.heading_list_page(d)
    F.ruled_table_page(d, [["Name", "Qty", "Price"], ["apple", "3", "1.20"], ["pear | x", "5", "0.80"]])
    F.unruled_table_page(
        d, [["Item", "Count", "Mass", "Note"], ["alpha", "1", "2.5", "ok"], ["beta", "22", "3.0", "late"], ["gamma", "7", "11.25", "ok"]]
    )
    yield d, {"cols2": cols2, "cols3": cols3}
    d.close()


@pytest.mark.parametrize("index,key", [(0, "cols2"), (1, "cols3")])
def test_multi_column_reading_order(doc, index, key):
    d, texts = doc
    blocks = read(d[index])
    assert blocks[0].role == "heading" and blocks[0].text.startswith("A Title Spanning")
    assert blocks[-1].text.startswith("A full width closing note")
    text = body_text(blocks)
    flat = [line for col in texts[key] for line in col]
    positions = [text.index(line) for line in flat]
    assert positions == sorted(positions), "column text read out of order"
    assert [b.order for b in blocks] == list(range(len(blocks)))
    # the two paragraphs of each column stay separate blocks
    paras = [b for b in blocks if b.role == "paragraph"]
    assert len(paras) == 2 * len(texts[key]) + 1


def test_headings_and_lists(doc):
    d, _ = doc
    blocks = read(d[2])
    heads = [(b.text, b.level) for b in blocks if b.role == "heading"]
    assert heads == [("Main Title", 1), ("Section One", 2), ("Subsection A", 3), ("Section Two", 2)]
    items = [b.text for b in blocks if b.role == "list_item"]
    assert items == [
        "First bullet item",
        "Second bullet item that wraps onto another line here",
        "Third bullet",
        "1. First numbered",
        "2. Second numbered",
        "3. Third numbered",
    ]
    assert all("#" not in b.text for b in blocks if b.role == "heading")


def test_numbered_section_headings_are_headings_and_numbered_lists_stay_lists():
    """A section number before a title set larger than the body, or in bold body type with two
    levels ("2.3 Methods"), is a heading that keeps its number; a plain numbered list, in body
    type or each item bold, stays a list, and so do numbered lines set large one after another
    with nothing between (key points) (eu-012 p5's "1.4. Educational attainment" in 16 pt bold
    was a list item "- 1.4. ...")."""
    d = pymupdf.open()
    page = d.new_page(width=595, height=842)
    body = "Body text of the report runs on for a whole line of ordinary words here. " * 2
    y = 80
    def put(text, size=11, font="helv", gap=1.8):
        nonlocal y
        page.insert_text((72, y), text, fontsize=size, fontname=font)
        y += size * gap
    put("1.4. Educational attainment", 16, "hebo", 2.2)
    for _ in range(3):
        put(body[:80])
    put("2.3 Methods of the survey", 11, "hebo", 2.2)
    for _ in range(3):
        put(body[:80])
    put("1. Fast on a CPU", 16, "hebo", 1.5)  # key points set large, one after another: a list
    put("2. Cheap per page", 16, "hebo", 2.2)
    put("1. First step of the work", gap=1.6)
    put("2. Second step of the work", gap=1.6)
    put("1. Bold term", 11, "hebo", 1.6)
    put("2. Another term", 11, "hebo", 2.2)
    for _ in range(3):
        put(body[:80])
    blocks = read(page)
    heads = [b.text for b in blocks if b.role == "heading"]
    items = [b.text for b in blocks if b.role == "list_item"]
    assert heads == ["1.4. Educational attainment", "2.3 Methods of the survey"]
    assert items == ["1. Fast on a CPU", "2. Cheap per page", "1. First step of the work", "2. Second step of the work",
                     "1. Bold term", "2. Another term"]


def test_ruled_table(doc):
    d, _ = doc
    blocks = read(d[3])
    tables = [b for b in blocks if b.role == "table"]
    assert len(tables) == 1
    t = tables[0]
    assert t.cells == [["Name", "Qty", "Price"], ["apple", "3", "1.20"], ["pear | x", "5", "0.80"]]
    assert "| pear \\| x | 5 | 0.80 |" in t.text
    assert t.text.splitlines()[1] == "| --- | --- | --- |"
    # table words are not repeated as paragraphs; text around the table keeps its order
    assert [b.role for b in blocks] == ["paragraph", "table", "paragraph"]


def test_unruled_table(doc):
    d, _ = doc
    blocks = read(d[4])
    tables = [b for b in blocks if b.role == "table"]
    assert len(tables) == 1
    assert tables[0].cells == [
        ["Item", "Count", "Mass", "Note"],
        ["alpha", "1", "2.5", "ok"],
        ["beta", "22", "3.0", "late"],
        ["gamma", "7", "11.25", "ok"],
    ]
    assert tables[0].confidence < 1.0  # rebuilt from whitespace: a guess
    assert "alpha" not in body_text([b for b in blocks if b.role != "table"])


def test_plain_page_does_no_table_work(monkeypatch, doc):
    """Counts the table work the text layer really does (`build_table`, and `words_in` for its
    cells; it never calls `find_tables` or `get_text("words")`, so counting those proved
    nothing). The ruled-table page is the control: there the counters must move."""
    import pagerouter.textlayer as textlayer
    import pagerouter.textlayer.tables as tables

    calls = {"build_table": 0, "words_in": 0}
    real_bt, real_wi = textlayer.build_table, tables.words_in

    def counting_build_table(*a, **k):
        calls["build_table"] += 1
        return real_bt(*a, **k)

    def counting_words_in(*a, **k):
        calls["words_in"] += 1
        return real_wi(*a, **k)

    monkeypatch.setattr(textlayer, "build_table", counting_build_table)
    monkeypatch.setattr(tables, "words_in", counting_words_in)
    d, _ = doc
    read(d[3])  # ruled table
    assert calls["build_table"] >= 1 and calls["words_in"] >= 1, calls
    calls.update(build_table=0, words_in=0)
    p = pymupdf.open()
    add_text_page(p, ["Plain text paragraph with nothing tabular in it at all. " * 8] * 3, title="Plain")
    td = extract_textdict(p[0])
    blocks = read_text_layer(p[0], td, 1, CFG)
    assert calls == {"build_table": 0, "words_in": 0}
    assert not any(b.role == "table" for b in blocks)
    assert char_error_rate("Plain text paragraph with nothing tabular in it at all. " * 24,
                           "\n".join(b.text for b in blocks if b.role == "paragraph")) <= 0.01


def test_furniture_on_every_page_including_first():
    d = F.furniture_doc(5)
    fm = FurnitureModel.from_document(d, [1, 2, 3, 4, 5], CFG)
    for page in d:
        blocks = read(page, fm)
        roles = {b.text: b.role for b in blocks}
        n = page.number + 1
        assert roles["Journal of Layout Studies, Vol. 7"] == "header"
        assert roles[f"Page {n} of 5"] == "page_number"
        assert roles["Confidential draft"] == "footer"
        body = body_text(blocks)
        assert "Journal" not in body and "Confidential" not in body and f"Page {n} of" not in body
        assert f"Body line 0 of page {n}" in body


def test_page_numbers_without_repetition():
    d = pymupdf.open()
    page = d.new_page()
    for k in range(10):
        F.put(page, 56, 120 + k * 14, f"Only page body line {k} with words.", 10)
    F.put(page, 290, 815, "- 7 -", 9)
    fm = FurnitureModel.from_document(d, [1], CFG)
    blocks = read(d[0], fm)
    assert [b.role for b in blocks if b.text == "- 7 -"] == ["page_number"]


def test_hyphenation_join():
    assert join_lines(["the inter-", "national office"]) == "the international office"
    assert join_lines(["Jean-", "Pierre came"]) == "Jean-Pierre came"
    assert join_lines(["a well-", "known fact"], frozenset({"well-known", "a", "fact"})) == "a well-known fact"
    assert join_lines(["soft\u00ad", "hyphen"]) == "softhyphen"
    assert join_lines(["東京都", "大阪"]) == "東京都大阪"
    d = pymupdf.open()
    page = d.new_page()
    F.put(page, 56, 100, "The organisation adopted an inter-", 10)
    F.put(page, 56, 113, "national standard for every page.", 10)
    blocks = read(page)
    assert blocks[0].text == "The organisation adopted an international standard for every page."


def test_cjk_and_cyrillic():
    d = pymupdf.open()
    page = d.new_page()
    F.put(page, 56, 100, "Привет, мир. Это проверка", 11, font="china-s")
    F.put(page, 56, 114, "кириллического текста.", 11, font="china-s")
    F.put(page, 56, 160, "日本語の文章はここから始まり", 11, font="china-s")
    F.put(page, 56, 174, "次の行に続きます。", 11, font="china-s")
    blocks = read(page)
    texts = [b.text for b in blocks]
    assert "Привет, мир. Это проверка кириллического текста." in texts
    assert "日本語の文章はここから始まり次の行に続きます。" in texts


def test_invisible_text_skipped():
    d = pymupdf.open()
    page = d.new_page()
    F.put(page, 56, 100, "Visible words on the page.", 10)
    page.insert_text((56, 130), "hidden words nobody sees", fontsize=10, render_mode=3)
    blocks = read(page)
    assert "hidden" not in body_text(blocks)
    assert "Visible words on the page." in body_text(blocks)


def test_figures_and_skip_regions():
    d = pymupdf.open()
    page = d.new_page()
    F.put(page, 56, 80, "Text above the picture.", 10)
    page.insert_image(pymupdf.Rect(100, 120, 400, 320), stream=F.png_bytes())
    F.put(page, 56, 360, "Figure 1: A picture of nothing.", 10)
    blocks = read(page)
    figs = [b for b in blocks if b.role == "figure"]
    assert len(figs) == 1 and figs[0].text == ""
    assert figs[0].bbox == pytest.approx((100, 120, 400, 320), abs=1)
    assert [b.role for b in blocks] == ["paragraph", "figure", "caption"]
    blocks = read(page, skip_regions=[(90, 110, 410, 330)])
    assert not [b for b in blocks if b.role == "figure"]


def test_blocks_carry_provenance(doc):
    d, _ = doc
    for b in read(d[2]):
        assert b.engine == "pymupdf" and b.engine_version == pymupdf.VersionBind
        assert b.route == "text_layer" and b.page == 3 and 0 < b.confidence <= 1
        assert 0 <= b.bbox[0] < b.bbox[2] <= 595 and 0 <= b.bbox[1] < b.bbox[3] <= 842


@pytest.mark.slow
def test_real_corpus_reads_without_error():
    if not REAL.is_dir():
        pytest.fail(f"real corpus not found at {REAL} (CI lays shared/ beside the checkout)")
    pages = 0
    t0 = time.perf_counter()
    for path in sorted(REAL.glob("*.pdf")):
        with pymupdf.open(path) as doc:
            fm = FurnitureModel.from_document(doc, list(range(1, doc.page_count + 1)), CFG)
            for page in doc:
                blocks = read(page, fm)
                assert [b.order for b in blocks] == list(range(len(blocks))), f"{path.name} p{page.number + 1}"
                pages += 1
    assert pages > 100, f"only {pages} pages read in {time.perf_counter() - t0:.1f}s"


def test_text_painted_under_a_later_image_is_skipped():
    """Text covered by an opaque picture painted after it is not on the page (a hidden OCR
    layer under a scan, a covered form field); text painted over the picture is."""
    d = pymupdf.open()
    page = d.new_page()
    F.put(page, 56, 80, "Visible words above the picture.", 10)
    F.put(page, 120, 200, "Covered words nobody can see.", 10)
    page.insert_image(pymupdf.Rect(100, 150, 400, 350), stream=F.png_bytes())
    F.put(page, 120, 300, "Caption printed over the picture.", 10)
    blocks = read(page)
    text = body_text(blocks)
    assert "Covered" not in text
    assert "Visible words above the picture." in text and "Caption printed over the picture." in text
    keep = TextLayerConfig(drop_text_under_images=False)
    assert "Covered" in body_text(read_text_layer(page, extract_textdict(page), 1, keep))


def test_three_column_prose_is_not_a_table(monkeypatch):
    """Narrow ragged prose columns have short lines aligned in rows, like a table: they must
    stay paragraphs, and cost no table work (no word extraction)."""
    from pagerouter.bench.synth import LOREM

    d = pymupdf.open()
    add_text_page(d, [LOREM, LOREM[:239], LOREM] * 2, title="Section 18", header="Annual report", footer="18", columns=3)
    td = extract_textdict(d[0])
    words = {"n": 0}
    real_gt = pymupdf.Page.get_text

    def counting_get_text(self, option="text", *a, **k):
        words["n"] += option == "words"
        return real_gt(self, option, *a, **k)

    monkeypatch.setattr(pymupdf.Page, "get_text", counting_get_text)
    blocks = read_text_layer(d[0], td, 1, CFG)
    assert not [b for b in blocks if b.role == "table"]
    assert words["n"] == 0
    assert "quarterly figures" in body_text(blocks)


def test_repeated_title_in_heading_type_is_not_a_running_header():
    d = pymupdf.open()
    for i in range(6):
        add_text_page(d, [F.put.__doc__ or "Body text of the page. " * 20], title=f"Section {i + 1}", header="Annual report 2026", footer=str(i + 1))
    fm = FurnitureModel.from_document(d, list(range(1, 7)), CFG)
    blocks = read(d[2], fm)
    roles = {b.text: b.role for b in blocks}
    assert roles["Annual report 2026"] == "header"
    assert roles["Section 3"] == "heading"


def test_rules_from_the_text_dict_vectors(doc, monkeypatch):
    """With vector collection in the shared extraction, tables come from the dict's vector
    blocks (no second run of the page) and read the same."""
    from pagerouter.common import pagetext

    d, _ = doc
    before = [b.text for b in read(d[3]) if b.role == "table"]
    monkeypatch.setattr(pagetext, "TEXT_FLAGS", pagetext.TEXT_FLAGS | pymupdf.TEXT_COLLECT_VECTORS)
    monkeypatch.setattr(pymupdf.Page, "get_bboxlog", lambda self, *a, **k: pytest.fail("page run twice"))
    after = [b.text for b in read(d[3]) if b.role == "table"]
    assert after == before and after
