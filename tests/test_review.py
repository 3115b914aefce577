"""`pagerouter review`: the HTML review of a run (pagerouter/review/).

The fast tests read the written HTML and its embedded data; the slow ones drive the page in
real headless Chromium (Debian's /usr/bin/chromium through Playwright, never Playwright's own
browser download) and compare the drawn boxes with the JSON's bboxes.
"""

from __future__ import annotations

import base64
import concurrent.futures
import functools
import hashlib
import http.server
import json
import re
import threading
from html.parser import HTMLParser
from pathlib import Path

import pymupdf
import pytest

from pagerouter.bench.metrics import cost_per_million
from pagerouter.bench.synth import add_scanned_page, add_text_page
from pagerouter.cli.main import main
from pagerouter.config import load_config
from pagerouter.config.bench import BenchConfig
from pagerouter.convert.converter import Converter
from pagerouter.model import Attempt, Block, CheckResult, Document, Page
from pagerouter.render.escape import unescape
from pagerouter.render.output import to_json
from pagerouter.isolation import FAULT_ENV
from pagerouter.review import REVIEW_CSP, review_html
from pagerouter.review.html_writer import embed_json, review_data, run_documents
from pagerouter.review.run_folder import load_run

HOSTILE = ["<script>alert(1)</script>", "javascript:alert(2)", "</script><img src=x onerror=alert(3)>"]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FAST = {"ocr": {"enabled": False}, "isolation": {"enabled": False}}  # text-layer pages; scans come out needs_ocr


def _off_loop(fn, *args):
    """Run `fn` in a worker thread: Playwright's sync API keeps an asyncio loop running on this
    thread, and the converter runs its own (asyncio.run)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def _convert(pdf: Path, out: Path, overrides: dict = FAST) -> Path:
    """Convert `pdf` in this process and write OUT/<stem>.json, as `convert -o` does."""
    conv = Converter(load_config(overrides=overrides))
    try:
        doc = conv.convert(pdf)
    finally:
        conv.close()
    out.mkdir(parents=True, exist_ok=True)
    target = out / (pdf.stem + ".json")
    target.write_text(to_json(doc), encoding="utf-8")
    return target


def _hostile_run(tmp_path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    for i, text in enumerate(HOSTILE):
        page.insert_text((60, 100 + 40 * i), text, fontsize=12)
    page.insert_link({"kind": pymupdf.LINK_URI, "from": pymupdf.Rect(60, 80, 200, 110), "uri": "javascript:alert(4)"})
    pdf = tmp_path / "hostile.pdf"
    doc.save(pdf)
    _convert(pdf, tmp_path / "run")
    return tmp_path / "run"


def _generated_run(folder: Path, pages: int) -> Path:
    """A run of `pages` born-digital pages; every 20th (from the 8th) a scan that comes out
    flagged `needs_ocr` (OCR off), and page 4 carries white-on-white text."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = pymupdf.open()
    for i in range(pages):
        if i % 20 == 7:
            add_scanned_page(doc, [f"Scanned page {i + 1}", "a picture of text"])
        else:
            add_text_page(doc, [f"Page {i + 1} says hello. " * 8, "Second paragraph of the generated run."],
                          title=f"Section {i + 1}", header="generated run", footer=f"{i + 1}")
        if i == 3:
            doc[-1].insert_text((60, 700), "secret white text nobody sees", fontsize=11, color=(1, 1, 1))
    pdf = folder / "generated.pdf"
    doc.save(pdf)
    _convert(pdf, folder)
    return folder


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.data: dict[str, str] = {}
        self._open: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._open = dict(attrs).get("id") or tag

    def handle_data(self, data):
        if self._open:
            self.data[self._open] = self.data.get(self._open, "") + data

    def handle_endtag(self, tag):
        self._open = None


def _parse(html: str) -> _Tags:
    p = _Tags()
    p.feed(html)
    return p


