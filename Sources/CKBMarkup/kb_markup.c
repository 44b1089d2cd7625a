#include "kb_markup.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

void *kb_markup_read_xml(const char *bytes, int length) {
    return xmlReadMemory(bytes, length, NULL, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
}

void *kb_markup_read_html(const char *bytes, int length, const char *encoding) {
    return htmlReadMemory(bytes, length, NULL, encoding,
                          HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | HTML_PARSE_NOIMPLIED);
}

void kb_markup_free_document(void *document) { xmlFreeDoc((xmlDocPtr)document); }

void *kb_markup_document_children(void *document) { return ((xmlDocPtr)document)->children; }

int kb_markup_type(const void *node) { return (int)((const xmlNode *)node)->type; }
const char *kb_markup_name(const void *node) { return (const char *)((const xmlNode *)node)->name; }
const char *kb_markup_content(const void *node) { return (const char *)((const xmlNode *)node)->content; }
void *kb_markup_children(const void *node) { return ((const xmlNode *)node)->children; }
void *kb_markup_next(const void *node) { return ((const xmlNode *)node)->next; }

void *kb_markup_attributes(const void *node) {
    const xmlNode *element = node;
    return element->type == XML_ELEMENT_NODE ? element->properties : NULL;
}
void *kb_markup_next_attribute(const void *attribute) { return ((const xmlAttr *)attribute)->next; }
const char *kb_markup_attribute_name(const void *attribute) { return (const char *)((const xmlAttr *)attribute)->name; }
const char *kb_markup_attribute_prefix(const void *attribute) {
    const xmlAttr *a = attribute;
    return a->ns ? (const char *)a->ns->prefix : NULL;
}
char *kb_markup_attribute_value(const void *attribute) {
    return (char *)xmlNodeGetContent((const xmlNode *)attribute);
}
void kb_markup_free_string(char *string) { xmlFree(string); }
