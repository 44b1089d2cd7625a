#include "kb_poppler.h"

#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-global.h>
#include <poppler/cpp/poppler-image.h>
#include <poppler/cpp/poppler-page.h>
#include <poppler/cpp/poppler-page-renderer.h>
#include <poppler/cpp/poppler-toc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

struct kb_pdf {
    std::unique_ptr<poppler::document> document;
    std::vector<std::pair<int, std::string>> outline;
};

namespace {

void silent(const std::string &, void *) {}

char *copy(const std::string &text) {
    char *out = static_cast<char *>(std::malloc(text.size() + 1));
    if (!out) return nullptr;
    std::memcpy(out, text.data(), text.size());
    out[text.size()] = 0;
    return out;
}

std::string utf8(const poppler::ustring &text) {
    poppler::byte_array bytes = text.to_utf8();
    return std::string(bytes.begin(), bytes.end());
}

void flatten(const poppler::toc_item *item, int level, std::vector<std::pair<int, std::string>> &out) {
    for (poppler::toc_item *child : item->children()) {
        out.emplace_back(level, utf8(child->title()));
        flatten(child, level + 1, out);
    }
}

}  // namespace

extern "C" {

}  // extern "C"

namespace {

// Takes a loaded document (or nullptr) and makes the handle, or says why there is none.
kb_pdf *wrap(poppler::document *loaded, kb_pdf_status *status) {
    std::unique_ptr<poppler::document> document(loaded);
    if (!document) {
        if (status) *status = KB_PDF_DAMAGED;
        return nullptr;
    }
    if (document->is_locked()) {
        if (status) *status = KB_PDF_LOCKED;
        return nullptr;
    }
    auto pdf = new kb_pdf();
    pdf->document = std::move(document);
    std::unique_ptr<poppler::toc> toc(pdf->document->create_toc());
    if (toc && toc->root()) flatten(toc->root(), 1, pdf->outline);
    if (status) *status = KB_PDF_OK;
    return pdf;
}

}  // namespace

extern "C" {

kb_pdf *kb_pdf_open(const char *path, const char *password, kb_pdf_status *status) {
    try {
        poppler::set_debug_error_function(silent, nullptr);
        std::string pass = password ? password : "";
        return wrap(poppler::document::load_from_file(path, pass, pass), status);
    } catch (...) {
        if (status) *status = KB_PDF_INTERNAL;
        return nullptr;
    }
}

kb_pdf *kb_pdf_open_data(const char *bytes, int length, const char *password, kb_pdf_status *status) {
    try {
        poppler::set_debug_error_function(silent, nullptr);
        std::string pass = password ? password : "";
        return wrap(poppler::document::load_from_raw_data(bytes, length, pass, pass), status);
    } catch (...) {
        if (status) *status = KB_PDF_INTERNAL;
        return nullptr;
    }
}

void kb_pdf_close(kb_pdf *pdf) {
    try { delete pdf; } catch (...) {}
}

int kb_pdf_page_count(const kb_pdf *pdf) {
    try { return pdf ? pdf->document->pages() : 0; } catch (...) { return 0; }
}

int kb_pdf_is_encrypted(const kb_pdf *pdf) {
    try { return pdf && pdf->document->is_encrypted() ? 1 : 0; } catch (...) { return 0; }
}

char *kb_pdf_page_text(const kb_pdf *pdf, int index) {
    try {
        if (!pdf || index < 0 || index >= pdf->document->pages()) return nullptr;
        std::unique_ptr<poppler::page> page(pdf->document->create_page(index));
        if (!page) return copy("");
        return copy(utf8(page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout)));
    } catch (...) {
        return nullptr;
    }
}

char *kb_pdf_page_label(const kb_pdf *pdf, int index) {
    try {
        if (!pdf || index < 0 || index >= pdf->document->pages()) return nullptr;
        std::unique_ptr<poppler::page> page(pdf->document->create_page(index));
        if (!page) return copy("");
        return copy(utf8(page->label()));
    } catch (...) {
        return nullptr;
    }
}

