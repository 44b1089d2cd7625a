#ifndef KB_POPPLER_H
#define KB_POPPLER_H
// A plain C interface over poppler-cpp, so that no Swift code sees a C++ type.
// Every function catches C++ exceptions; failures come back as status values or NULL.
// Strings returned are UTF-8, allocated with malloc; free them with kb_pdf_free.
#ifdef __cplusplus
extern "C" {
#endif

typedef struct kb_pdf kb_pdf;

typedef enum {
    KB_PDF_OK = 0,
    /// The file could not be opened or parsed (missing, damaged, truncated, not a PDF).
    KB_PDF_DAMAGED = 1,
    /// The document is encrypted and the password (or its absence) does not open it.
    KB_PDF_LOCKED = 2,
    /// Something unexpected inside poppler.
    KB_PDF_INTERNAL = 3,
} kb_pdf_status;

/// Opens a PDF; `password` may be NULL. On failure returns NULL and sets *status.
kb_pdf *kb_pdf_open(const char *path, const char *password, kb_pdf_status *status);
/// Opens a PDF from `length` bytes in memory, which must stay valid and unchanged until the
/// document is closed (poppler reads them as it goes; several documents may share them).
kb_pdf *kb_pdf_open_data(const char *bytes, int length, const char *password, kb_pdf_status *status);
void kb_pdf_close(kb_pdf *pdf);

int kb_pdf_page_count(const kb_pdf *pdf);
/// Whether the document is encrypted (it may still have opened, e.g. with an empty user password).
int kb_pdf_is_encrypted(const kb_pdf *pdf);
/// The text of a page (0-based) in reading order, not physical layout. NULL on failure.
char *kb_pdf_page_text(const kb_pdf *pdf, int index);
/// A word poppler found on a page: its box in points (x0, y0 top-left, x1, y1 bottom-right,
/// the page as displayed), whether poppler saw a space after it, and its characters (Unicode
/// scalars, in the order they stand on the page from left to right) at
/// `chars[first_char ..< first_char + char_count]`, each with its own left and right edge.
typedef struct {
    double x0, y0, x1, y1;
    int space_after;
    int rotation;
    int first_char;
    int char_count;
} kb_pdf_word;

/// The words of a page in poppler's reading order. Free with kb_pdf_words_free.
typedef struct {
    kb_pdf_word *words;
    int word_count;
    unsigned int *chars;
    double *char_x0;
    double *char_x1;
    int char_count;
} kb_pdf_words;

/// The words of a page (0-based), with their boxes; NULL on failure.
kb_pdf_words *kb_pdf_page_words(const kb_pdf *pdf, int index);
void kb_pdf_words_free(kb_pdf_words *words);
/// The printed label of a page ("xii", "217"); empty when the PDF defines none. NULL on failure.
char *kb_pdf_page_label(const kb_pdf *pdf, int index);
/// A document information entry: "Title", "Author", "Subject", "Keywords". NULL if absent.
char *kb_pdf_info(const kb_pdf *pdf, const char *key);
/// The creation date as seconds since 1970, or -1.
long long kb_pdf_creation_date(const kb_pdf *pdf);

/// The words set in the largest font on the first `max_pages` pages (in reading order, at most
/// 30 words): the document's most prominent heading, usually its title. NULL if none.
char *kb_pdf_largest_text(const kb_pdf *pdf, int max_pages);

/// The outline (bookmarks), flattened depth-first: count, then each item's level (1 = top) and title.
int kb_pdf_outline_count(const kb_pdf *pdf);
int kb_pdf_outline_level(const kb_pdf *pdf, int index);
char *kb_pdf_outline_title(const kb_pdf *pdf, int index);

/// The page's size in points (1/72 inch) as it is displayed (its /Rotate applied). 0 on failure.
int kb_pdf_page_size(const kb_pdf *pdf, int index, double *width, double *height);
/// Renders a page (0-based) as 8-bit grey at `dpi`, antialiased: `*height` rows of `*stride`
/// bytes, top to bottom, `*width` pixels each. NULL on failure. Free with kb_pdf_free.
unsigned char *kb_pdf_render_gray(const kb_pdf *pdf, int index, int dpi, int *width, int *height, int *stride);

/// Renders a page (0-based) in colour at `dpi` on white and writes it to `path` as PNG; its size
/// in pixels in *width and *height. 0 on failure (nothing usable is left at `path`).
int kb_pdf_render_png(const kb_pdf *pdf, int index, double dpi, const char *path, int *width, int *height);

void kb_pdf_free(void *pointer);

#ifdef __cplusplus
}
#endif
#endif
