"""Pages for the triage tests: healthy layers in several scripts and the ways text layers lie.

Each builder returns PDF bytes of a one-page document, built with PyMuPDF (and, for broken
Unicode maps, by rewriting the font's ToUnicode stream at the object level, the way broken
producers leave them).
"""

from __future__ import annotations

import io

import numpy as np
import pymupdf

from pagerouter.bench import synth

EN = synth.LOREM
DE = (
    "Die Überprüfung der Geschäftsberichte ergab, dass die meisten Schriftstücke im Archiv digital "
    "erstellt worden waren. Für gescannte Briefe war jedoch eine Texterkennung nötig, und einige Dateien "
    "enthielten eine versteckte Textschicht, die überhaupt nicht zu den gedruckten Wörtern passte."
)
RU = (
    "Комитет рассмотрел квартальные показатели и согласился, что новая политика маршрутизации снизила "
    "стоимость чтения каждой страницы. Большинство документов в архиве были созданы в цифровом виде, "
    "поэтому их встроенный текст можно было использовать напрямую."
)
ZH = (
    "委员会审查了季度数据，并同意新的路由策略降低了阅读每一页的成本。档案中的大多数文件都是数字化生成的，"
    "因此可以直接使用其嵌入的文本。然而，扫描的信件需要光学字符识别，少数文件带有与印刷文字完全不符的隐藏文本层。"
)
AR = (
    "راجعت اللجنة الأرقام الفصلية واتفقت على أن سياسة التوجيه الجديدة خفضت تكلفة قراءة كل صفحة. "
    "معظم الوثائق في الأرشيف كانت رقمية، لذلك يمكن استخدام نصها المضمن مباشرة. أما الرسائل الممسوحة "
    "ضوئيا فقد احتاجت إلى التعرف الضوئي على الحروف."
)


def _bytes(doc: pymupdf.Document) -> bytes:
    return doc.tobytes(garbage=3, deflate=True)


def text_pdf(paragraphs: list[str], **kw) -> bytes:
    doc = pymupdf.open()
    synth.add_text_page(doc, paragraphs, **kw)
    return _bytes(doc)


def lines_pdf(lines: list[str], fontname: str = "helv", fontfile: str | None = None, fontsize: float = 11) -> bytes:
    """A born-digital page of the given lines, exactly as given (no wrapping or font choice)."""
    doc = pymupdf.open()
    page = doc.new_page(width=synth.A4[0], height=synth.A4[1])
    y = 80.0
    for line in lines:
        page.insert_text((56, y), line, fontsize=fontsize, fontname=fontname, fontfile=fontfile)
        y += fontsize * 1.5
    return _bytes(doc)


def wrap(text: str, width: int = 80) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width)


def shift_letters(text: str, k: int) -> str:
    """A shifted letter map: each ASCII letter moved k places (a broken font encoding)."""
    out = []
    for c in text:
        if "a" <= c <= "z":
            out.append(chr((ord(c) - 97 + k) % 26 + 97))
        elif "A" <= c <= "Z":
            out.append(chr((ord(c) - 65 + k) % 26 + 65))
        else:
            out.append(c)
    return "".join(out)


def broken_map_pdf(lines: list[str], how: str) -> bytes:
    """A DejaVu (Type0, Identity-H) page whose ToUnicode map is broken.

    how = "strip": no ToUnicode at all (MuPDF falls back to raw glyph ids: control codes and
    shifted letters); "pua": letters map to private-use code points; "fffd": letters map to
    U+FFFD."""
    doc = pymupdf.open("pdf", lines_pdf(lines, "dejavu", synth.DEJAVU))
    if how == "strip":
        for xref in range(1, doc.xref_length()):
            if doc.xref_get_key(xref, "ToUnicode")[0] == "xref":
                doc.xref_set_key(xref, "ToUnicode", "null")
    else:
        synth.remap_tounicode(
            doc, lambda u: (chr(0xE000 + (ord(u) % 0x1000)) if how == "pua" else "\ufffd") if u.isalpha() else u
        )
    return _bytes(doc)