# ---------------------------------------------------------------------- the HTML itself
def test_pdf_text_is_data_never_markup(tmp_path):
    run = _hostile_run(tmp_path)
    html = review_html(run)
    parsed = _parse(html)
    assert [t for t, _ in parsed.tags if t == "script"] == ["script", "script"]  # the data block and the app
    assert not [t for t, _ in parsed.tags if t in ("a", "img", "iframe", "object", "embed", "form")]
    for _, attrs in parsed.tags:
        assert not any("javascript:" in (v or "") for v in attrs.values())
    data_text = parsed.data["review-data"]
    assert "<" not in data_text and ">" not in data_text  # nothing in the block can close it or open a tag
    assert "alert(1)" in data_text  # the text is there, as data
    data = json.loads(data_text)
    shown = " ".join(b["text"] for p in data["pages"] for b in p["blocks"]) + data["pages"][0]["markdown"]
    for text in HOSTILE[:2]:
        assert text in shown  # round-trips verbatim, for the script to show as text


def test_embedded_json_cannot_end_its_script_block():
    tricky = {"s": "</script><!-- \u2028 \u2029 & <b>", "n": [1.5, None]}
    text = embed_json(tricky)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == tricky


def test_csp_allows_exactly_the_inline_script_and_style(tmp_path):
    html = review_html(_hostile_run(tmp_path))
    script = re.search(r"<script>(.*?)</script>", html, re.DOTALL).group(1)
    style = re.search(r"<style>(.*?)</style>", html, re.DOTALL).group(1)

    def sha(text):
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert f"script-src {sha(script)};" in REVIEW_CSP
    assert f"style-src {sha(style)};" in REVIEW_CSP
    assert "unsafe-inline" not in REVIEW_CSP and "default-src 'none'" in REVIEW_CSP
    meta = [a for t, a in _parse(html).tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert meta and REVIEW_CSP.startswith(meta[0]["content"])


def test_every_block_gets_a_record_with_its_box_and_problem_pages_lead(tmp_path):
    run = _generated_run(tmp_path / "run", 30)
    docs = load_run(run)
    data = review_data(docs)
    pages = docs[0].doc.pages
    assert [(p["n"], len(p["blocks"])) for p in data["pages"]] == [(p.number, len(p.blocks)) for p in pages]
    for rec, page in zip(data["pages"], pages):
        assert [b["bbox"] for b in rec["blocks"]] == [[round(v, 2) for v in b.bbox] for b in page.blocks]
    assert [p["n"] for p in data["pages"] if p["status"] == "flagged"] == [8, 28]
    assert data["pages"][3]["hidden"][0]["text"] == "secret white text nobody sees"
    assert any(b["furniture"] for b in data["pages"][0]["blocks"])  # the running header, shown as such


def test_summary_counts_routes_flags_and_cost(tmp_path):
    run = _generated_run(tmp_path / "run", 30)
    doc = load_run(run)[0].doc
    prices = BenchConfig(cpu_core_hour_usd=0.5, gpu_hour_usd=2.0)
    s = review_data(load_run(run), prices=prices)["summary"]
    assert s["pages"] == 30 and s["status"] == {"ok": 28, "flagged": 2, "failed": 0}
    assert {r["route"]: r["pages"] for r in s["routes"]} == {"text_layer": 28, "ocr": 2}
    assert s["flags"] == {"needs_ocr": 2}
    seconds = sum(sum(p.timings.values()) for p in doc.pages)
    assert s["usd_per_million"] == pytest.approx(cost_per_million(seconds, 0.0, 30, prices), abs=0.01)


def test_review_command(tmp_path, capsys):
    assert main(["review", str(tmp_path / "nowhere")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["review", str(tmp_path / "empty")]) == 2
    run = _generated_run(tmp_path / "run", 3)
    assert main(["review", str(run)]) == 0  # the source sits beside the JSON: images rendered
    images = sorted((run / "review-images" / "generated").glob("p*.jpg"))
    assert [p.name for p in images] == ["p0001.jpg", "p0002.jpg", "p0003.jpg"]
    data = json.loads(_parse((run / "review.html").read_text()).data["review-data"])
    assert [p["image"] for p in data["pages"]] == [f"review-images/generated/p000{i}.jpg" for i in (1, 2, 3)]
    html = tmp_path / "elsewhere" / "r.html"
    assert main(["review", str(run), "-o", str(html), "--images", "embed"]) == 0
    data = json.loads(_parse(html.read_text()).data["review-data"])
    assert all(p["image"].startswith("data:image/jpeg;base64,") for p in data["pages"])
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "generated.json").write_bytes((run / "generated.json").read_bytes())
    assert main(["review", str(moved)]) == 0
    assert "pass --pdf-dir DIR" in capsys.readouterr().err
    assert main(["review", str(moved), "--pdf-dir", str(run), "-q"]) == 0
    assert len(list((moved / "review-images" / "generated").glob("p*.jpg"))) == 3


def test_page_images_render_in_isolation_workers(tmp_path, monkeypatch, capsys):
    """The source PDF is untrusted: the review renders its pages in isolation workers, so a
    MuPDF crash there (a real SIGSEGV, injected in the worker's render) costs the pictures and
    leaves this process, the review and its exit code standing."""
    run = _generated_run(tmp_path / "run", 2)
    monkeypatch.setenv(FAULT_ENV, "segv@figures")
    assert main(["review", str(run)]) == 0  # a process that rendered here would have died
    assert not list((run / "review-images").rglob("*.jpg"))
    data = json.loads(_parse((run / "review.html").read_text()).data["review-data"])
    assert [p["n"] for p in data["pages"]] == [1, 2] and not any(p["image"] for p in data["pages"])
    assert "0 with an image" in capsys.readouterr().err
    monkeypatch.delenv(FAULT_ENV)
    assert main(["review", str(run), "-q"]) == 0
    assert len(list((run / "review-images" / "generated").glob("p*.jpg"))) == 2


def test_batch_journal_names_the_sources(tmp_path):
    run = _generated_run(tmp_path / "elsewhere", 2)
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "x.json").write_bytes((run / "generated.json").read_bytes())
    (out / "pagerouter-batch.summary.json").write_text("{}")
    record = {"v": 1, "input": str(run / "generated.pdf"), "rel": "sub/x", "status": "done"}
    (out / "pagerouter-batch.journal.jsonl").write_text(json.dumps(record) + "\n{torn", encoding="utf-8")
    docs = load_run(out)
    assert [(d.rel, d.source) for d in docs] == [("sub/x", run / "generated.pdf")]
    assert main(["review", str(out), "-q"]) == 0
    assert sorted(p.name for p in (out / "review-images" / "sub" / "x").iterdir()) == ["p0001.jpg", "p0002.jpg"]


