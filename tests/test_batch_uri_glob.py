"""A filesystem-URI glob (`s3://bucket/pdfs/**/*.pdf`) selects what the same glob selects
among local paths (`glob.glob(recursive=True)`): `**/` may be no folder at all, `*` stays in one
folder. Before, fnmatch let `*` cross folders and made `**/` need one, so the README's
`'s3://bucket/pdfs/**/*.pdf'` left out the PDFs directly in `pdfs/`."""

from __future__ import annotations

import glob

import pymupdf

from pagerouter.batch.fsio import glob_regex, plan_items

FILES = ["pdfs/a.pdf", "pdfs/sub/b.pdf", "pdfs/sub/deep/c.pdf", "pdfs/x.txt", "other/d.pdf", "pdfs/e.pdfx"]
PATTERNS = ["pdfs/**/*.pdf", "pdfs/*.pdf", "pdfs/*/*.pdf", "**/*.pdf", "pdfs/**", "pdfs/?.pdf", "pdfs/[ab].pdf",
            "pdfs/[!a].pdf", "pdfs/sub/**/*.pdf"]


def test_uri_globs_select_what_local_globs_select(tmp_path):
    for f in FILES:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes(b"x")
    for pat in PATTERNS:
        local = {p[len(str(tmp_path)) + 1:] for p in glob.glob(str(tmp_path / pat), recursive=True)
                 if (tmp_path / p).is_file()}
        ours = {f for f in FILES if glob_regex(pat).fullmatch(f)}
        assert ours == local, pat


def test_readme_bucket_glob_keeps_the_top_folder_files(tmp_path):
    for f in ("pdfs/a.pdf", "pdfs/sub/b.pdf"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        d = pymupdf.open()
        d.new_page()
        d.save(tmp_path / f)
    items = plan_items([(tmp_path / "pdfs").as_uri() + "/**/*.pdf"])
    assert sorted(str(i.rel) for i in items) == ["a", "sub/b"]  # the outputs: a.md, sub/b.md
