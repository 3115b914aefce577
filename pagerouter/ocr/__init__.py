"""The OCR path on CPU: rasterising, layout, small reader, orientation, tables, checks, vote.

Engines live one per file and are chosen by `kind` in `OcrConfig` (the registry is
`pagerouter.flow.engines`); `task.py` creates OCR work; `pipeline.ocr_flow` runs it. Nothing here
imports Ray.
"""
