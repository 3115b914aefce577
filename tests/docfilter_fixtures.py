"""Synthetic documents for tests/test_docfilter.py: real sentences in each language, written for
these tests, laid out with pagerouter.bench.synth."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from pagerouter.bench.synth import add_scanned_page, add_text_page

ENGLISH = [
    "The annual report describes how the water utility maintained its network during the year. "
    "Most of the pipes that were replaced had been installed before the war, and the crews worked "
    "through the winter to finish the eastern district before the spring floods arrived.",
    "Revenue was slightly higher than in the previous year because the new tariff came into force "
    "in March. The board believes that the remaining repairs can be completed within two years if "
    "the council approves the budget that was proposed in the autumn.",
    "Customers reported fewer interruptions than at any time since records began, and the average "
    "time needed to restore supply after a burst fell from six hours to just under four.",
]
GERMAN = [
    "Der Jahresbericht beschreibt, wie die Stadtwerke ihr Leitungsnetz im vergangenen Jahr gepflegt "
    "haben. Die meisten der ersetzten Rohre wurden vor dem Krieg verlegt, und die Arbeiter sind auch "
    "im Winter nicht zu Hause geblieben, damit der östliche Bezirk vor dem Hochwasser fertig wird.",
    "Die Einnahmen waren etwas höher als im Vorjahr, weil der neue Tarif im März in Kraft getreten "
    "ist. Der Vorstand ist der Meinung, dass die übrigen Reparaturen in zwei Jahren abgeschlossen "
    "werden können, wenn der Gemeinderat den Haushalt genehmigt, der im Herbst vorgeschlagen wurde.",
    "Die Kunden haben weniger Unterbrechungen gemeldet als je zuvor, und die Zeit bis zur "
    "Wiederherstellung der Versorgung nach einem Rohrbruch ist von sechs auf knapp vier Stunden gesunken.",
]
FRENCH = [
    "Le rapport annuel décrit comment la régie des eaux a entretenu son réseau pendant l'année. "
    "La plupart des conduites remplacées avaient été posées avant la guerre, et les équipes ont "
    "travaillé tout l'hiver pour terminer le quartier est avant les crues du printemps.",
    "Les recettes sont un peu plus élevées que l'année précédente, parce que le nouveau tarif est "
    "entré en vigueur au mois de mars. Le conseil pense que les réparations qui restent seront "
    "terminées dans deux ans si la commune approuve le budget proposé en automne.",
    "Les clients ont signalé moins de coupures que jamais, et le temps nécessaire pour rétablir "
    "le service après une rupture est passé de six heures à un peu moins de quatre.",
]
RUSSIAN = [
    "Годовой отчёт описывает, как городской водоканал обслуживал свою сеть в течение года. "
    "Большинство заменённых труб было проложено ещё до войны, и бригады работали всю зиму.",
    "Доходы оказались немного выше, чем в прошлом году, потому что новый тариф вступил в силу в "
    "марте. Совет считает, что оставшийся ремонт можно завершить за два года.",
    "Жители сообщили о меньшем числе перебоев, чем когда-либо, а время восстановления подачи воды "
    "после аварии сократилось с шести часов до четырёх.",
]
SPAM = [
    "Free PDF download ebook online. Download free ebook PDF epub mobi kindle now, click here to "
    "download the full version free. Best cheap ebook download, free PDF online, read online free, "
    "download PDF free unlimited, torrent download free ebook epub, free download audiobook mp3 now.",
    "Download ebook PDF free online: click download, free epub download, free kindle ebook, best "
    "seller ebook free PDF download, read free online, download now free full version PDF ebook.",
]
LETTER = [
    "Dear Customer,",
    "We are writing to inform you that your water service agreement will be renewed automatically "
    "at the end of the current period. No action is needed on your part if you wish to continue "
    "receiving water under the same terms and conditions.",
    "If you would like to change your tariff or cancel the agreement, please contact our customer "
    "office before the end of the month. Our staff will be happy to answer any questions.",
    "Yours sincerely, The Customer Service Team",
]


def pdf(path: Path, pages: list[list[str]], title: str | None = None) -> Path:
    doc = pymupdf.open()
    for paragraphs in pages:
        add_text_page(doc, paragraphs, title=title)
    doc.save(path)
    doc.close()
    return path


def form_letter(path: Path, n: int = 10) -> Path:
    """The same letter to n recipients, one page each; only the account number changes."""
    doc = pymupdf.open()
    for i in range(n):
        add_text_page(doc, [f"Account number {1000 + i}", *LETTER], title="Notice of renewal")
    doc.save(path)
    doc.close()
    return path


def scanned(path: Path) -> Path:
    doc = pymupdf.open()
    add_scanned_page(doc, ["This page is only a picture of text.", "It has no text layer at all."])
    doc.save(path)
    doc.close()
    return path
