#include "kb_ocr.h"

#include <leptonica/allheaders.h>
#include <tesseract/capi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

// Tesseract runs parts of its LSTM with OpenMP teams of a fixed size (num_threads clauses, which
// omp_set_num_threads does not override); on two cores that oversubscribes the machine and is ~6x
// slower than one thread. kb runs one Tesseract per worker thread instead, so every thread that
// calls Tesseract first makes OpenMP parallel regions inactive for itself (max active levels 0,
// a per-thread setting in libgomp: every region then runs on the calling thread alone).
extern void omp_set_max_active_levels(int);
static void single_threaded(void) { omp_set_max_active_levels(0); }

struct kb_image {
    PIX *pix;
};

struct kb_ocr {
    TessBaseAPI *api;
    TessBaseAPI *osd;  // created on first orientation question; NULL until then
    char *datapath;
    int osd_failed;
};

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static void make_quiet(void) { setMsgSeverity(L_SEVERITY_NONE); }
static void quiet(void) { pthread_once(&quiet_once, make_quiet); }

static kb_image *wrap(PIX *pix) {
    if (!pix) return NULL;
    kb_image *image = malloc(sizeof *image);
    if (!image) {
        pixDestroy(&pix);
        return NULL;
    }
    image->pix = pix;
    return image;
}

// Grey, 8 bits, no colour map: what kb hands to Tesseract and writes.
static PIX *grey(PIX *pix) {
    if (!pix) return NULL;
    if (pixGetDepth(pix) == 8 && !pixGetColormap(pix)) return pix;
    PIX *out = pixConvertTo8(pix, 0);
    if (out) pixCopyResolution(out, pix);
    pixDestroy(&pix);
    return out;
}

kb_image *kb_image_from_gray(const unsigned char *pixels, int width, int height, int stride, int dpi) {
    quiet();
    if (!pixels || width <= 0 || height <= 0 || stride < width) return NULL;
    PIX *pix = pixCreate(width, height, 8);
    if (!pix) return NULL;
    l_uint32 *data = pixGetData(pix);
    l_int32 wpl = pixGetWpl(pix);
    for (int y = 0; y < height; y++) {
        l_uint32 *line = data + (size_t)y * wpl;
        const unsigned char *row = pixels + (size_t)y * stride;
        for (int x = 0; x < width; x++) SET_DATA_BYTE(line, x, row[x]);
    }
    pixSetResolution(pix, dpi, dpi);
    return wrap(pix);
}

static int is_tiff(l_int32 format) {
    return format == IFF_TIFF || format == IFF_TIFF_PACKBITS || format == IFF_TIFF_RLE || format == IFF_TIFF_G3 ||
           format == IFF_TIFF_G4 || format == IFF_TIFF_LZW || format == IFF_TIFF_ZIP || format == IFF_TIFF_JPEG;
}

int kb_image_count(const char *path) {
    quiet();
    l_int32 format = IFF_UNKNOWN;
    if (!path || findFileFormat(path, &format) != 0 || format == IFF_UNKNOWN) return 0;
    if (!is_tiff(format)) return 1;
    FILE *file = fopenReadStream(path);
    if (!file) return 0;
    l_int32 count = 0;
    if (tiffGetCount(file, &count) != 0) count = 0;
    fclose(file);
    return count;
}

kb_image *kb_image_read(const char *path, int index) {
    quiet();
    l_int32 format = IFF_UNKNOWN;
    if (!path || index < 0 || findFileFormat(path, &format) != 0) return NULL;
    if (is_tiff(format)) return wrap(grey(pixReadTiff(path, index)));
    if (index != 0) return NULL;
    return wrap(grey(pixRead(path)));
}

int kb_image_count_data(const unsigned char *data, size_t size) {
    quiet();
    l_int32 format = IFF_UNKNOWN;
    if (!data || size == 0 || findFileFormatBuffer(data, &format) != 0 || format == IFF_UNKNOWN) return 0;
    if (!is_tiff(format)) return 1;
    // Leptonica counts a TIFF's pages from a file only; in memory, read headers until one fails.
    l_int32 count = 0, w, h, bps, spp, res, cmap, fmt;
    while (readHeaderMemTiff(data, size, count, &w, &h, &bps, &spp, &res, &cmap, &fmt) == 0) count++;
    return count;
}

