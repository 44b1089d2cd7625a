#ifndef KB_MARKUP_H
#define KB_MARKUP_H
// A plain C view of libxml2's parsers and tree (Debian: libxml2-dev) for EPUB, HTML and DOCX.
// Its header does not include libxml2's, whose ICU declarations clash with Foundation's.

#ifdef __cplusplus
extern "C" {
#endif

enum { KB_MARKUP_ELEMENT = 1, KB_MARKUP_TEXT = 3, KB_MARKUP_CDATA = 4, KB_MARKUP_ENTITY_REF = 5 };

/// An XML document: no network, no external entities, no error output; NULL if not well-formed.
void *kb_markup_read_xml(const char *bytes, int length);
/// An HTML document, repaired as browsers repair it; `encoding` may be NULL (then detected).
void *kb_markup_read_html(const char *bytes, int length, const char *encoding);
void kb_markup_free_document(void *document);

/// The document's first top-level node (walk on with kb_markup_next).
void *kb_markup_document_children(void *document);

int kb_markup_type(const void *node);
/// An element's local name, an entity reference's name.
const char *kb_markup_name(const void *node);
/// A text node's text.
const char *kb_markup_content(const void *node);
void *kb_markup_children(const void *node);
void *kb_markup_next(const void *node);

/// An element's first attribute (walk on with kb_markup_next_attribute).
void *kb_markup_attributes(const void *node);
void *kb_markup_next_attribute(const void *attribute);
const char *kb_markup_attribute_name(const void *attribute);
/// The attribute's namespace prefix, or NULL.
const char *kb_markup_attribute_prefix(const void *attribute);
/// The attribute's value; free it with kb_markup_free_string.
char *kb_markup_attribute_value(const void *attribute);
void kb_markup_free_string(char *string);

#ifdef __cplusplus
}
#endif
#endif
