"""The shared box helpers (pagerouter.common.geometry): the semantics the former private copies had."""

from pagerouter.common.geometry import area, center, center_inside, grow, intersection_area, overlap_share, union


def test_area_and_intersection():
    assert area((0, 0, 4, 3)) == 12
    assert area((4, 0, 0, 3)) == 0  # inverted: each side clamped at 0
    assert intersection_area((0, 0, 4, 4), (2, 2, 6, 6)) == 4
    assert intersection_area((0, 0, 1, 1), (2, 2, 3, 3)) == 0


def test_overlap_share_is_share_of_the_first_box():
    assert overlap_share((0, 0, 2, 2), (1, 0, 10, 10)) == 0.5
    assert overlap_share((1, 0, 10, 10), (0, 0, 2, 2)) == 2 / 90
    assert overlap_share((1, 1, 1, 5), (0, 0, 9, 9)) == 0.0  # zero-width box: floor, no division by zero


def test_union_grow_center():
    assert union([(1, 2, 3, 4), (0, 3, 2, 9)]) == (0, 2, 3, 9)
    assert union(b for b in [(1, 2, 3, 4)]) == (1, 2, 3, 4)  # any iterable
    assert grow((1, 1, 2, 2), 1) == (0, 0, 3, 3)
    assert center((0, 0, 4, 2)) == (2, 1)
    assert center_inside((0, 0, 4, 2), (2, 1, 5, 5))  # edges included
    assert not center_inside((0, 0, 4, 2), (2.5, 1, 5, 5))
    assert center_inside((0, 0, 4, 2), (2.5, 1, 5, 5), tol=0.5)


def test_overlapping_boxes_merge_into_their_union_and_touching_ones_stay_apart():
    from pagerouter.common.geometry import merge_overlapping

    # a chain: the first two overlap, their union then overlaps the fourth; the third stands apart
    assert merge_overlapping([(0, 0, 10, 10), (5, 5, 20, 20), (30, 0, 40, 10), (19, 19, 25, 25)]) == \
        [(0, 0, 25, 25), (30, 0, 40, 10)]
    assert merge_overlapping([(0, 0, 10, 10), (10, 0, 20, 10)]) == [(0, 0, 10, 10), (10, 0, 20, 10)]
    assert merge_overlapping([]) == []