int kb_image_size_data(const unsigned char *data, size_t size, int index, int *width, int *height) {
    quiet();
    l_int32 format = IFF_UNKNOWN, w = 0, h = 0, bps, spp, res, cmap, fmt;
    if (!data || size == 0 || index < 0 || findFileFormatBuffer(data, &format) != 0) return 0;
    if (is_tiff(format)) {
        if (readHeaderMemTiff(data, size, index, &w, &h, &bps, &spp, &res, &cmap, &fmt) != 0) return 0;
    } else {
        if (index != 0 || pixReadHeaderMem(data, size, &fmt, &w, &h, &bps, &spp, &cmap) != 0) return 0;
    }
    if (width) *width = w;
    if (height) *height = h;
    return 1;
}

kb_image *kb_image_read_data(const unsigned char *data, size_t size, int index) {
    quiet();
    l_int32 format = IFF_UNKNOWN;
    if (!data || size == 0 || index < 0 || findFileFormatBuffer(data, &format) != 0) return NULL;
    if (is_tiff(format)) return wrap(grey(pixReadMemTiff(data, size, index)));
    if (index != 0) return NULL;
    return wrap(grey(pixReadMem(data, size)));
}

int kb_image_render_png(const unsigned char *data, size_t size, int index, int width, int max_height,
                        const char *path, int *out_width, int *out_height) {
    quiet();
    l_int32 format = IFF_UNKNOWN;
    if (!data || size == 0 || index < 0 || width <= 0 || max_height <= 0 || !path ||
        findFileFormatBuffer(data, &format) != 0)
        return 0;
    PIX *read = is_tiff(format) ? pixReadMemTiff(data, size, index) : (index == 0 ? pixReadMem(data, size) : NULL);
    if (!read) return 0;
    // Colour stays colour (32 bits), everything else becomes 8-bit grey: both scale smoothly.
    PIX *shown = pixGetColormap(read) ? pixRemoveColormap(read, REMOVE_CMAP_BASED_ON_SRC)
                 : pixGetDepth(read) == 32 ? pixClone(read) : pixConvertTo8(read, 0);
    pixDestroy(&read);
    if (!shown) return 0;
    if (pixGetDepth(shown) != 8 && pixGetDepth(shown) != 32) {
        PIX *deep = pixConvertTo32(shown);
        pixDestroy(&shown);
        if (!deep) return 0;
        shown = deep;
    }
    float scale = (float)width / (float)pixGetWidth(shown);
    if ((float)pixGetHeight(shown) * scale > (float)max_height) scale = (float)max_height / (float)pixGetHeight(shown);
    PIX *scaled = pixScale(shown, scale, scale);
    pixDestroy(&shown);
    if (!scaled) return 0;
    int written = pixWrite(path, scaled, IFF_PNG) == 0;
    if (written) {
        if (out_width) *out_width = pixGetWidth(scaled);
        if (out_height) *out_height = pixGetHeight(scaled);
    }
    pixDestroy(&scaled);
    return written;
}

void kb_image_free(kb_image *image) {
    if (!image) return;
    pixDestroy(&image->pix);
    free(image);
}

int kb_image_width(const kb_image *image) { return image ? pixGetWidth(image->pix) : 0; }
int kb_image_height(const kb_image *image) { return image ? pixGetHeight(image->pix) : 0; }
int kb_image_dpi(const kb_image *image) { return image ? pixGetXRes(image->pix) : 0; }
void kb_image_set_dpi(kb_image *image, int dpi) {
    if (image) pixSetResolution(image->pix, dpi, dpi);
}

kb_image *kb_image_rotated(const kb_image *image, int quarters) {
    if (!image) return NULL;
    PIX *pix = pixRotateOrth(image->pix, ((quarters % 4) + 4) % 4);
    if (pix) pixCopyResolution(pix, image->pix);
    return wrap(pix);
}

kb_image *kb_image_scaled(const kb_image *image, float scale) {
    if (!image || scale <= 0) return NULL;
    PIX *pix = pixScale(image->pix, scale, scale);
    if (!pix) return NULL;
    int dpi = (int)(pixGetXRes(image->pix) * scale + 0.5f);
    pixSetResolution(pix, dpi, dpi);
    return wrap(grey(pix));
}

int kb_image_pixel(const kb_image *image, int x, int y) {
    l_uint32 value = 0;
    if (!image || x < 0 || y < 0 || x >= pixGetWidth(image->pix) || y >= pixGetHeight(image->pix)) return -1;
    if (pixGetPixel(image->pix, x, y, &value) != 0) return -1;
    return (int)value;
}

long kb_image_dark_pixels(const kb_image *image, int below, long enough) {
    if (!image || pixGetDepth(image->pix) != 8) return -1;
    l_int32 width = pixGetWidth(image->pix), height = pixGetHeight(image->pix), wpl = pixGetWpl(image->pix);
    const l_uint32 *data = pixGetData(image->pix);
    long dark = 0;
    for (l_int32 y = 0; y < height && dark < enough; y++) {
        const l_uint32 *line = data + (size_t)y * wpl;
        for (l_int32 x = 0; x < width; x++) dark += GET_DATA_BYTE(line, x) < below;
    }
    return dark;
}