char *kb_pdf_info(const kb_pdf *pdf, const char *key) {
    try {
        if (!pdf || !key) return nullptr;
        std::string value = utf8(pdf->document->info_key(key));
        return value.empty() ? nullptr : copy(value);
    } catch (...) {
        return nullptr;
    }
}

long long kb_pdf_creation_date(const kb_pdf *pdf) {
    try { return pdf ? static_cast<long long>(pdf->document->get_creation_date_t()) : -1; } catch (...) { return -1; }
}

kb_pdf_words *kb_pdf_page_words(const kb_pdf *pdf, int index) {
    kb_pdf_words *out = nullptr;
    try {
        if (!pdf || index < 0 || index >= pdf->document->pages()) return nullptr;
        std::unique_ptr<poppler::page> page(pdf->document->create_page(index));
        std::vector<poppler::text_box> boxes;
        if (page) boxes = page->text_list();
        std::vector<kb_pdf_word> words;
        std::vector<unsigned int> chars;
        std::vector<double> left, right;
        words.reserve(boxes.size());
        for (const poppler::text_box &box : boxes) {
            poppler::ustring text = box.text();
            poppler::rectf r = box.bbox();
            kb_pdf_word word{r.x(), r.y(), r.right(), r.bottom(), box.has_space_after() ? 1 : 0, box.rotation(),
                             static_cast<int>(chars.size()), 0};
            for (size_t i = 0; i < text.size(); ++i) {
                unsigned int unit = text[i];
                size_t at = i;
                if (unit >= 0xD800 && unit < 0xDC00 && i + 1 < text.size() && text[i + 1] >= 0xDC00 && text[i + 1] < 0xE000) {
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (text[i + 1] - 0xDC00);
                    ++i;
                }
                poppler::rectf c = box.char_bbox(at);
                chars.push_back(unit);
                left.push_back(c.x());
                right.push_back(c.right());
            }
            word.char_count = static_cast<int>(chars.size()) - word.first_char;
            words.push_back(word);
        }
        out = static_cast<kb_pdf_words *>(std::calloc(1, sizeof(kb_pdf_words)));
        if (!out) return nullptr;
        out->word_count = static_cast<int>(words.size());
        out->char_count = static_cast<int>(chars.size());
        out->words = static_cast<kb_pdf_word *>(std::malloc(sizeof(kb_pdf_word) * (words.size() + 1)));
        out->chars = static_cast<unsigned int *>(std::malloc(sizeof(unsigned int) * (chars.size() + 1)));
        out->char_x0 = static_cast<double *>(std::malloc(sizeof(double) * (chars.size() + 1)));
        out->char_x1 = static_cast<double *>(std::malloc(sizeof(double) * (chars.size() + 1)));
        if (!out->words || !out->chars || !out->char_x0 || !out->char_x1) {
            kb_pdf_words_free(out);
            return nullptr;
        }
        std::copy(words.begin(), words.end(), out->words);
        std::copy(chars.begin(), chars.end(), out->chars);
        std::copy(left.begin(), left.end(), out->char_x0);
        std::copy(right.begin(), right.end(), out->char_x1);
        return out;
    } catch (...) {
        kb_pdf_words_free(out);
        return nullptr;
    }
}

void kb_pdf_words_free(kb_pdf_words *words) {
    if (!words) return;
    std::free(words->words);
    std::free(words->chars);
    std::free(words->char_x0);
    std::free(words->char_x1);
    std::free(words);
}

