"""Rendering: Markdown and JSON output, tables as Markdown."""