int kb_image_write(const kb_image *image, const char *path, kb_image_format format, int append) {
    quiet();
    if (!image || !path) return 1;
    switch (format) {
    case KB_IMAGE_PNG: return pixWrite(path, image->pix, IFF_PNG);
    case KB_IMAGE_JPEG: return pixWrite(path, image->pix, IFF_JFIF_JPEG);
    case KB_IMAGE_TIFF: return pixWriteTiff(path, image->pix, IFF_TIFF_ZIP, append ? "a" : "w");
    }
    return 1;
}

int kb_images_write_pdf(kb_image *const *images, int count, const char *path, int jpeg) {
    quiet();
    if (!images || count <= 0 || !path) return 1;
    PIXA *pixa = pixaCreate(count);
    if (!pixa) return 1;
    for (int i = 0; i < count; i++) {
        if (!images[i] || pixaAddPix(pixa, images[i]->pix, L_COPY) != 0) {
            pixaDestroy(&pixa);
            return 1;
        }
    }
    int status = pixaConvertToPdf(pixa, 0, 1.0f, jpeg ? L_JPEG_ENCODE : L_FLATE_ENCODE, 85, NULL, path);
    pixaDestroy(&pixa);
    return status;
}

const char *kb_ocr_default_datapath(void) {
    const char *prefix = getenv("TESSDATA_PREFIX");
    if (prefix && *prefix) return prefix;
    static const char *candidates[] = {"/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata",
                                       "/usr/share/tessdata", "/usr/local/share/tessdata"};
    struct stat info;
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        if (stat(candidates[i], &info) == 0 && S_ISDIR(info.st_mode)) return candidates[i];
    }
    return candidates[0];
}

static TessBaseAPI *start(const char *datapath, const char *languages, TessPageSegMode mode) {
    TessBaseAPI *api = TessBaseAPICreate();
    if (!api) return NULL;
    TessBaseAPISetVariable(api, "debug_file", "/dev/null");
    if (TessBaseAPIInit3(api, datapath, languages) != 0) {
        TessBaseAPIDelete(api);
        return NULL;
    }
    TessBaseAPISetPageSegMode(api, mode);
    return api;
}

kb_ocr *kb_ocr_new(const char *datapath, const char *languages) {
    quiet();
    single_threaded();
    if (!languages || !*languages) return NULL;
    const char *path = datapath && *datapath ? datapath : kb_ocr_default_datapath();
    TessBaseAPI *api = start(path, languages, PSM_AUTO);
    if (!api) return NULL;
    kb_ocr *ocr = calloc(1, sizeof *ocr);
    char *copy = strdup(path);
    if (!ocr || !copy) {
        free(ocr);
        free(copy);
        TessBaseAPIEnd(api);
        TessBaseAPIDelete(api);
        return NULL;
    }
    ocr->api = api;
    ocr->datapath = copy;
    return ocr;
}

void kb_ocr_delete(kb_ocr *ocr) {
    if (!ocr) return;
    TessBaseAPIEnd(ocr->api);
    TessBaseAPIDelete(ocr->api);
    if (ocr->osd) {
        TessBaseAPIEnd(ocr->osd);
        TessBaseAPIDelete(ocr->osd);
    }
    free(ocr->datapath);
    free(ocr);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000.0 + t.tv_nsec / 1e6;
}

static void set_resolution(TessBaseAPI *api, const kb_image *image) {
    int dpi = pixGetXRes(image->pix);
    TessBaseAPISetSourceResolution(api, dpi >= 50 && dpi <= 2400 ? dpi : 300);
}

// Runs recognition on the page (within `timeout_ms` when > 0); on failure the engine is cleared.
static kb_ocr_status recognize(kb_ocr *ocr, const kb_image *image, int timeout_ms) {
    single_threaded();
    TessBaseAPISetImage2(ocr->api, image->pix);
    set_resolution(ocr->api, image);
    ETEXT_DESC *monitor = TessMonitorCreate();
    if (monitor && timeout_ms > 0) TessMonitorSetDeadlineMSecs(monitor, timeout_ms);
    double started = now_ms();
    int status = TessBaseAPIRecognize(ocr->api, monitor);
    if (monitor) TessMonitorDelete(monitor);
    if (status != 0) {
        int late = timeout_ms > 0 && now_ms() - started >= timeout_ms;
        TessBaseAPIClear(ocr->api);
        return late ? KB_OCR_TIMEOUT : KB_OCR_FAILED;
    }
    return KB_OCR_OK;
}

