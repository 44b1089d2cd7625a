public import Foundation
import ZIPFoundation

/// EPUB and DOCX files the tests make themselves (ZIP containers written with ZIPFoundation),
/// with known text, structure and metadata.
public enum FormatFixtures {
    /// A ZIP archive of these parts, in order (an EPUB's `mimetype` first, stored).
    public static func zip(_ parts: [(path: String, text: String)]) throws -> Data {
        let archive = try Archive(data: Data(), accessMode: .create)
        for part in parts {
            let data = Data(part.text.utf8)
            try archive.addEntry(with: part.path, type: .file, uncompressedSize: Int64(data.count),
                                 compressionMethod: part.path == "mimetype" ? .none : .deflate) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        return archive.data ?? Data()
    }

    static let container = """
        <?xml version="1.0"?>
        <container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
          <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
        </container>
        """

    static func xhtml(_ body: String, lang: String = "en", dir: String = "ltr") -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="\(lang)" lang="\(lang)" dir="\(dir)">
        <head><title>chapter</title><link rel="stylesheet" href="style.css"/></head>
        <body>\(body)</body></html>
        """
    }

    /// An EPUB 3 in Arabic (right to left) with a nav document: two chapters, the second with a
    /// section entry (`ch2.xhtml#s2`) and a footnote; an image; a subject and an author.
    public static func arabicEPUB3() throws -> Data {
        let opf = """
            <?xml version="1.0" encoding="utf-8"?>
            <package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
              <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
                <dc:identifier id="id">urn:uuid:1</dc:identifier>
                <dc:title>كتاب النجوم</dc:title>
                <dc:creator>أبو معشر</dc:creator>
                <dc:language>ar</dc:language>
                <dc:subject>Astrology</dc:subject>
              </metadata>
              <manifest>
                <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
                <item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
                <item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/>
                <item id="img" href="images/star.png" media-type="image/png"/>
              </manifest>
              <spine><itemref idref="c1"/><itemref idref="c2"/></spine>
            </package>
            """
        let nav = xhtml("""
            <nav epub:type="toc"><h1>المحتويات</h1><ol>
              <li><a href="text/ch1.xhtml">الفصل الأول</a></li>
              <li><a href="text/ch2.xhtml">الفصل الثاني</a><ol><li><a href="text/ch2.xhtml#s2">عودة زحل</a></li></ol></li>
            </ol></nav>
            """, lang: "ar", dir: "rtl")
        let chapter1 = xhtml("""
            <h1>الفصل الأول</h1><p>الشمس في برج الحمل تعطي قوة وشجاعة.</p><img src="../images/star.png" alt="نجمة"/>
            """, lang: "ar", dir: "rtl")
        let chapter2 = xhtml("""
            <h1>الفصل الثاني</h1><p>القمر يحكم العواطف.</p>
            <h2 id="s2">عودة زحل</h2><p>تحدث عودة زحل كل تسع وعشرين سنة<a epub:type="noteref" href="#n1">١</a>.</p>
            <aside epub:type="footnote" id="n1"><p>مدار زحل ٢٩٫٥ سنة.</p></aside>
            """, lang: "ar", dir: "rtl")
        return try zip([("mimetype", "application/epub+zip"), ("META-INF/container.xml", container), ("OEBPS/content.opf", opf),
                        ("OEBPS/nav.xhtml", nav), ("OEBPS/text/ch1.xhtml", chapter1), ("OEBPS/text/ch2.xhtml", chapter2),
                        ("OEBPS/images/star.png", "not really a png")])
    }

    /// An EPUB 2 in English with an NCX: a title page without a TOC entry, then "Chapter 3" with a
    /// nested entry "The Saturn return" (`chapter3.html#saturn`).
    public static func englishEPUB2() throws -> Data {
        let opf = """
            <?xml version="1.0" encoding="utf-8"?>
            <package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="id">
              <metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
                <dc:title>Planets and Returns</dc:title><dc:creator opf:role="aut">Ada Lovelace</dc:creator>
                <dc:language>en-GB</dc:language><dc:subject>Astrology</dc:subject><dc:subject>Saturn</dc:subject>
              </metadata>
              <manifest>
                <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
                <item id="title" href="title.html" media-type="application/xhtml+xml"/>
                <item id="ch3" href="chapter3.html" media-type="application/xhtml+xml"/>
              </manifest>
              <spine toc="ncx"><itemref idref="title"/><itemref idref="ch3"/></spine>
            </package>
            """
        let ncx = """
            <?xml version="1.0" encoding="utf-8"?>
            <ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>
              <navPoint id="p1" playOrder="1"><navLabel><text>Chapter 3</text></navLabel><content src="chapter3.html"/>
                <navPoint id="p2" playOrder="2"><navLabel><text>The Saturn return</text></navLabel><content src="chapter3.html#saturn"/></navPoint>
              </navPoint>
            </navMap></ncx>
            """
        let title = xhtml("<p>Planets and Returns, a short book.</p>")
        let chapter = xhtml("""
            <h1>Chapter 3</h1><p>Jupiter expands whatever it touches.</p>
            <h2 id="saturn">The Saturn return</h2><p>Around the twenty-ninth year the ringed planet comes home and asks for accounts.</p>
            """)
        return try zip([("mimetype", "application/epub+zip"), ("META-INF/container.xml", container), ("OEBPS/content.opf", opf),
                        ("OEBPS/toc.ncx", ncx), ("OEBPS/title.html", title), ("OEBPS/chapter3.html", chapter)])
    }

    /// An EPUB whose content is encrypted (DRM), as stores ship them.
    public static func lockedEPUB() throws -> Data {
        let encryption = """
            <?xml version="1.0"?>
            <encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
              <enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
                <enc:CipherData><enc:CipherReference URI="OEBPS/chapter3.html"/></enc:CipherData></enc:EncryptedData>
            </encryption>
            """
        return try zip([("mimetype", "application/epub+zip"), ("META-INF/container.xml", container), ("META-INF/encryption.xml", encryption)])
    }

    /// A Word document: a title, Heading 1 and Heading 2 paragraphs (one by a localised style name),
    /// body text with a tab and a line break, a table, and core properties.
    public static func docx() throws -> Data {
        let w = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\""
        func paragraph(_ text: String, style: String? = nil) -> String {
            let properties = style.map { "<w:pPr><w:pStyle w:val=\"\($0)\"/></w:pPr>" } ?? ""
            return "<w:p>\(properties)<w:r><w:t xml:space=\"preserve\">\(text)</w:t></w:r></w:p>"
        }
        let document = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <w:document \(w)><w:body>
            \(paragraph("Lease terms", style: "Heading1"))
            \(paragraph("The tenant pays rent monthly."))
            <w:p><w:r><w:t>Rent:</w:t></w:r><w:r><w:tab/><w:t>1200 euros</w:t><w:br/><w:t>due on the first day.</w:t></w:r></w:p>
            \(paragraph("Deposit", style: "berschrift2"))
            \(paragraph("Two months of rent are held as deposit."))
            <w:tbl><w:tr><w:tc><w:p><w:r><w:t>Item</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Amount</w:t></w:r></w:p></w:tc></w:tr>
            <w:tr><w:tc><w:p><w:r><w:t>Deposit</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>2400</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
            </w:body></w:document>
            """
        let styles = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <w:styles \(w)>
              <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>
              <w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/></w:style>
            </w:styles>
            """
        let core = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
              xmlns:dc="http://purl.org/dc/elements/1.1/">
              <dc:title>Flat lease 2026</dc:title><dc:subject>Renting the flat</dc:subject>
              <cp:keywords>lease; housing</cp:keywords><dc:creator>Ada</dc:creator>
            </cp:coreProperties>
            """
        return try zip([("[Content_Types].xml", "<Types/>"), ("word/document.xml", document), ("word/styles.xml", styles),
                        ("docProps/core.xml", core)])
    }
}
