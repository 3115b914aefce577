"""Markdown/JSON rendering and the published JSON schema."""

from __future__ import annotations

import json

from pagerouter.config.output import OutputConfig
from pagerouter.model import Block, Document, Page, TriageDecision
from pagerouter.render.output import SCHEMA_PATH, document_schema, route_summary_table, to_json, to_markdown


def _b(text, role, order, **kw):
    return Block(text=text, role=role, bbox=(10, 10 + order, 100, 20 + order), page=1, engine="pymupdf",
                 route="text_layer", confidence=1.0, order=order, **kw)


def _doc() -> Document:
    blocks = [
        _b("Annual report", "header", 0),
        _b("Results", "heading", 1, level=1),
        _b("Revenue grew.", "paragraph", 2),
        _b("first point", "list_item", 3),
        _b("2. second point", "list_item", 4),
        _b("| a | b |\n| --- | --- |\n| 1 | 2 |", "table", 5, cells=[["a", "b"], ["1", "2"]]),
        _b("", "figure", 6),
        _b("7", "page_number", 7),
    ]
    p1 = Page(number=1, status="ok", route="text_layer", blocks=blocks, timings={"triage": 0.01},
              triage=TriageDecision(route="text_layer", reasons=["healthy"]))
    p2 = Page(number=2, status="failed", route=None, error="x.pdf: page 2: triage failed: boom")
    return Document(source="x.pdf", page_count=2, pages=[p1, p2])


def test_markdown_roles_and_furniture():
    md = to_markdown(_doc())
    assert "# Results" in md and "Revenue grew." in md
    assert "- first point" in md and "\n2. second point" in md
    assert "| 1 | 2 |" in md
    assert "Annual report" not in md and "\n7\n" not in md  # furniture kept out of the body
    assert "<!-- figure p1" in md
    assert "page 2 failed" in md  # a failed page is visible, not silently dropped
    assert md.index("# Results") < md.index("Revenue grew.") < md.index("first point")


def test_markdown_with_furniture_and_markers():
    md = to_markdown(_doc(), OutputConfig(include_furniture=True, page_markers=True))
    assert "Annual report" in md and "<!-- page 1 status=ok route=text_layer -->" in md


def test_json_round_trip():
    doc = _doc()
    again = Document.model_validate_json(to_json(doc))
    assert again == doc
    data = json.loads(to_json(doc))
    assert data["coordinate_origin"] == "top-left"


def test_published_schema_is_current():
    """The schema file in the repo must match the model (regenerate with pagerouter.render.output.write_schema)."""
    assert json.loads(SCHEMA_PATH.read_text()) == document_schema()


def test_route_summary_table():
    table = route_summary_table([_doc()])
    assert "text_layer" in table and "failed" in table and "total" in table