kb_ocr_status kb_ocr_recognize(kb_ocr *ocr, const kb_image *image, int timeout_ms, kb_ocr_result *result) {
    if (!ocr || !image || !result) return KB_OCR_FAILED;
    memset(result, 0, sizeof *result);
    kb_ocr_status recognised = recognize(ocr, image, timeout_ms);
    if (recognised != KB_OCR_OK) return recognised;
    char *text = TessBaseAPIGetUTF8Text(ocr->api);
    result->text = strdup(text ? text : "");
    if (text) TessDeleteText(text);
    int *confidences = TessBaseAPIAllWordConfidences(ocr->api);
    if (confidences) {
        long sum = 0;
        int count = 0;
        for (; confidences[count] >= 0; count++) sum += confidences[count];
        result->words = count;
        result->confidence = count > 0 ? (float)sum / (float)count : 0;
        TessDeleteIntArray(confidences);
    }
    TessBaseAPIClear(ocr->api);
    return result->text ? KB_OCR_OK : KB_OCR_FAILED;
}

kb_ocr_status kb_ocr_recognize_words(kb_ocr *ocr, const kb_image *image, int timeout_ms, kb_ocr_word **words, int *count) {
    if (!ocr || !image || !words || !count) return KB_OCR_FAILED;
    *words = NULL;
    *count = 0;
    kb_ocr_status recognised = recognize(ocr, image, timeout_ms);
    if (recognised != KB_OCR_OK) return recognised;
    TessResultIterator *it = TessBaseAPIGetIterator(ocr->api);
    int capacity = 0;
    kb_ocr_status outcome = KB_OCR_OK;
    if (it) {
        TessPageIterator *page = TessResultIteratorGetPageIterator(it);
        do {
            char *text = TessResultIteratorGetUTF8Text(it, RIL_WORD);
            if (!text) continue;
            int left, top, right, bottom;
            if (!text[0] || !TessPageIteratorBoundingBox(page, RIL_WORD, &left, &top, &right, &bottom)) {
                TessDeleteText(text);
                continue;
            }
            if (*count == capacity) {
                capacity = capacity ? capacity * 2 : 256;
                kb_ocr_word *grown = realloc(*words, (size_t)capacity * sizeof **words);
                if (!grown) {
                    TessDeleteText(text);
                    outcome = KB_OCR_FAILED;
                    break;
                }
                *words = grown;
            }
            kb_ocr_word *word = &(*words)[(*count)++];
            word->text = strdup(text);
            word->x0 = left;
            word->y0 = top;
            word->x1 = right;
            word->y1 = bottom;
            word->confidence = TessResultIteratorConfidence(it, RIL_WORD);
            TessDeleteText(text);
        } while (TessResultIteratorNext(it, RIL_WORD));
        TessResultIteratorDelete(it);
    }
    TessBaseAPIClear(ocr->api);
    if (outcome != KB_OCR_OK) {
        kb_ocr_free_words(*words, *count);
        *words = NULL;
        *count = 0;
    }
    return outcome;
}

void kb_ocr_free_words(kb_ocr_word *words, int count) {
    if (!words) return;
    for (int i = 0; i < count; i++) free(words[i].text);
    free(words);
}

int kb_ocr_detect_orientation(kb_ocr *ocr, const kb_image *image, int *quarters, float *confidence) {
    if (!ocr || !image || ocr->osd_failed) return 0;
    if (!ocr->osd) {
        ocr->osd = start(ocr->datapath, "osd", PSM_OSD_ONLY);
        if (!ocr->osd) {
            ocr->osd_failed = 1;
            return 0;
        }
    }
    single_threaded();
    TessBaseAPISetImage2(ocr->osd, image->pix);
    set_resolution(ocr->osd, image);
    int degrees = 0;
    float orientation_confidence = 0, script_confidence = 0;
    const char *script = NULL;
    int found = TessBaseAPIDetectOrientationScript(ocr->osd, &degrees, &orientation_confidence, &script, &script_confidence);
    TessBaseAPIClear(ocr->osd);
    if (!found) return 0;
    // Tesseract gives how far the page was turned clockwise from upright; turning it that far
    // back is the rest of the full turn, clockwise (checked by OCRTests' rotated pages).
    *quarters = (4 - ((degrees / 90) % 4 + 4) % 4) % 4;
    *confidence = orientation_confidence;
    return 1;
}

void kb_ocr_free_text(char *text) { free(text); }
