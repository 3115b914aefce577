"""Importing this module runs `pymupdf_setup.skip_pymupdf_layout()`: for a process start that can
only import modules, the isolation workers' fork server (its preload list, isolation/process.py).
A fork server runs nothing but those imports before it forks, and it is a process pagerouter
owns: listed before `pagerouter.isolation.worker`, this skips PyMuPDF's unused layout model
before the worker module imports pymupdf, and every worker it forks starts without it. It sits
here, not in `pagerouter.isolation`, because importing that package imports pymupdf already.
Imported nowhere else: importing pagerouter's other modules changes nothing in the process."""

from .pymupdf_setup import skip_pymupdf_layout

skip_pymupdf_layout()
