from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ConvertRequest(_message.Message):
    __slots__ = ("data", "filename", "pages", "password", "wait", "escalation_wait_s", "ocr", "languages", "images")
    DATA_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    ESCALATION_WAIT_S_FIELD_NUMBER: _ClassVar[int]
    OCR_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    filename: str
    pages: str
    password: str
    wait: str
    escalation_wait_s: float
    ocr: str
    languages: _containers.RepeatedScalarFieldContainer[str]
    images: bool
    def __init__(self, data: _Optional[bytes] = ..., filename: _Optional[str] = ..., pages: _Optional[str] = ..., password: _Optional[str] = ..., wait: _Optional[str] = ..., escalation_wait_s: _Optional[float] = ..., ocr: _Optional[str] = ..., languages: _Optional[_Iterable[str]] = ..., images: _Optional[bool] = ...) -> None: ...

class PageRequest(_message.Message):
    __slots__ = ("data", "filename", "page", "password", "wait", "escalation_wait_s", "ocr", "languages", "images")
    DATA_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    ESCALATION_WAIT_S_FIELD_NUMBER: _ClassVar[int]
    OCR_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    filename: str
    page: int
    password: str
    wait: str
    escalation_wait_s: float
    ocr: str
    languages: _containers.RepeatedScalarFieldContainer[str]
    images: bool
    def __init__(self, data: _Optional[bytes] = ..., filename: _Optional[str] = ..., page: _Optional[int] = ..., password: _Optional[str] = ..., wait: _Optional[str] = ..., escalation_wait_s: _Optional[float] = ..., ocr: _Optional[str] = ..., languages: _Optional[_Iterable[str]] = ..., images: _Optional[bool] = ...) -> None: ...

