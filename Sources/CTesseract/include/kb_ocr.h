#ifndef KB_OCR_H
#define KB_OCR_H
// A plain C interface over Tesseract's C API and Leptonica (libtesseract-dev, libleptonica-dev):
// page images, recognition with word confidences, orientation detection. Strings returned are
// UTF-8, allocated with malloc; free them with kb_ocr_free_text. Nothing here prints: Tesseract's
// and Leptonica's own messages are silenced, failures come back as status values or NULL.
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// An 8-bit grey page image (a Leptonica Pix) with its resolution.
typedef struct kb_image kb_image;

/// Copies rows of 8-bit grey pixels (`stride` bytes apart) into a new image. NULL on failure.
kb_image *kb_image_from_gray(const unsigned char *pixels, int width, int height, int stride, int dpi);
/// How many images a file holds: the pages of a TIFF, 1 for PNG and JPEG, 0 when it cannot be read.
int kb_image_count(const char *path);
/// Reads image `index` (0-based) of a PNG, JPEG or TIFF file, as grey. NULL when it cannot be read.
kb_image *kb_image_read(const char *path, int index);
/// The same, for a file's bytes in memory (read once by the caller).
int kb_image_count_data(const unsigned char *data, size_t size);
kb_image *kb_image_read_data(const unsigned char *data, size_t size, int index);
/// The size of image `index` from its header alone (nothing is decoded): 1, or 0 when it cannot be read.
int kb_image_size_data(const unsigned char *data, size_t size, int index, int *width, int *height);
void kb_image_free(kb_image *image);
int kb_image_width(const kb_image *image);
int kb_image_height(const kb_image *image);
/// The resolution recorded in the file, or 0 when it records none.
int kb_image_dpi(const kb_image *image);
void kb_image_set_dpi(kb_image *image, int dpi);
/// A copy turned clockwise by `quarters` × 90°.
kb_image *kb_image_rotated(const kb_image *image, int quarters);
/// Writes image `index` (0-based) of a PNG, JPEG or TIFF file's bytes as a PNG `width` pixels
/// wide (less when the height would pass `max_height`), colour kept: a scan's page shown. Its
/// size in `*out_width`, `*out_height`. 1 on success, 0 when the image cannot be read or written.
int kb_image_render_png(const unsigned char *data, size_t size, int index, int width, int max_height,
                        const char *path, int *out_width, int *out_height);
/// A copy at `scale` (0.5 halves each side), resolution scaled with it.
kb_image *kb_image_scaled(const kb_image *image, float scale);
/// The grey value (0–255) of one pixel, or -1 outside the image.
int kb_image_pixel(const kb_image *image, int x, int y);
/// How many pixels are darker than `below`, counting no further than `enough` (so an inked page
/// costs a few rows); -1 for no image.
long kb_image_dark_pixels(const kb_image *image, int below, long enough);

typedef enum { KB_IMAGE_PNG = 0, KB_IMAGE_JPEG = 1, KB_IMAGE_TIFF = 2 } kb_image_format;
/// Writes an image file; for TIFF, `append` adds a page to an existing file. 0 on success.
int kb_image_write(const kb_image *image, const char *path, kb_image_format format, int append);
/// Writes an image-only PDF with one page per image (JPEG when `jpeg`, else lossless), each page
/// sized by its image's resolution. 0 on success.
int kb_images_write_pdf(kb_image *const *images, int count, const char *path, int jpeg);

/// One Tesseract instance. Not thread-safe: use one per thread.
typedef struct kb_ocr kb_ocr;

/// Where the language data is: $TESSDATA_PREFIX when set, else Debian's folder. Never NULL;
/// do not free.
const char *kb_ocr_default_datapath(void);
/// Starts Tesseract for `languages` ("eng", "eng+ukr") with the data in `datapath` (NULL: the
/// default). NULL when the data cannot be loaded.
kb_ocr *kb_ocr_new(const char *datapath, const char *languages);
void kb_ocr_delete(kb_ocr *ocr);

typedef struct {
    /// The recognised text (lines end with \n, paragraphs are separated by a blank line).
    char *text;
    /// Words recognised and their mean confidence (0–100; 0 when there are none).
    int words;
    float confidence;
} kb_ocr_result;

typedef enum {
    KB_OCR_OK = 0,
    /// Tesseract refused the image or failed inside.
    KB_OCR_FAILED = 1,
    /// The time limit passed before recognition finished.
    KB_OCR_TIMEOUT = 2,
} kb_ocr_status;

/// Recognises a page image; `timeout_ms` <= 0 means no limit. Free result->text with
/// kb_ocr_free_text.
kb_ocr_status kb_ocr_recognize(kb_ocr *ocr, const kb_image *image, int timeout_ms, kb_ocr_result *result);

/// Orientation and script detection (needs osd.traineddata): how many quarter turns clockwise
/// put the page upright, with Tesseract's confidence. 0 when it cannot tell (too little text,
/// no OSD data).
int kb_ocr_detect_orientation(kb_ocr *ocr, const kb_image *image, int *quarters, float *confidence);

void kb_ocr_free_text(char *text);

/// A word Tesseract recognised and its box, in pixels of the image from its top-left corner.
typedef struct {
    char *text;
    int x0, y0, x1, y1;
    float confidence;
} kb_ocr_word;

/// Recognises a page image and lists its words in reading order with their boxes; `timeout_ms`
/// <= 0 means no limit. Free the list with kb_ocr_free_words.
kb_ocr_status kb_ocr_recognize_words(kb_ocr *ocr, const kb_image *image, int timeout_ms, kb_ocr_word **words, int *count);
void kb_ocr_free_words(kb_ocr_word *words, int count);

#ifdef __cplusplus
}
#endif
#endif
