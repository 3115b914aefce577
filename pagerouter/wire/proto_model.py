"""Convert the document model (pagerouter.model) to and from its protobuf form, losslessly.

Field names are the same on both sides; the only shape changes are bboxes (BBox messages),
table cells (Row messages plus `has_cells` for null vs empty) and proto3 `optional` scalars
for JSON nulls. Doubles carry floats exactly, so a round trip gives an equal model.
"""

from __future__ import annotations

from ..model import Block, CheckResult, Decision, Document, FormField, HiddenText, Page, TriageDecision

from .protos import pagerouter_pb2 as pb


def _bbox(b) -> pb.BBox:
    return pb.BBox(x0=b[0], y0=b[1], x1=b[2], y1=b[3])


def _tuple(m: pb.BBox) -> tuple[float, float, float, float]:
    return (m.x0, m.y0, m.x1, m.y1)


def _opt(msg, name: str):
    return getattr(msg, name) if msg.HasField(name) else None


def _kw_opt(**kw):
    return {k: v for k, v in kw.items() if v is not None}


# -- to proto -------------------------------------------------------------------------------
def triage_to_proto(d: TriageDecision) -> pb.TriageDecision:
    return pb.TriageDecision(
        scores=d.scores,
        reasons=d.reasons,
        route=d.route,
        ocr_regions=[_bbox(r) for r in d.ocr_regions],
        hidden_layer=d.hidden_layer,
        hidden_text=[pb.HiddenText(bbox=_bbox(h.bbox), text=h.text, reason=h.reason) for h in d.hidden_text],
        **_kw_opt(script=d.script),
    )


def check_to_proto(c: CheckResult) -> pb.CheckResult:
    return pb.CheckResult(name=c.name, passed=c.passed, score=c.score, reason=c.reason,
                          regions=[_bbox(r) for r in c.regions], **_kw_opt(threshold=c.threshold))


def block_to_proto(b: Block) -> pb.Block:
    return pb.Block(
        text=b.text,
        role=b.role,
        bbox=_bbox(b.bbox),
        page=b.page,
        engine=b.engine,
        engine_version=b.engine_version,
        route=b.route,
        confidence=b.confidence,
        order=b.order,
        cells=[pb.Row(cells=row) for row in (b.cells or [])],
        has_cells=b.cells is not None,
        witnesses=b.witnesses,
        spans=[pb.CellSpan(row=r, col=c, rowspan=rs, colspan=cs) for r, c, rs, cs in (b.spans or [])],
        has_spans=b.spans is not None,
        fields=[pb.FormField(name=f.name, type=f.type, value=f.value, bbox=_bbox(f.bbox)) for f in (b.fields or [])],
        has_fields=b.fields is not None,
        **_kw_opt(level=b.level, image=b.image, image_png_base64=b.image_png_base64),
        **({"furniture": pb.Decision(scores=b.furniture.scores, reasons=b.furniture.reasons)} if b.furniture else {}),
    )


def page_to_proto(p: Page) -> pb.Page:
    msg = pb.Page(
        number=p.number,
        status=p.status,
        rotation=p.rotation,
        width=p.width,
        height=p.height,
        blocks=[block_to_proto(b) for b in p.blocks],
        checks=[check_to_proto(c) for c in p.checks],
        flags=p.flags,
        timings=p.timings,
        **_kw_opt(route=p.route, error=p.error, language=p.language),
    )
    if p.triage is not None:
        msg.triage.CopyFrom(triage_to_proto(p.triage))
    return msg


def document_to_proto(d: Document) -> pb.Document:
    return pb.Document(
        schema_version=d.schema_version,
        source=d.source,
        page_count=d.page_count,
        pages=[page_to_proto(p) for p in d.pages],
        coordinate_origin=d.coordinate_origin,
        engines=d.engines,
    )


# -- from proto -----------------------------------------------------------------------------
def triage_from_proto(m: pb.TriageDecision) -> TriageDecision:
    return TriageDecision(
        scores=dict(m.scores),
        reasons=list(m.reasons),
        route=m.route,
        script=_opt(m, "script"),
        ocr_regions=[_tuple(r) for r in m.ocr_regions],
        hidden_layer=m.hidden_layer,
        hidden_text=[HiddenText(bbox=_tuple(h.bbox), text=h.text, reason=h.reason) for h in m.hidden_text],
    )


def check_from_proto(m: pb.CheckResult) -> CheckResult:
    return CheckResult(name=m.name, passed=m.passed, score=m.score, threshold=_opt(m, "threshold"), reason=m.reason,
                       regions=[_tuple(r) for r in m.regions])


def block_from_proto(m: pb.Block) -> Block:
    return Block(
        text=m.text,
        role=m.role,
        bbox=_tuple(m.bbox),
        page=m.page,
        engine=m.engine,
        engine_version=m.engine_version,
        route=m.route,
        confidence=m.confidence,
        order=m.order,
        level=_opt(m, "level"),
        cells=[list(r.cells) for r in m.cells] if m.has_cells else None,
        spans=[(s.row, s.col, s.rowspan, s.colspan) for s in m.spans] if m.has_spans else None,
        fields=[FormField(name=f.name, type=f.type, value=f.value, bbox=_tuple(f.bbox)) for f in m.fields]
        if m.has_fields else None,
        image=_opt(m, "image"),
        image_png_base64=_opt(m, "image_png_base64"),
        witnesses=list(m.witnesses),
        furniture=Decision(scores=dict(m.furniture.scores), reasons=list(m.furniture.reasons))
        if m.HasField("furniture")
        else None,
    )


def page_from_proto(m: pb.Page) -> Page:
    return Page(
        number=m.number,
        status=m.status,
        route=_opt(m, "route"),
        triage=triage_from_proto(m.triage) if m.HasField("triage") else None,
        rotation=m.rotation,
        width=m.width,
        height=m.height,
        blocks=[block_from_proto(b) for b in m.blocks],
        checks=[check_from_proto(c) for c in m.checks],
        flags=list(m.flags),
        error=_opt(m, "error"),
        timings=dict(m.timings),
        language=_opt(m, "language"),
    )


def document_from_proto(m: pb.Document) -> Document:
    return Document(
        schema_version=m.schema_version,
        source=m.source,
        page_count=m.page_count,
        pages=[page_from_proto(p) for p in m.pages],
        coordinate_origin=m.coordinate_origin or "top-left",
        engines=dict(m.engines),
    )


def request_fields(m: pb.ConvertRequest | pb.PageRequest) -> dict:
    """The request options a ConvertRequest or PageRequest carries, as `RequestOptions` /
    `PageOptions` fields (proto3 defaults, "" and unset, mean "not given"); the caller validates."""
    fields: dict = {"filename": m.filename, "password": m.password, "wait": m.wait}
    if m.HasField("escalation_wait_s"):
        fields["escalation_wait_s"] = m.escalation_wait_s
    if m.ocr:
        fields["ocr"] = m.ocr
    if m.languages:
        fields["languages"] = list(m.languages)
    if m.images:
        fields["images"] = True
    if isinstance(m, pb.PageRequest):
        fields["page"] = m.page or 1  # proto3: 0 is "not set", documented as page 1
    else:
        fields["pages"] = m.pages
    return fields
