#!/usr/bin/env python3
"""Makes the small PDFs kb's tests and sample corpus use. Run through scripts/make-pdf-fixtures.sh
(which installs fpdf2 and uharfbuzz from PyPI into .venv-fixtures). The outputs are committed;
CI does not run this. Fonts: DejaVu (Debian's fonts-dejavu-core)."""
import io
import os
import sys

from fpdf import FPDF
from PIL import Image, ImageDraw

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "KBIngestTests", "Fixtures", "pdf")
CORPUS = os.path.join(ROOT, "corpus", "books")
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


class Book(FPDF):
    running_header = ""

    def header(self):
        if self.running_header:
            self.set_font("DejaVu", size=8)
            self.cell(0, 6, self.running_header, align="C")
            self.ln(10)

    def footer(self):
        self.set_y(-12)
        self.set_font("DejaVu", size=8)
        self.cell(0, 6, self.get_page_label(), align="C")


def new_book(title, header=""):
    pdf = Book()
    pdf.add_font("DejaVu", "", FONT)
    pdf.add_font("DejaVu", "B", FONT_BOLD)
    pdf.set_title(title)
    pdf.running_header = header
    pdf.set_auto_page_break(True, margin=18)
    return pdf


def heading(pdf, text, level, size):
    pdf.start_section(text, level=level)
    pdf.set_font("DejaVu", "B", size)
    pdf.multi_cell(0, 9, text)
    pdf.ln(2)
    pdf.set_font("DejaVu", size=11)


def para(pdf, text):
    pdf.multi_cell(0, 6, text)
    pdf.ln(3)


def image_png(width=400, height=300):
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for i in range(0, width, 20):
        draw.line([(i, 0), (width - i, height)], fill=(80, 80, 160), width=3)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    buffer.seek(0)
    return buffer


def book(path):
    pdf = new_book("The Fixture Book", header="The Fixture Book - running header")
    pdf.set_keywords("astronomy, fixtures")
    pdf.add_page()
    pdf.set_page_label(label_style="r")
    heading(pdf, "Preface", 0, 16)
    para(pdf, "This preface sits on a page labelled with a lower-case roman numeral. It explains why the book exists.")
    pdf.add_page()
    para(pdf, "The second front-matter page carries the label ii and a short note about conventions used later.")
    pdf.add_page()
    pdf.set_page_label(label_style="D", label_start=1)
    heading(pdf, "1 Chapter One", 0, 16)
    heading(pdf, "1.1 First Steps", 1, 13)
    para(pdf, "The first chapter starts here.\nThis sentence contains an exam-\nple of a word broken across two lines, and a real well-known hyphen.")
    para(pdf, "Кирилиця: Київ є столицею України, а ця книга перевіряє пошук українською мовою.")
    pdf.add_page()
    heading(pdf, "1.2 The Known Page", 1, 13)
    para(pdf, "The zebra quartz phrase lives on the fourth physical page, whose printed label is 2.")
    para(pdf, "A paragraph that starts on this page continues beyond the page break without a full stop so that the chunker must join "
              "the text of two pages into one snippet when the break falls in the middle of a sentence like this one and it goes on and on "
              "with more words about telescopes, eyepieces, mounts, tripods, dew shields, star charts, red torches, folding chairs, "
              "warm coats, thermos flasks, notebooks, pencils, binoculars and the patience that observing requires on a cold night "
              + "while the observer waits for the clouds to clear and counts meteors and writes down the seeing and the transparency " * 40
              + "until dawn")
    pdf.add_page()
    heading(pdf, "2 Chapter Two", 0, 16)
    para(pdf, "The second chapter is short. It mentions the nebula catalogue only once.")
    pdf.output(path)
    return path


def arabic(path):
    pdf = new_book("نص عربي")
    pdf.set_text_shaping(True)
    pdf.add_page()
    pdf.set_font("DejaVu", size=14)
    pdf.multi_cell(0, 9, "مرحبا بالعالم. هذه صفحة تجريبية باللغة العربية.", align="R")
    pdf.ln(4)
    pdf.multi_cell(0, 9, "اللغة العربية جميلة.", align="R")
    pdf.output(path)


def columns(path):
    pdf = new_book("Two Columns")
    pdf.add_page()
    pdf.set_font("DejaVu", size=11)
    left = "Left column first. " + "Apples grow in orchards and ripen in autumn. " * 10
    right = "Right column second. " + "Oranges grow in groves and ripen in winter. " * 10
    with pdf.text_columns(ncols=2, gutter=10) as cols:
        cols.write(text=left)
        cols.new_column()
        cols.write(text=right)
    pdf.output(path)


def encrypted(path):
    pdf = new_book("Locked")
    pdf.set_encryption(owner_password="owner-pass", user_password="secret")
    pdf.add_page()
    pdf.set_font("DejaVu", size=11)
    para(pdf, "Only readers with the password see this sentence about the encrypted vault.")
    pdf.output(path)