class DocumentReply(_message.Message):
    __slots__ = ("document", "request_id")
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    document: Document
    request_id: str
    def __init__(self, document: _Optional[_Union[Document, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class PageReply(_message.Message):
    __slots__ = ("page", "request_id")
    PAGE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    page: Page
    request_id: str
    def __init__(self, page: _Optional[_Union[Page, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class StreamReply(_message.Message):
    __slots__ = ("page", "summary", "request_id")
    PAGE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    page: Page
    summary: Document
    request_id: str
    def __init__(self, page: _Optional[_Union[Page, _Mapping]] = ..., summary: _Optional[_Union[Document, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class BBox(_message.Message):
    __slots__ = ("x0", "y0", "x1", "y1")
    X0_FIELD_NUMBER: _ClassVar[int]
    Y0_FIELD_NUMBER: _ClassVar[int]
    X1_FIELD_NUMBER: _ClassVar[int]
    Y1_FIELD_NUMBER: _ClassVar[int]
    x0: float
    y0: float
    x1: float
    y1: float
    def __init__(self, x0: _Optional[float] = ..., y0: _Optional[float] = ..., x1: _Optional[float] = ..., y1: _Optional[float] = ...) -> None: ...

class Row(_message.Message):
    __slots__ = ("cells",)
    CELLS_FIELD_NUMBER: _ClassVar[int]
    cells: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cells: _Optional[_Iterable[str]] = ...) -> None: ...

class TriageDecision(_message.Message):
    __slots__ = ("scores", "reasons", "route", "script", "ocr_regions", "hidden_layer", "hidden_text")
    class ScoresEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    SCORES_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    ROUTE_FIELD_NUMBER: _ClassVar[int]
    SCRIPT_FIELD_NUMBER: _ClassVar[int]
    OCR_REGIONS_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_LAYER_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_TEXT_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.ScalarMap[str, float]
    reasons: _containers.RepeatedScalarFieldContainer[str]
    route: str
    script: str
    ocr_regions: _containers.RepeatedCompositeFieldContainer[BBox]
    hidden_layer: bool
    hidden_text: _containers.RepeatedCompositeFieldContainer[HiddenText]
    def __init__(self, scores: _Optional[_Mapping[str, float]] = ..., reasons: _Optional[_Iterable[str]] = ..., route: _Optional[str] = ..., script: _Optional[str] = ..., ocr_regions: _Optional[_Iterable[_Union[BBox, _Mapping]]] = ..., hidden_layer: _Optional[bool] = ..., hidden_text: _Optional[_Iterable[_Union[HiddenText, _Mapping]]] = ...) -> None: ...

class HiddenText(_message.Message):
    __slots__ = ("bbox", "text", "reason")
    BBOX_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    bbox: BBox
    text: str
    reason: str
    def __init__(self, bbox: _Optional[_Union[BBox, _Mapping]] = ..., text: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CheckResult(_message.Message):
    __slots__ = ("name", "passed", "score", "threshold", "reason", "regions")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    passed: bool
    score: float
    threshold: float
    reason: str
    regions: _containers.RepeatedCompositeFieldContainer[BBox]
    def __init__(self, name: _Optional[str] = ..., passed: _Optional[bool] = ..., score: _Optional[float] = ..., threshold: _Optional[float] = ..., reason: _Optional[str] = ..., regions: _Optional[_Iterable[_Union[BBox, _Mapping]]] = ...) -> None: ...

class Block(_message.Message):
    __slots__ = ("text", "role", "bbox", "page", "engine", "engine_version", "route", "confidence", "order", "level", "cells", "has_cells", "image", "witnesses", "furniture", "image_png_base64", "spans", "has_spans", "fields", "has_fields")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    BBOX_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_VERSION_FIELD_NUMBER: _ClassVar[int]
    ROUTE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    HAS_CELLS_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    WITNESSES_FIELD_NUMBER: _ClassVar[int]
    FURNITURE_FIELD_NUMBER: _ClassVar[int]
    IMAGE_PNG_BASE64_FIELD_NUMBER: _ClassVar[int]
    SPANS_FIELD_NUMBER: _ClassVar[int]
    HAS_SPANS_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    HAS_FIELDS_FIELD_NUMBER: _ClassVar[int]
    text: str
    role: str
    bbox: BBox
    page: int
    engine: str
    engine_version: str
    route: str
    confidence: float
    order: int
    level: int
    cells: _containers.RepeatedCompositeFieldContainer[Row]
    has_cells: bool
    image: str
    witnesses: _containers.RepeatedScalarFieldContainer[str]
    furniture: Decision
    image_png_base64: str
    spans: _containers.RepeatedCompositeFieldContainer[CellSpan]
    has_spans: bool
    fields: _containers.RepeatedCompositeFieldContainer[FormField]
    has_fields: bool
    def __init__(self, text: _Optional[str] = ..., role: _Optional[str] = ..., bbox: _Optional[_Union[BBox, _Mapping]] = ..., page: _Optional[int] = ..., engine: _Optional[str] = ..., engine_version: _Optional[str] = ..., route: _Optional[str] = ..., confidence: _Optional[float] = ..., order: _Optional[int] = ..., level: _Optional[int] = ..., cells: _Optional[_Iterable[_Union[Row, _Mapping]]] = ..., has_cells: _Optional[bool] = ..., image: _Optional[str] = ..., witnesses: _Optional[_Iterable[str]] = ..., furniture: _Optional[_Union[Decision, _Mapping]] = ..., image_png_base64: _Optional[str] = ..., spans: _Optional[_Iterable[_Union[CellSpan, _Mapping]]] = ..., has_spans: _Optional[bool] = ..., fields: _Optional[_Iterable[_Union[FormField, _Mapping]]] = ..., has_fields: _Optional[bool] = ...) -> None: ...

class CellSpan(_message.Message):
    __slots__ = ("row", "col", "rowspan", "colspan")
    ROW_FIELD_NUMBER: _ClassVar[int]
    COL_FIELD_NUMBER: _ClassVar[int]
    ROWSPAN_FIELD_NUMBER: _ClassVar[int]
    COLSPAN_FIELD_NUMBER: _ClassVar[int]
    row: int
    col: int
    rowspan: int
    colspan: int
    def __init__(self, row: _Optional[int] = ..., col: _Optional[int] = ..., rowspan: _Optional[int] = ..., colspan: _Optional[int] = ...) -> None: ...

class FormField(_message.Message):
    __slots__ = ("name", "type", "value", "bbox")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    BBOX_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    value: str
    bbox: BBox
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., value: _Optional[str] = ..., bbox: _Optional[_Union[BBox, _Mapping]] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("scores", "reasons")
    class ScoresEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    SCORES_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.ScalarMap[str, float]
    reasons: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, scores: _Optional[_Mapping[str, float]] = ..., reasons: _Optional[_Iterable[str]] = ...) -> None: ...

class Page(_message.Message):
    __slots__ = ("number", "status", "route", "triage", "rotation", "width", "height", "blocks", "checks", "flags", "error", "timings", "language")
    class TimingsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ROUTE_FIELD_NUMBER: _ClassVar[int]
    TRIAGE_FIELD_NUMBER: _ClassVar[int]
    ROTATION_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    number: int
    status: str
    route: str
    triage: TriageDecision
    rotation: int
    width: float
    height: float
    blocks: _containers.RepeatedCompositeFieldContainer[Block]
    checks: _containers.RepeatedCompositeFieldContainer[CheckResult]
    flags: _containers.RepeatedScalarFieldContainer[str]
    error: str
    timings: _containers.ScalarMap[str, float]
    language: str
    def __init__(self, number: _Optional[int] = ..., status: _Optional[str] = ..., route: _Optional[str] = ..., triage: _Optional[_Union[TriageDecision, _Mapping]] = ..., rotation: _Optional[int] = ..., width: _Optional[float] = ..., height: _Optional[float] = ..., blocks: _Optional[_Iterable[_Union[Block, _Mapping]]] = ..., checks: _Optional[_Iterable[_Union[CheckResult, _Mapping]]] = ..., flags: _Optional[_Iterable[str]] = ..., error: _Optional[str] = ..., timings: _Optional[_Mapping[str, float]] = ..., language: _Optional[str] = ...) -> None: ...

class Document(_message.Message):
    __slots__ = ("schema_version", "source", "page_count", "pages", "coordinate_origin", "engines")
    class EnginesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    COORDINATE_ORIGIN_FIELD_NUMBER: _ClassVar[int]
    ENGINES_FIELD_NUMBER: _ClassVar[int]
    schema_version: str
    source: str
    page_count: int
    pages: _containers.RepeatedCompositeFieldContainer[Page]
    coordinate_origin: str
    engines: _containers.ScalarMap[str, str]
    def __init__(self, schema_version: _Optional[str] = ..., source: _Optional[str] = ..., page_count: _Optional[int] = ..., pages: _Optional[_Iterable[_Union[Page, _Mapping]]] = ..., coordinate_origin: _Optional[str] = ..., engines: _Optional[_Mapping[str, str]] = ...) -> None: ...

class JobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class JobStatus(_message.Message):
    __slots__ = ("id", "source", "state", "pages_total", "pages_done", "pages_by_route", "pages_by_status", "errors", "created_at", "started_at", "finished_at", "updated_at", "runs", "owner")
    class PagesByRouteEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class PagesByStatusEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PAGES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    PAGES_DONE_FIELD_NUMBER: _ClassVar[int]
    PAGES_BY_ROUTE_FIELD_NUMBER: _ClassVar[int]
    PAGES_BY_STATUS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    id: str
    source: str
    state: str
    pages_total: int
    pages_done: int
    pages_by_route: _containers.ScalarMap[str, int]
    pages_by_status: _containers.ScalarMap[str, int]
    errors: _containers.RepeatedScalarFieldContainer[str]
    created_at: float
    started_at: float
    finished_at: float
    updated_at: float
    runs: int
    owner: str
    def __init__(self, id: _Optional[str] = ..., source: _Optional[str] = ..., state: _Optional[str] = ..., pages_total: _Optional[int] = ..., pages_done: _Optional[int] = ..., pages_by_route: _Optional[_Mapping[str, int]] = ..., pages_by_status: _Optional[_Mapping[str, int]] = ..., errors: _Optional[_Iterable[str]] = ..., created_at: _Optional[float] = ..., started_at: _Optional[float] = ..., finished_at: _Optional[float] = ..., updated_at: _Optional[float] = ..., runs: _Optional[int] = ..., owner: _Optional[str] = ...) -> None: ...

class JobReply(_message.Message):
    __slots__ = ("job", "request_id")
    JOB_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    job: JobStatus
    request_id: str
    def __init__(self, job: _Optional[_Union[JobStatus, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class JobResultReply(_message.Message):
    __slots__ = ("document", "partial", "job", "request_id")
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    document: Document
    partial: bool
    job: JobStatus
    request_id: str
    def __init__(self, document: _Optional[_Union[Document, _Mapping]] = ..., partial: _Optional[bool] = ..., job: _Optional[_Union[JobStatus, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...