def scan_pdf(lines: list[str], hidden_text: str | None = None, header: str | None = None, page_no: str | None = None) -> bytes:
    """A scan (one full-page picture of text), optionally with an invisible OCR layer and/or a
    visible text header and page number on top (what some scanners stamp)."""
    doc = pymupdf.open()
    synth.add_scanned_page(doc, lines, hidden_text=hidden_text, noise=0.02, dpi=150)
    page = doc[0]
    if header:
        page.insert_text((60, 30), header, fontsize=9)
    if page_no:
        page.insert_text((page.rect.width / 2, page.rect.height - 20), page_no, fontsize=9)
    return _bytes(doc)


def text_under_scan_pdf(lines: list[str], layer_text: list[str]) -> bytes:
    """Visible-mode text painted first, then a full-page scan over it (text hidden under it)."""
    doc = pymupdf.open()
    page = doc.new_page(width=synth.A4[0], height=synth.A4[1])
    y = 72.0
    for line in layer_text:
        page.insert_text((60, y), line, fontsize=12)
        y += 19
    page.insert_image(page.rect, stream=synth.text_image(lines, dpi=150))
    return _bytes(doc)


def _png(gray: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(gray).save(buf, format="PNG")
    return buf.getvalue()


def photo_png(w: int = 600, h: int = 400, seed: int = 1) -> bytes:
    """A photo-like picture without text: smooth gradients plus soft blobs and mild noise."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = 90 + 80 * xx / w + 40 * np.sin(yy / h * 3.1)
    for _ in range(6):
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(40, 120)
        img -= 60 * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
    img += rng.normal(0, 3, img.shape)
    return _png(np.clip(img, 0, 255).astype(np.uint8))


PICTURE_RECT = (56.0, 430.0, 416.0, 640.0)


def page_with_picture_pdf(picture: bytes, rect=PICTURE_RECT, rotate: int = 0) -> bytes:
    """A born-digital page of healthy text with one picture placed at `rect`."""
    doc = pymupdf.open()
    page = doc.new_page(width=synth.A4[0], height=synth.A4[1])
    y = 80.0
    for line in wrap(EN + " " + EN, 90)[:16]:
        page.insert_text((56, y), line, fontsize=10)
        y += 15
    page.insert_image(pymupdf.Rect(rect), stream=picture)
    y = rect[3] + 30
    for line in wrap(EN, 90):
        page.insert_text((56, y), line, fontsize=10)
        y += 15
    if rotate:
        page.set_rotation(rotate)
    return _bytes(doc)


def text_picture_png() -> bytes:
    """A picture holding several lines of text (a screenshot or a scanned snippet)."""
    lines = [
        "Table 3: results by region",
        "North   1,204   12.5%",
        "South     988    9.1%",
        "East    1,377   14.0%",
        "West      742    7.7%",
        "Source: internal survey, 2024",
    ]
    return synth.text_image(lines, size=(360, 210), dpi=150, fontsize=12)


def white_text_pdf() -> bytes:
    """Text drawn in white on a white page: the layer says what the page does not show."""
    doc = pymupdf.open()
    page = doc.new_page(width=synth.A4[0], height=synth.A4[1])
    y = 80.0
    for line in wrap(EN + " " + EN, 90):
        page.insert_text((56, y), line, fontsize=10, color=(1, 1, 1))
        y += 15
    return _bytes(doc)


def outlined_text_pdf(stamp: str = "Page 7 of the annual report") -> bytes:
    """Body text drawn as vector outlines (no text layer for it), plus a small real text stamp."""
    src = pymupdf.open()
    synth.add_text_page(src, [EN, EN], title="Outlined")
    svg = src[0].get_svg_image(text_as_path=True)
    drawn = pymupdf.open("pdf", pymupdf.open("svg", svg.encode()).convert_to_pdf())
    doc = pymupdf.open()
    page = doc.new_page(width=synth.A4[0], height=synth.A4[1])
    page.show_pdf_page(page.rect, drawn, 0)
    page.insert_text((56, 30), stamp, fontsize=9)
    return _bytes(doc)


def blank_pdf() -> bytes:
    doc = pymupdf.open()
    synth.add_blank_page(doc)
    return _bytes(doc)


# --- nearly empty scans: content that is small, and emptiness that is not white ---------------


def _scan_page_pdf(gray: np.ndarray) -> bytes:
    """A page that is one full-page scan image (A4) of the given grey pixels."""
    doc = pymupdf.open()
    page = doc.new_page(width=synth.A4[0], height=synth.A4[1])
    page.insert_image(page.rect, stream=_png(gray))
    return _bytes(doc)


def _scan_gray(dpi: int, *, noise: float = 0.0, base: float = 255.0, seed: int = 0) -> np.ndarray:
    w, h = round(synth.A4[0] / 72 * dpi), round(synth.A4[1] / 72 * dpi)
    img = np.full((h, w), base, dtype=np.float32)
    if noise:
        img += np.random.default_rng(seed).normal(0, 255 * noise, img.shape)
    return img


def one_line_scan_pdf(dpi: int) -> bytes:
    """A scan showing one short line of text and nothing else."""
    doc = pymupdf.open()
    synth.add_scanned_page(doc, ["A scanned page with text only in the picture."], dpi=dpi)
    return _bytes(doc)


def stamp_scan_pdf(word: str = "PAID", dpi: int = 100, frame: bool = True, fontsize: float = 14) -> bytes:
    """A noisy empty scan with a small rubber stamp (one short word, optionally framed) near a corner."""
    src = pymupdf.open()
    pg = src.new_page(width=synth.A4[0], height=synth.A4[1])
    x, y = synth.A4[0] - 120, synth.A4[1] - 80
    if frame:
        pg.draw_rect(pymupdf.Rect(x - 6, y - 16, x + 52, y + 6), color=(0, 0, 0), width=1.5)
    pg.insert_text((x, y), word, fontsize=fontsize, fontname="hebo")
    pix = pg.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    stamp = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width).astype(np.float32)
    img = _scan_gray(dpi, noise=0.03) - (255.0 - stamp[: round(synth.A4[1] / 72 * dpi), : round(synth.A4[0] / 72 * dpi)])
    return _scan_page_pdf(np.clip(img, 0, 255).astype(np.uint8))


def noisy_empty_scan_pdf(dpi: int = 100, noise: float = 0.05) -> bytes:
    """An empty page through a noisy scanner: grain plus a few dust specks."""
    img = _scan_gray(dpi, noise=noise)
    rng = np.random.default_rng(7)
    for _ in range(40):  # dust: 1-2 pixel dark specks
        yy, xx = rng.integers(20, img.shape[0] - 20), rng.integers(20, img.shape[1] - 20)
        img[yy : yy + rng.integers(1, 3), xx : xx + rng.integers(1, 3)] = 40
    return _scan_page_pdf(np.clip(img, 0, 255).astype(np.uint8))


def edge_shadow_scan_pdf(dpi: int = 100, width: float = 0.06, noise: float = 0.03) -> bytes:
    """An empty scan with a dark shadow along the left and top edges (book gutter, lid gap) on
    light grey paper."""
    img = _scan_gray(dpi, noise=noise, base=225.0)
    h, w = img.shape
    band = int(width * w)
    ramp = np.linspace(200.0, 0.0, band)[None, :]  # darkest at the edge, fading inwards
    img[:, :band] -= ramp
    img[: band // 2, :] -= np.linspace(150.0, 0.0, band // 2)[:, None]
    return _scan_page_pdf(np.clip(img, 0, 255).astype(np.uint8))


def grey_empty_scan_pdf(dpi: int = 100) -> bytes:
    """An empty page scanned as uniform mid-grey (tinted paper, dark scanner setting)."""
    return _scan_page_pdf(np.clip(_scan_gray(dpi, noise=0.02, base=140.0), 0, 255).astype(np.uint8))


# --- healthy text per script for the character-model checks (several sentences each) -------
# Written for these tests; the garbage variants below are built from these same texts.
EL = (
    "Η επιτροπή εξέτασε τα τριμηνιαία στοιχεία και συμφώνησε ότι η νέα πολιτική δρομολόγησης μείωσε "
    "το κόστος ανάγνωσης κάθε σελίδας. Τα περισσότερα έγγραφα του αρχείου δημιουργήθηκαν ψηφιακά, "
    "γι' αυτό το ενσωματωμένο κείμενό τους μπορεί να χρησιμοποιηθεί απευθείας. Οι σαρωμένες επιστολές "
    "όμως χρειάστηκαν οπτική αναγνώριση χαρακτήρων."
)
HE = (
    "הוועדה בחנה את הנתונים הרבעוניים והסכימה שמדיניות הניתוב החדשה הפחיתה את עלות הקריאה של כל עמוד. "
    "רוב המסמכים בארכיון נוצרו באופן דיגיטלי, ולכן אפשר להשתמש ישירות בטקסט המוטמע בהם. "
    "המכתבים הסרוקים, לעומת זאת, נזקקו לזיהוי תווים אופטי, ובכמה קבצים נמצאה שכבת טקסט נסתרת."
)
HI = (
    "समिति ने तिमाही आंकड़ों की समीक्षा की और सहमति व्यक्त की कि नई नीति ने हर पृष्ठ को पढ़ने की लागत कम कर दी है। "
    "संग्रह के अधिकांश दस्तावेज़ डिजिटल रूप से बनाए गए थे, इसलिए उनके भीतर का पाठ सीधे इस्तेमाल किया जा सकता है। "
    "लेकिन स्कैन किए गए पत्रों के लिए अक्षर पहचान की आवश्यकता थी।"
)
TH = (
    "คณะกรรมการได้ตรวจสอบตัวเลขรายไตรมาสและเห็นพ้องกันว่านโยบายใหม่ช่วยลดต้นทุนการอ่านแต่ละหน้า "
    "เอกสารส่วนใหญ่ในคลังถูกสร้างขึ้นในรูปแบบดิจิทัล จึงสามารถใช้ข้อความที่ฝังอยู่ได้โดยตรง "
    "อย่างไรก็ตาม จดหมายที่สแกนมาต้องใช้การรู้จำอักขระด้วยแสง และบางไฟล์มีชั้นข้อความที่ซ่อนอยู่"
)
FR = (
    "Le comité a examiné les chiffres trimestriels et a convenu que la nouvelle politique de routage "
    "réduisait le coût de lecture de chaque page. La plupart des documents de l'archive ont été créés "
    "sous forme numérique, de sorte que leur texte intégré peut être utilisé directement."
)
PL = (
    "Komisja przeanalizowała dane kwartalne i uznała, że nowa polityka kierowania obniżyła koszt odczytu "
    "każdej strony. Większość dokumentów w archiwum powstała w postaci cyfrowej, dlatego ich wbudowany "
    "tekst można wykorzystać bezpośrednio. Zeskanowane listy wymagały jednak rozpoznawania znaków."
)
EN_PROSE = (
    "The committee reviewed the quarterly figures and agreed that the new routing policy had reduced "
    "the cost of reading each page. Most documents in the archive were created digitally, so their "
    "embedded text could be used directly. Scanned letters, however, needed optical character "
    "recognition, and a few files carried a hidden text layer that did not match the printed words."
)
ZH_TW = (
    "委員會審查了季度數據，並同意新的路由策略降低了閱讀每一頁的成本。檔案中的大多數文件都是數位化產生的，"
    "因此可以直接使用其內嵌的文字。然而，掃描的信件需要光學字元辨識。"
)
JA = (
    "委員会は四半期の数字を検討し、新しい方針によって各ページを読む費用が下がったことに同意した。"
    "保管されている文書の多くはデジタルで作成されたため、埋め込まれた文字をそのまま使うことができる。"
    "しかし、スキャンした手紙には文字認識が必要だった。"
)
KO = (
    "위원회는 분기별 수치를 검토하고 새로운 정책이 각 페이지를 읽는 비용을 줄였다는 데 동의했다. "
    "보관된 문서 대부분은 디지털로 만들어졌기 때문에 포함된 텍스트를 바로 사용할 수 있다."
)


def shift_script(text: str, k: int, lo: int, hi: int) -> str:
    """A whole-script constant code-point offset: every character in [lo, hi] moves k code points
    (a font whose map is off by k)."""
    return "".join(chr(ord(c) + k) if lo <= ord(c) <= hi else c for c in text)


def substitute(text: str, pairs: str) -> str:
    """A consistent letter substitution: `pairs` lists letters swapped two by two ("tnao" swaps
    t<->n and a<->o), in both cases."""
    table = {}
    for a, b in zip(pairs[::2], pairs[1::2]):
        table[a], table[b] = b, a
        if a.upper() != a:
            table[a.upper()], table[b.upper()] = b.upper(), a.upper()
    return "".join(table.get(c, c) for c in text)


# --- watermarks over a healthy layer: an image painted over text that does not hide it ---------

WATERMARK_BODY = wrap((EN + " ") * 5, 90)[:45]


def _draft_png(alpha: int) -> bytes:
    """A full-page diagonal red "DRAFT" (A4 at 144 DPI), RGBA with the given alpha on the
    letters and fully transparent paper, or plain RGB on white when `alpha` is None."""
    from PIL import Image, ImageDraw, ImageFont

    rgba = alpha is not None
    im = Image.new("RGBA" if rgba else "RGB", (1190, 1684), (255, 255, 255, 0) if rgba else (255, 255, 255))
    font = ImageFont.truetype(_bold_font(), 330)
    ImageDraw.Draw(im).text((60, 650), "DRAFT", fill=(200, 0, 0, alpha) if rgba else (230, 150, 150), font=font)
    im = im.rotate(30, fillcolor=(255, 255, 255, 0) if rgba else (255, 255, 255))
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def _bold_font() -> str:
    import glob

    found = sorted(glob.glob("/usr/share/fonts/**/DejaVuSans-Bold.ttf", recursive=True))
    if found:
        return found[0]
    from PIL import ImageFont  # pragma: no cover - Pillow's bundled font

    return ImageFont.load_default().path  # type: ignore[attr-defined]


def watermark_pdf(how: str) -> bytes:
    """A born-digital page of 45 healthy lines with a full-page "DRAFT" image painted over them.

    how: `alpha` (the image carries a soft mask: translucent letters on transparent paper),
    `ca` (an opaque image painted with constant alpha 0.3 from the ExtGState), `multiply` (an
    opaque image painted with blend mode Multiply), or `opaque` (a plain opaque image: this one
    does hide the text).
    """
    doc = pymupdf.open()
    page = doc.new_page(width=synth.A4[0], height=synth.A4[1])
    y = 80.0
    for line in WATERMARK_BODY:
        page.insert_text((56, y), line, fontsize=10)
        y += 15
    xref = page.insert_image(page.rect, stream=_draft_png(90 if how == "alpha" else None))
    if how in ("ca", "multiply"):
        gs = "<</Type/ExtGState/ca 0.3/CA 0.3>>" if how == "ca" else "<</Type/ExtGState/BM/Multiply>>"
        gs_xref = doc.get_new_xref()
        doc.update_object(gs_xref, gs)
        kind, res = doc.xref_get_key(page.xref, "Resources")
        target = int(res.split()[0]) if kind == "xref" else page.xref
        prefix = "" if kind == "xref" else "Resources/"
        doc.xref_set_key(target, prefix + "ExtGState", f"<</GSwm {gs_xref} 0 R>>")
        name = [im[7] for im in page.get_images(full=True) if im[0] == xref][0]
        for c in page.get_contents():
            stream = doc.xref_stream(c)
            if f"/{name} Do".encode() in stream:
                doc.update_stream(c, stream.replace(f"/{name} Do".encode(), f"/GSwm gs /{name} Do".encode()))
    return _bytes(doc)


MEMO = ["To: all staff", "From: the director", "Re: office move", "We move on Friday.", "Pack your desks."]


def memo_scan_pdf(lines: list[str] = MEMO, caption: str = "Scanned 2024-05-02 page 1") -> bytes:
    """A full-page scan of a short memo (text only in the picture) plus a small real text
    caption (a scanner's stamp): little ink on a lot of paper."""
    doc = pymupdf.open()
    synth.add_scanned_page(doc, lines, noise=0.02, dpi=150)
    doc[0].insert_text((60, 800), caption, fontsize=9)
    return _bytes(doc)