def scanned(path, text_pages=()):
    pdf = new_book("Scanned")
    for i in range(3 if text_pages else 1):
        pdf.add_page()
        if i in text_pages:
            pdf.set_font("DejaVu", size=11)
            para(pdf, f"Page {i + 1} has a text layer about comets and meteors.")
        else:
            pdf.image(image_png(), x=20, y=30, w=170)
    pdf.output(path)


def text_image(lines, width_in=6.5, dpi=200, size=15):
    """A grey PNG of typeset lines (DejaVu Sans, `size` pt), as a scanner would see a printed page."""
    from PIL import ImageFont
    font = ImageFont.truetype(FONT, int(size * dpi / 72))
    line_height = int(size * dpi / 72 * 1.5)
    image = Image.new("L", (int(width_in * dpi), line_height * (len(lines) + 1)), 255)
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((int(0.1 * dpi), int(line_height * (i + 0.5))), line, font=font, fill=20)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", dpi=(dpi, dpi))
    buffer.seek(0)
    return buffer


def mixed_scan(path):
    """Text-layer pages around one scanned page (an image of printed text, with only its page
    number in the text layer): OCR must read page 2 and keep the order and printed labels."""
    pdf = new_book("Harbour Records")
    pdf.add_page()
    pdf.set_page_label(label_style="r")
    heading(pdf, "Harbour Records", 0, 16)
    para(pdf, "The first page has a text layer about lighthouses, harbours and the keepers who tended the lamps.")
    pdf.add_page()
    pdf.set_page_label(label_style="D", label_start=1)
    pdf.image(text_image([
        "The walrus ledger phrase is printed on the scanned",
        "second page. Harbour masters kept ledgers of every",
        "ship that entered the port, with its cargo and crew.",
    ]), x=15, y=30, w=165)
    pdf.add_page()
    para(pdf, "The third page has a text layer again and closes the records with a note on tides.")
    pdf.output(path)


def corpus_booklet(path):
    pdf = new_book("Reading an Ephemeris", header="Reading an Ephemeris")
    pdf.set_keywords("technique:ephemeris, method")
    pdf.add_page()
    pdf.set_page_label(label_style="r")
    heading(pdf, "Contents and Purpose", 0, 16)
    para(pdf, "An ephemeris is a table of planetary positions, one row per day. This booklet, written for kb's sample corpus, "
              "explains how to read one and how to use it with the rules in the handbook notes.")
    pdf.add_page()
    pdf.set_page_label(label_style="D", label_start=1)
    heading(pdf, "1 The Columns of a Daily Table", 0, 16)
    para(pdf, "Each row gives the date, the sidereal time at midnight, and the zodiac position of the Sun, the Moon and every planet, "
              "in degrees and minutes of a sign. A small R beside a position marks a planet in retrograde motion; a D marks the day it turns direct.")
    para(pdf, "The Moon moves about thirteen degrees a day, so its column changes sign every two or three days. The outer planets may stay "
              "in the same degree for a week.")
    pdf.add_page()
    heading(pdf, "2 Finding a Transit", 0, 16)
    para(pdf, "To find when a transit becomes exact, look down the column of the transiting planet until it reaches the degree of the natal "
              "planet. Interpolate between two rows when the exact moment matters: a planet moving one degree a day covers one minute of arc "
              "in twenty-four minutes of time.")
    para(pdf, "Ingress tables at the back of most ephemerides list the moment each planet enters a new sign, which saves scanning the daily rows.")
    pdf.add_page()
    heading(pdf, "3 Eclipses and Lunations", 0, 16)
    para(pdf, "New and full Moons are printed with their exact time and degree. Eclipses are marked separately; an eclipse within two degrees "
              "of a natal planet or angle is read as a turning point for the matters of that house.")
    pdf.output(path)


def main():
    if sys.argv[1:] == ["mixed-scan"]:
        mixed_scan(os.path.join(OUT, "mixed-scan.pdf"))
        return
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(CORPUS, exist_ok=True)
    good = book(os.path.join(OUT, "book.pdf"))
    arabic(os.path.join(OUT, "arabic.pdf"))
    columns(os.path.join(OUT, "columns.pdf"))
    encrypted(os.path.join(OUT, "encrypted.pdf"))
    scanned(os.path.join(OUT, "scanned.pdf"))
    scanned(os.path.join(OUT, "partly-scanned.pdf"), text_pages=(0, 2))
    mixed_scan(os.path.join(OUT, "mixed-scan.pdf"))
    data = open(good, "rb").read()
    open(os.path.join(OUT, "truncated.pdf"), "wb").write(data[: len(data) // 2])
    corpus_booklet(os.path.join(CORPUS, "reading-an-ephemeris.pdf"))
    for name in sorted(os.listdir(OUT)):
        print(name, os.path.getsize(os.path.join(OUT, name)), file=sys.stderr)


if __name__ == "__main__":
    main()
