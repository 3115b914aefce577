"""Intake: reading input files, page selection, limits checked before work, the document filter."""
