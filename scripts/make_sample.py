"""Regenerate samples/mixed-sample.pdf, the README's demo input.

Five pages: a born-digital report page, a scanned letter (a picture of text, no text layer),
a scan with a hidden OCR layer that lies about what the picture shows, a two-column
born-digital page, and a blank page.   python scripts/make_sample.py
"""

from pathlib import Path

from pagerouter.bench.synth import make_mixed_sample

if __name__ == "__main__":
    out = Path(__file__).resolve().parent.parent / "samples" / "mixed-sample.pdf"
    out.parent.mkdir(exist_ok=True)
    make_mixed_sample(str(out))
    print(out)
