"""The in-process converter: open a document, walk its pages, read, escalate, render."""
