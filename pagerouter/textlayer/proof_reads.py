"""Provenance of hidden-layer lines the proof read from the picture instead of the layer.

When a proven hidden OCR layer disagrees with the picture on a line whose reading is sound
(`triage.layer_proof.replace_lines`), triage puts the recogniser's reading into the text dict
in place of the layer's words and marks those spans (`READ_BY_PROOF`). The text-layer reader
then reads the page as usual; this module gives every block holding such a span the
recogniser as its engine, route `ocr` and the reading's score as its confidence, so that the
output says which text came from the picture and not from the file.
"""

from __future__ import annotations

from typing import Any

import pymupdf

from ..model import Block

READ_BY_PROOF = "pagerouter_read_by_proof"
"""Key of a text-dict span whose text the proof's recogniser read in place of the layer's: a
dict with the layer's text (`layer`), the reading (`read`), its score (`confidence`), `engine`
and `engine_version`."""


def proof_reads(textdict: dict[str, Any]) -> list[tuple[tuple[float, float, float, float], dict]]:
    """(span box in unrotated page space, mark) of every span the proof read."""
    out = []
    for block in textdict.get("blocks", ()):
        for line in block.get("lines", ()) if block.get("type", 0) == 0 else ():
            for sp in line.get("spans", ()):
                mark = sp.get(READ_BY_PROOF)
                if mark and sp.get("text", "").strip():
                    out.append((tuple(sp["bbox"]), mark))
    return out


def mark_proof_reads(blocks: list[Block], textdict: dict[str, Any], page: pymupdf.Page) -> list[Block]:
    """`blocks` with each block that holds a span the proof read (its centre inside the block)
    attributed to the recogniser (see the module doc)."""
    reads = proof_reads(textdict)
    if not reads:
        return blocks
    rot = page.rotation_matrix if page.rotation else None
    out = []
    for b in blocks:
        if not b.text.strip():  # a picture's box (the scan itself) holds the line but none of its text
            out.append(b)
            continue
        held = []
        for box, mark in reads:
            r = pymupdf.Rect(box) * rot if rot is not None else pymupdf.Rect(box)
            cx, cy = (r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2
            if b.bbox[0] - 1 <= cx <= b.bbox[2] + 1 and b.bbox[1] - 1 <= cy <= b.bbox[3] + 1:
                held.append(mark)
        if held:
            b = b.model_copy(update={"engine": held[0]["engine"], "engine_version": held[0]["engine_version"],
                                     "route": "ocr", "confidence": min(m["confidence"] for m in held)})
        out.append(b)
    return out