# ---------------------------------------------------------------------- in the browser
@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    pg = context.new_page()
    pg.problems = []
    pg.on("pageerror", lambda e: pg.problems.append(f"error: {e}"))
    pg.on("console", lambda m: pg.problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    pg.on("dialog", lambda d: (pg.problems.append(f"dialog: {d.message}"), d.dismiss()))
    yield pg
    context.close()


def _open(pg, url: str) -> None:
    pg.goto(url)
    pg.wait_for_selector("body[data-ready='1']", timeout=10_000)


_GEOMETRY = """() => Array.from(document.querySelectorAll('article.card')).map(card => {
  const box = card.querySelector('.pagebox'), r = box.getBoundingClientRect();
  return {doc: +card.dataset.doc, page: +card.dataset.page, status: card.dataset.status, route: card.dataset.route,
    left: r.left + box.clientLeft, top: r.top + box.clientTop, width: box.clientWidth, height: box.clientHeight,
    boxes: Array.from(card.querySelectorAll('[data-block]')).map(b => {
      const q = b.getBoundingClientRect();
      return {key: b.dataset.block, x0: q.left, y0: q.top, x1: q.right, y1: q.bottom};
    })};
})"""


def _assert_boxes_match_json(pg, docs) -> int:
    """Every card draws one box per block of its page, at the JSON's bbox (scaled to the
    drawn page, 1.5 px slack; boxes have a 3 px minimum size). Returns the boxes checked."""
    checked = 0
    for card in pg.evaluate(_GEOMETRY):
        p = next(p for p in docs[card["doc"]].doc.pages if p.number == card["page"])
        assert [b["key"] for b in card["boxes"]] == [f"{p.number}:{i}" for i in range(len(p.blocks))]
        if not p.blocks:
            continue
        sx, sy = card["width"] / p.width, card["height"] / p.height
        for drawn, block in zip(card["boxes"], p.blocks):
            x0, y0, x1, y1 = block.bbox
            want = (card["left"] + x0 * sx, card["top"] + y0 * sy,
                    card["left"] + x0 * sx + max((x1 - x0) * sx, 3), card["top"] + y0 * sy + max((y1 - y0) * sy, 3))
            got = (drawn["x0"], drawn["y0"], drawn["x1"], drawn["y1"])
            assert got == pytest.approx(want, abs=1.5), (drawn["key"], got, want)
            checked += 1
    return checked


@pytest.mark.slow
def test_browser_sample_review(repo_root, tmp_path, page):
    out = tmp_path / "sample"
    assert _off_loop(main, ["convert", str(repo_root / "samples" / "mixed-sample.pdf"), "-o", str(out), "--review", "-q"]) == 0
    docs = load_run(out)
    _open(page, (out / "review.html").as_uri())
    cards = page.locator("article.card")
    assert cards.count() == 5
    rank = {"flagged": 0, "failed": 1, "ok": 2}
    statuses = [c["status"] for c in page.evaluate(_GEOMETRY)]
    assert statuses == sorted(statuses, key=rank.get)
    assert _assert_boxes_match_json(page, docs) == sum(len(p.blocks) for p in docs[0].doc.pages)
    assert page.evaluate("() => document.querySelector('article[data-page=\"2\"] img').complete")
    assert page.evaluate("() => document.querySelector('article[data-page=\"1\"] img').naturalWidth") > 0
    block = docs[0].doc.pages[1].blocks[0]  # page 2 is a scan: its text came from OCR
    card = page.locator("article[data-page='2']")
    card.locator("[data-block='2:0']").click()
    assert card.locator(".detail-engine").text_content().startswith(block.engine)
    assert card.locator(".detail-text").text_content() == block.text
    assert card.locator(".detail-role").text_content() == block.role
    page.screenshot(path=str(tmp_path / "sample.png"), full_page=True)
    page.select_option("#filter-route", "ocr")
    geometry = page.evaluate(_GEOMETRY)
    assert [(c["page"], c["route"]) for c in geometry] == [(2, "ocr"), (3, "ocr")]
    _assert_boxes_match_json(page, docs)
    page.screenshot(path=str(tmp_path / "sample-ocr.png"))
    assert (tmp_path / "sample.png").stat().st_size > 10_000
    assert not page.problems, page.problems


@pytest.mark.slow
def test_browser_200_page_run(tmp_path, page):
    run = _off_loop(_generated_run, tmp_path / "run", 200)
    assert _off_loop(main, ["review", str(run), "-q"]) == 0
    docs = load_run(run)
    flagged = [p.number for p in docs[0].doc.pages if p.status == "flagged"]
    assert len(flagged) == 10
    _open(page, (run / "review.html").as_uri())
    assert page.locator("#position").text_content() == "pages 1\u201320 of 200"
    geometry = page.evaluate(_GEOMETRY)
    assert len(geometry) == 20  # only the visible list page is in the DOM
    assert [c["page"] for c in geometry[:10]] == flagged and {c["status"] for c in geometry[:10]} == {"flagged"}
    assert {c["status"] for c in geometry[10:]} == {"ok"}
    _assert_boxes_match_json(page, docs)
    page.screenshot(path=str(tmp_path / "run-first.png"))

    # keyboard: j walks the flagged pages in order, k walks back
    page.locator("body").press("j")
    assert page.evaluate("() => document.activeElement.dataset.page") == str(flagged[0])
    page.keyboard.press("j")
    assert page.evaluate("() => document.activeElement.dataset.page") == str(flagged[1])
    page.keyboard.press("k")
    assert page.evaluate("() => document.activeElement.dataset.page") == str(flagged[0])

    page.select_option("#filter-route", "text_layer")
    assert page.locator("#position").text_content() == "pages 1\u201320 of 190 (filtered from 200)"
    assert {c["route"] for c in page.evaluate(_GEOMETRY)} == {"text_layer"}
    card = page.locator("article[data-page='4']")
    block = docs[0].doc.pages[3].blocks[1]
    card.locator("[data-block='4:1']").click()
    assert card.locator(".detail-engine").text_content().startswith("pymupdf")
    assert card.locator(".detail-text").text_content() == block.text
    assert card.locator("[data-hidden='4:0']").count() == 1  # the white text, drawn as hidden text
    card.locator("[data-hidden='4:0']").click(force=True)
    assert card.locator(".detail-text").text_content() == "secret white text nobody sees"
    assert page.locator("article[data-page='1'] .box.furniture").count() >= 1
    before = card.locator("[data-block='4:1']").evaluate("b => b.style.getPropertyValue('--c')")
    page.check("#colour-engine")
    after = card.locator("[data-block='4:1']").evaluate("b => b.style.getPropertyValue('--c')")
    assert before and after and before != after
    page.click("#next")
    assert page.locator("#position").text_content() == "pages 21\u201340 of 190 (filtered from 200)"
    _assert_boxes_match_json(page, docs)
    page.screenshot(path=str(tmp_path / "run-text-layer.png"))
    assert not page.problems, page.problems


@pytest.mark.slow
def test_browser_shows_hostile_text_as_text(tmp_path, page):
    run = _off_loop(_hostile_run, tmp_path)
    assert _off_loop(main, ["review", str(run), "-q"]) == 0
    _open(page, (run / "review.html").as_uri())
    card = page.locator("article.card")
    md = card.locator("pre.markdown").text_content()
    # the Markdown shown is the output's, the page text escaped (render/escape.py): a Markdown
    # reader sees the text itself, and `<script>` is no tag there either
    assert "\\<script>alert(1)\\</script>" in md
    for text in HOSTILE[:2]:
        assert text in unescape(md)
    n = page.locator("[data-block]").count()
    assert n >= 2
    texts = []
    for i in range(n):
        card.locator(f"[data-block='1:{i}']").click()
        texts.append(card.locator(".detail-text").text_content())
    assert any("<script>alert(1)</script>" in t for t in texts)
    assert page.locator("script").count() == 2 and page.locator("a").count() == 0
    assert page.locator("img[onerror], [src^='x']").count() == 0
    assert page.evaluate("""() => Array.from(document.querySelectorAll('*')).every(e =>
        Array.from(e.attributes).every(a => !/^\\s*javascript:/i.test(a.value)))""")
    assert not page.problems, page.problems  # no alert() dialog, no error


def _ladder_document():
    """A document as the JSON would hold it after the VLM ladder ran: page 1 ok, page 2 flagged
    with two rejected rungs, one accepted, and ink no block covers, page 3 failed before triage."""
    block = Block(text="Read by the escalation tier", role="paragraph", bbox=(50, 60, 300, 90), page=2,
                  engine="vllm / olmOCR", route="escalation", confidence=0.8)
    rung = dict(tier="escalation", engine="vllm / olmOCR", temperature=0.0, prompt_tokens=10, completion_tokens=5)
    return Document(source="ladder.pdf", page_count=3, pages=[
        Page(number=1, status="ok", route="text_layer", width=200, height=300, blocks=[
            Block(text="fine", role="paragraph", bbox=(10, 10, 100, 30), page=1, engine="pymupdf", route="text_layer",
                  confidence=1.0)]),
        Page(number=2, status="flagged", route="ocr", width=400, height=500, flags=["unread_ink", "vlm_retries"],
             blocks=[block],
             checks=[CheckResult(name="unread_ink", passed=False, reason="2 rows of ink", regions=[(40, 300, 200, 320),
                                                                                                 (40, 340, 220, 360)])],
             attempts=[Attempt(number=1, finish_reason="length", accepted=False, seconds=2.0,
                               rejected_because=["vlm_truncated: hit max_tokens 4096"], **rung),
                       Attempt(number=2, finish_reason="stop", accepted=False, seconds=1.5,
                               rejected_because=["repetition_line: 0.6 > 0.3"], **rung),
                       Attempt(number=3, finish_reason="stop", accepted=True, seconds=1.0, **rung)]),
        Page(number=3, status="failed", route=None, error="ladder.pdf: page 3: reading failed: broken"),
    ])


def test_ladder_ink_and_failed_pages_in_the_data():
    data = review_data(run_documents([_ladder_document()]))
    assert [p["status"] for p in data["pages"]] == ["ok", "flagged", "failed"]
    flagged = data["pages"][1]
    assert flagged["ink"] == [[40, 300, 200, 320], [40, 340, 220, 360]]
    assert [a["rejected_because"] for a in flagged["attempts"]] == [
        ["vlm_truncated: hit max_tokens 4096"], ["repetition_line: 0.6 > 0.3"], []]
    assert data["pages"][2]["route"] == "failed" and data["summary"]["status"]["failed"] == 1
    assert data["summary"]["gpu_seconds"] == pytest.approx(4.5)


@pytest.mark.slow
def test_browser_ladder_ink_and_failed_pages(tmp_path, page):
    html = tmp_path / "review.html"
    html.write_text(review_html([_ladder_document()]), encoding="utf-8")
    _open(page, html.as_uri())
    assert [c["status"] for c in page.evaluate(_GEOMETRY)] == ["flagged", "failed", "ok"]
    card = page.locator("article[data-page='2']")
    assert card.locator("[data-ink]").count() == 2
    rows = card.locator("table.ladder tr").all_text_contents()[1:]
    assert len(rows) == 3 and "vlm_truncated: hit max_tokens 4096" in rows[0] and "repetition_line" in rows[1]
    assert card.locator("table.ladder tr.accepted").count() == 1
    card.locator("[data-block='2:0']").click()
    assert card.locator(".detail-engine").text_content() == "vllm / olmOCR"
    assert "3 VLM attempt(s) at this page, 1 accepted" in card.locator(".detail-attempts").text_content()
    assert page.locator("article[data-page='3'] pre.error").text_content().endswith("reading failed: broken")
    _assert_boxes_match_json(page, run_documents([_ladder_document()]))
    page.screenshot(path=str(tmp_path / "ladder.png"), full_page=True)
    assert not page.problems, page.problems


class _CspHandler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        if self.path.endswith(".html"):
            self.send_header("Content-Security-Policy", REVIEW_CSP)
        super().end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.slow
def test_browser_review_works_under_its_csp(tmp_path, page):
    run = _off_loop(_generated_run, tmp_path / "run", 25)
    assert _off_loop(main, ["review", str(run), "-q"]) == 0
    assert _off_loop(main, ["review", str(run), "-q", "-o", str(run / "embedded.html"), "--images", "embed"]) == 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_CspHandler, directory=str(run)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        response = page.goto(f"http://127.0.0.1:{server.server_address[1]}/review.html")
        assert response.headers["content-security-policy"] == REVIEW_CSP
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)  # the script ran: its hash is allowed
        assert page.locator("article.card").count() == 20
        assert page.evaluate("() => getComputedStyle(document.querySelector('article.card')).borderLeftWidth") == "6px"
        page.wait_for_function("() => document.querySelector('article.card img').naturalWidth > 0", timeout=10_000)
        assert _assert_boxes_match_json(page, load_run(run)) > 0
        page.screenshot(path=str(tmp_path / "served.png"))
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/embedded.html")  # data: URI images, one file
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        page.wait_for_function("() => document.querySelector('article.card img').naturalWidth > 0", timeout=10_000)
        assert page.evaluate("() => document.querySelector('article.card img').src.startsWith('data:image/jpeg')")
    finally:
        server.shutdown()
        server.server_close()
    assert not page.problems, page.problems  # a CSP violation logs a console error