char *kb_pdf_largest_text(const kb_pdf *pdf, int max_pages) {
    try {
        if (!pdf) return nullptr;
        double largest = 0;
        int best_page = -1;
        int pages = std::min(max_pages, pdf->document->pages());
        for (int i = 0; i < pages; i++) {
            std::unique_ptr<poppler::page> page(pdf->document->create_page(i));
            if (!page) continue;
            for (const poppler::text_box &box : page->text_list(poppler::page::text_list_include_font)) {
                if (box.get_font_size() > largest + 0.01) {
                    largest = box.get_font_size();
                    best_page = i;
                }
            }
        }
        if (best_page < 0) return nullptr;
        std::unique_ptr<poppler::page> page(pdf->document->create_page(best_page));
        std::string out;
        int words = 0;
        bool started = false;
        for (const poppler::text_box &box : page->text_list(poppler::page::text_list_include_font)) {
            bool large = box.get_font_size() >= largest - 0.5;
            if (large) {
                if (!out.empty()) out += ' ';
                out += utf8(box.text());
                started = true;
                if (++words >= 30) break;
            } else if (started) {
                break;
            }
        }
        return out.empty() ? nullptr : copy(out);
    } catch (...) {
        return nullptr;
    }
}

int kb_pdf_outline_count(const kb_pdf *pdf) { return pdf ? static_cast<int>(pdf->outline.size()) : 0; }

int kb_pdf_outline_level(const kb_pdf *pdf, int index) {
    if (!pdf || index < 0 || index >= static_cast<int>(pdf->outline.size())) return 0;
    return pdf->outline[index].first;
}

char *kb_pdf_outline_title(const kb_pdf *pdf, int index) {
    try {
        if (!pdf || index < 0 || index >= static_cast<int>(pdf->outline.size())) return nullptr;
        return copy(pdf->outline[index].second);
    } catch (...) {
        return nullptr;
    }
}

int kb_pdf_page_size(const kb_pdf *pdf, int index, double *width, double *height) {
    try {
        if (!pdf || index < 0 || index >= pdf->document->pages()) return 0;
        std::unique_ptr<poppler::page> page(pdf->document->create_page(index));
        if (!page) return 0;
        poppler::rectf box = page->page_rect(poppler::crop_box);
        bool turned = page->orientation() == poppler::page::landscape || page->orientation() == poppler::page::seascape;
        *width = turned ? box.height() : box.width();
        *height = turned ? box.width() : box.height();
        return 1;
    } catch (...) {
        return 0;
    }
}

unsigned char *kb_pdf_render_gray(const kb_pdf *pdf, int index, int dpi, int *width, int *height, int *stride) {
    try {
        if (!pdf || index < 0 || index >= pdf->document->pages() || dpi <= 0) return nullptr;
        std::unique_ptr<poppler::page> page(pdf->document->create_page(index));
        if (!page) return nullptr;
        poppler::page_renderer renderer;
        renderer.set_image_format(poppler::image::format_gray8);
        renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
        renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
        poppler::image image = renderer.render_page(page.get(), dpi, dpi);
        if (!image.is_valid() || image.format() != poppler::image::format_gray8) return nullptr;
        size_t bytes = static_cast<size_t>(image.bytes_per_row()) * static_cast<size_t>(image.height());
        unsigned char *out = static_cast<unsigned char *>(std::malloc(bytes));
        if (!out) return nullptr;
        std::memcpy(out, image.const_data(), bytes);
        *width = image.width();
        *height = image.height();
        *stride = image.bytes_per_row();
        return out;
    } catch (...) {
        return nullptr;
    }
}

int kb_pdf_render_png(const kb_pdf *pdf, int index, double dpi, const char *path, int *width, int *height) {
    try {
        if (!pdf || !path || index < 0 || index >= pdf->document->pages() || !(dpi > 0)) return 0;
        std::unique_ptr<poppler::page> page(pdf->document->create_page(index));
        if (!page) return 0;
        poppler::page_renderer renderer;
        renderer.set_image_format(poppler::image::format_rgb24);
        renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
        renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
        renderer.set_paper_color(0xffffffff);
        poppler::image image = renderer.render_page(page.get(), dpi, dpi);
        if (!image.is_valid() || !image.save(path, "png")) return 0;
        *width = image.width();
        *height = image.height();
        return 1;
    } catch (...) {
        return 0;
    }
}

void kb_pdf_free(void *pointer) { std::free(pointer); }

}  // extern "C"
