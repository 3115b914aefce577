"""The OCR path on CPU: render, layout, small reader, orientation, tables, composition.

Engines live one per file and are chosen by `kind` in `OcrConfig`; `api.py` builds them and
composes the in-process path (`LocalOcr`). Nothing here imports Ray.
"""
