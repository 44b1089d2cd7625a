#!/usr/bin/env python3
"""Makes the right-to-left (and Ukrainian) PDF fixtures the way real ones are made, from the
texts in Tests/KBIngestTests/Fixtures/pdf-text (one paragraph per page):

- `*-writer.pdf`: LibreOffice Writer from right-to-left HTML set in Noto Naskh Arabic (Ukrainian
  in Noto Serif), justified in a narrow column (Ukrainian justified) so that lines wrap, tanween and lam-alef fall at
  many places, and hyphenated compounds break across lines;
- `arabic-reportlab.pdf`: reportlab + arabic-reshaper + python-bidi, the route many report
  generators take: the text layer holds Arabic presentation forms in visual order.

Run through scripts/make-rtl-pdf-fixtures.sh. The outputs are committed; CI does not run this.
It also records what pdftotext (poppler's own text extraction) keeps of each text's words in
`pdf-text/pdftotext-recall.json`, the bar the tests hold kb's extraction to."""
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "KBIngestTests", "Fixtures", "pdf")
TEXT = os.path.join(ROOT, "Tests", "KBIngestTests", "Fixtures", "pdf-text")
# DejaVu Sans has Arabic presentation forms and Latin letters (Noto Naskh Arabic has no Latin).
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def paragraphs(name):
    with open(os.path.join(TEXT, name + ".txt"), encoding="utf-8") as f:
        return [p.strip() for p in f.read().split("\n\n") if p.strip()]


def writer(name, rtl, font, lang):
    pages = paragraphs(name)
    body = "\n".join(
        f'<p lang="{lang}" style="page-break-after: always">{html.escape(p)}</p>' for p in pages)
    direction = ' dir="rtl"' if rtl else ""
    # Justified Arabic is stretched between letters, which pdftotext reads as spaces inside words
    # (it keeps 44 % of the words): right-to-left text is set ragged, as most such books are.
    align = "start" if rtl else "justify"
    document = f"""<!DOCTYPE html>
<html lang="{lang}"{direction}><head><meta charset="utf-8"><title>{name}</title>
<style>
@page {{ size: 11cm 16cm; margin: 1.5cm; }}
p {{ font-family: '{font}'; font-size: 13pt; text-align: {align}; }}
</style></head><body{direction}>
{body}
</body></html>"""
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, f"{name}-writer.html")
        with open(source, "w", encoding="utf-8") as f:
            f.write(document)
        # Imported as a Writer document: the Writer/Web route loses a page's first lines.
        subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{work}/profile",
                        "--infilter=HTML (StarWriter)", "--convert-to", "pdf:writer_pdf_Export", "--outdir", OUT, source],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def reportlab_arabic(name):
    import arabic_reshaper
    from bidi.algorithm import get_display
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("Naskh", DEJAVU))
    width, height, margin, size = 320, 460, 36, 13
    pdf = canvas.Canvas(os.path.join(OUT, f"{name}-reportlab.pdf"), pagesize=(width, height))
    pdf.setTitle(name)
    for paragraph in paragraphs(name):
        pdf.setFont("Naskh", size)
        # Wrap in logical order, then shape and reorder each line for display.
        lines, line = [], []
        for word in paragraph.split():
            trial = " ".join(line + [word])
            if line and pdfmetrics.stringWidth(arabic_reshaper.reshape(trial), "Naskh", size) > width - 2 * margin:
                lines.append(" ".join(line))
                line = [word]
            else:
                line.append(word)
        lines.append(" ".join(line))
        y = height - margin - size
        for text in lines:
            pdf.drawRightString(width - margin, y, get_display(arabic_reshaper.reshape(text)))
            y -= size * 1.9
        pdf.showPage()
    pdf.save()


HARAKAT = re.compile(r"[\u064b-\u065f\u0670]")


def words(text, harakat=True):
    """The words a reader sees: NFKC (presentation forms to letters), no tatweel or invisible
    controls, split at spaces and punctuation; without harakat when `harakat` is false."""
    text = unicodedata.normalize("NFKC", text).replace("\u0640", "")
    if not harakat:
        text = HARAKAT.sub("", text)
    text = re.sub(r"[\u200b-\u200f\u202a-\u202e\u2066-\u2069\u061c]", "", text)
    return [w for w in re.split(r"[\s.,;:!?،؛«»()\"]+", text) if w]


def recall(truth, extracted, harakat=True):
    """The share of the truth's words (counted with repeats) the extracted text holds."""
    have = {}
    for w in words(extracted, harakat):
        have[w] = have.get(w, 0) + 1
    found = 0
    for w in words(truth, harakat):
        if have.get(w, 0) > 0:
            have[w] -= 1
            found += 1
    return found / max(1, len(words(truth, harakat)))


def main():
    writer("arabic", True, "Noto Naskh Arabic", "ar")
    writer("persian", True, "Noto Naskh Arabic", "fa")
    writer("ukrainian", False, "Noto Serif", "uk")
    reportlab_arabic("arabic")
    figures = {}
    for pdf, text in [("arabic-writer", "arabic"), ("persian-writer", "persian"), ("ukrainian-writer", "ukrainian"),
                      ("arabic-reportlab", "arabic")]:
        extracted = subprocess.run(["pdftotext", "-enc", "UTF-8", os.path.join(OUT, pdf + ".pdf"), "-"],
                                   check=True, capture_output=True, text=True).stdout
        truth = "\n".join(paragraphs(text))
        # arabic-reshaper drops harakat (its default, which generators keep): not counted there.
        figures[pdf] = round(recall(truth, extracted, harakat=pdf != "arabic-reportlab"), 4)
    with open(os.path.join(TEXT, "pdftotext-recall.json"), "w", encoding="utf-8") as f:
        json.dump(figures, f, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps(figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main())
