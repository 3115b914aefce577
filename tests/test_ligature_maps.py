"""Ligature glyphs a font's Unicode map gives as one of their letters (common/ligature_maps.py):
which codes are ligatures, judged from the font's own widths, and the CMap parsing it rests on.
The real page this was found on is `tests/test_real_pages.py::
test_ligatures_a_font_maps_to_one_of_their_letters_read_whole`."""

from __future__ import annotations

from pagerouter.common.ligature_maps import Ligature, ligatures_of, parse_to_unicode, restore_char, restore_words


def _font(letters: dict[str, float], odd: list[tuple[str, float]]) -> tuple[dict[int, str], dict[int, float]]:
    """A font's code -> text and code -> width: one code per letter, then the odd codes."""
    codes, widths = {}, {}
    for i, (ch, w) in enumerate([*letters.items(), *odd]):
        codes[i + 1], widths[i + 1] = ch, w
    return codes, widths


TIMES = {"f": 333, "i": 278, "l": 278, "t": 278, "T": 611, "h": 500, "s": 389, "c": 444, "e": 444, "F": 556}


def test_times_ligatures_mapped_to_their_last_letter_are_found_though_narrower_than_their_letters():
    # Times draws fi/fl at 556 and ffi at 833: 9% and 12% narrower than the letters side by side
    got = ligatures_of(*_font(TIMES, [("i", 556), ("l", 556), ("i", 833), ("h", 1070)]))
    assert {(g.letter, g.text) for g in got} == {("i", "fi"), ("l", "fl"), ("i", "ffi"), ("h", "Th")}


def test_a_font_mapping_ligatures_to_their_first_letter():
    got = ligatures_of(*_font(TIMES, [("T", 1070), ("s", 640)]))
    assert {(g.letter, g.text) for g in got} == {("T", "Th"), ("s", "st")}


def test_an_f_alone_is_read_only_where_one_ligature_fits():
    # only "f" codes: either convention. 660 is ff (666) and nothing else; 600 is as near fi, fl
    # and ft (611 each, read as first letters) as any: left as it is
    got = ligatures_of(*_font(TIMES, [("f", 660), ("f", 600)]))
    assert [(g.letter, g.text, g.width) for g in got] == [("f", "ff", 660)]


def test_wide_glyphs_that_are_no_ligature_keep_their_letter():
    # a capital mapped to "t" (as wide as "T"), a swash "h" of no ligature's width, a code only
    # 10% wider (an alternate), and "i"/"T" together (no one convention)
    assert ligatures_of(*_font(TIMES, [("t", 611)])) == []
    assert ligatures_of(*_font(TIMES, [("h", 700)])) == []
    assert ligatures_of(*_font(TIMES, [("i", 300)])) == []
    assert ligatures_of(*_font(TIMES, [("i", 556), ("T", 1070)])) == []


def test_to_unicode_ranges_chars_and_arrays():
    cmap = """1 begincodespacerange <00> <ff> endcodespacerange
    2 beginbfchar <1c> <0069> <1d> <00660066> endbfchar
    2 beginbfrange <61> <63> <0061> <70> <71> [<0070> <0051>] endbfrange"""
    assert parse_to_unicode(cmap) == {0x1C: "i", 0x1D: "ff", 0x61: "a", 0x62: "b", 0x63: "c", 0x70: "p", 0x71: "Q"}


def test_a_character_is_its_ligature_only_at_the_ligature_s_width():
    ligs = {"i": [Ligature("i", "fi", 556), Ligature("i", "ffi", 833)]}
    span = {"size": 10.0}
    assert restore_char({"c": "i", "bbox": (0, 0, 5.56, 10)}, span, True, ligs) == "fi"
    assert restore_char({"c": "i", "bbox": (0, 0, 8.3, 10)}, span, True, ligs) == "ffi"
    assert restore_char({"c": "i", "bbox": (0, 0, 2.78, 10)}, span, True, ligs) == "i"  # the letter itself
    assert restore_char({"c": "i", "bbox": (0, 0, 10, 6.9)}, span, False, ligs) == "i"  # vertical: its height


def test_words_take_the_restored_text_of_their_characters():
    spots = [(0, 0, 5, 10, "d", "d"), (5, 0, 9, 10, "e", "e"), (9, 0, 14, 10, "i", "fi"), (14, 0, 19, 10, "n", "n"),
             (19, 0, 22, 10, " ", " "), (22, 0, 27, 10, "i", "i"), (27, 0, 32, 10, "n", "n")]
    words = [(0, 0, 19, 10, "dein", 0, 0, 0), (22, 0, 32, 10, "in", 0, 0, 1), (40, 0, 50, 10, "else", 0, 0, 2)]
    assert [w[4] for w in restore_words(words, spots)] == ["defin", "in", "else"]
