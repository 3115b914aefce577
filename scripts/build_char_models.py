"""Regenerate pagerouter/triage/data/char_models.json: letter unigram, bigram and trigram counts per script.

Sources (nothing is fetched; everything ships with packages installed on the build machine):

* pycountry (LGPL-2.1; its translations come from Debian's iso-codes, LGPL-2.1): the gettext
  catalogues under `pycountry/locales/<lang>/LC_MESSAGES/*.mo` hold country, language, script,
  currency and subdivision names translated into ~150 languages: real written words in every
  script we read. Only the translated strings are used.
* the gettext message catalogues of the Debian packages installed here
  (`/usr/share/locale/<lang>/LC_MESSAGES/*.mo`, and vim's under /usr/share/vim; glibc, apt,
  coreutils, glib, gstreamer, PostgreSQL client, ...; GPL/LGPL): translated user-interface
  sentences, i.e. running prose in each language. The iso-codes catalogues there are skipped
  (pycountry has the same names).
* Debian `base-files` licence texts under /usr/share/common-licenses (English running prose,
  so the Latin table is not only names).

Only letter counts are kept (a statistical summary, not the text). Han has no table here: its
model is built at import time from the stdlib CJK codecs (see `char_model.py`).

    python scripts/build_char_models.py   # rewrites pagerouter/triage/data/char_models.json
"""

from __future__ import annotations

import gettext
import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pagerouter.triage.char_model import normalise_words  # noqa: E402

import pycountry  # noqa: E402

LOCALES = Path(pycountry.__file__).parent / "locales"
LICENCES = Path("/usr/share/common-licenses")

# script -> [(source, weight)]; each source is capped at CAP letters, then weighted
SOURCES: dict[str, list[str]] = {
    "Latin": ["licences", "de", "fr", "es", "it", "pt", "nl", "pl", "cs", "sv", "da", "fi", "hu", "ro", "tr", "vi", "id", "hr", "sk"],
    "Cyrillic": ["ru", "uk", "bg", "sr", "mk", "be", "kk"],
    "Greek": ["el"],
    "Arabic": ["ar", "ar", "fa", "ur"],  # Arabic twice: it is the language most Arabic-script pages are in
    "Hebrew": ["he"],
    "Devanagari": ["hi", "mr", "ne", "mai"],
    "Thai": ["th"],
}
CAP = 300_000  # letters per source, so one big catalogue does not drown the other languages
# trigrams seen fewer times are dropped (their mass stays in the context totals); the big
# Latin and Cyrillic corpora can afford a higher cut, the small ones keep their tail
TRI_MIN = {"Latin": 10, "Cyrillic": 10}
TRI_MIN_DEFAULT = 3


def _catalogues(lang: str) -> list[Path]:
    system = [
        p
        for p in sorted(Path("/usr/share/locale").glob(f"{lang}/LC_MESSAGES/*.mo"))
        + sorted(Path("/usr/share").glob(f"*/*/lang/{lang}/LC_MESSAGES/*.mo"))
        if not p.name.startswith("iso")
    ]
    return system + sorted((LOCALES / lang / "LC_MESSAGES").glob("*.mo"))


def _catalogue_strings(lang: str) -> list[str]:
    out: list[str] = []
    for mo in _catalogues(lang):
        try:
            with open(mo, "rb") as fh:
                cat = gettext.GNUTranslations(fh)._catalog
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        for k, v in sorted(cat.items(), key=lambda kv: str(kv[0])):
            if isinstance(v, str) and k and v != k:
                out.append(v)
    return out


def _licence_strings() -> list[str]:
    out = []
    for name in ("GPL-3", "LGPL-3", "Apache-2.0", "GFDL-1.3", "MPL-2.0", "Artistic"):
        p = LICENCES / name
        if p.is_file():
            out.append(p.read_text(errors="ignore"))
    return out


def counts_for(script: str) -> tuple[Counter, Counter, int]:
    uni: Counter = Counter()
    bi: Counter = Counter()
    tri: Counter = Counter()
    for src in SOURCES[script]:
        strings = _licence_strings() if src == "licences" else _catalogue_strings(src)
        u: Counter = Counter()
        b: Counter = Counter()
        t: Counter = Counter()
        n = 0
        for s in strings:
            # one letter stream per string, word breaks dropped: PDF text layers often lose
            # their spaces (`Thegoalistomove`), so the model must not depend on them
            stream = "".join(normalise_words(s, script))
            if not stream:
                continue
            u.update(stream)
            padded = " " + stream
            b.update(padded[i : i + 2] for i in range(len(padded) - 1))
            padded = "  " + stream
            t.update(padded[i : i + 3] for i in range(len(padded) - 2))
            n += len(stream)
            if n >= CAP:
                break
        uni.update(u)
        bi.update(b)
        tri.update(t)
    return uni, bi, tri, sum(uni.values())


def _contexts(tri: Counter, cut: int) -> dict[str, list[int]]:
    """context (two letters) -> [trigram count, distinct followers] over all trigrams, pruned or not."""
    out: dict[str, list[int]] = {}
    for k, v in tri.items():
        c = out.setdefault(k[:2], [0, 0])
        c[0] += v
        c[1] += 1
    return {k: v for k, v in out.items() if v[0] >= cut}


def main() -> None:
    models = {}
    for script in SOURCES:
        uni, bi, tri, n = counts_for(script)
        # drop one-off bigrams (typos, foreign names): they are noise at this corpus size
        models[script] = {
            "letters": n,
            "unigrams": dict(sorted(uni.items(), key=lambda kv: -kv[1])),
            "bigrams": {k: v for k, v in sorted(bi.items(), key=lambda kv: -kv[1]) if v >= 2},
            # trigrams seen at least TRI_MIN times (the tail is noise and would triple the file);
            # the totals per context keep the dropped tail's mass out of the seen trigrams
            "trigrams": {k: v for k, v in sorted(tri.items(), key=lambda kv: -kv[1]) if v >= TRI_MIN.get(script, TRI_MIN_DEFAULT)},
            "trigram_contexts": _contexts(tri, TRI_MIN.get(script, TRI_MIN_DEFAULT)),
        }
        print(script, n, "letters", len(uni), "unigrams", len(models[script]["bigrams"]), "bigrams", file=sys.stderr)
    out = ROOT / "pagerouter" / "triage" / "data" / "char_models.json"
    meta = {
        "_source": "scripts/build_char_models.py: letter counts from pycountry's iso-codes translations "
        "(LGPL-2.1), the installed Debian packages' gettext catalogues under /usr/share/locale (GPL/LGPL) and "
        "Debian common-licenses texts; letter counts only",
        "models": models,
    }
    out.write_text(json.dumps(meta, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(out, os.path.getsize(out), "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
