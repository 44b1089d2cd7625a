#ifndef KB_CLIBXML2_SHIM_H
#define KB_CLIBXML2_SHIM_H
// libxml2 (Debian: libxml2-dev), for CKBMarkup's C code only: Swift imports CKBMarkup, whose
// header does not include these (their ICU declarations clash with Foundation's).
#include <libxml/parser.h>
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#endif
