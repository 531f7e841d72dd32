// Assembles the interactive report. See page.h.
#include "export/html/page.h"

#include "export/export_common.h"
#include "report/text_safety.h"

namespace vramtrace::exporter::html {

extern const unsigned char kViewerJs[];
extern const size_t kViewerJs_size;
extern const unsigned char kViewerCss[];
extern const size_t kViewerCss_size;

std::string escape(std::string_view raw) {
    std::string text = report::escape_control_characters(raw);
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string page(std::string_view title, std::string_view header_html, const std::vector<PageRun> &runs,
                 std::string_view static_html) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n<title>vramtrace: " +
                      escape(title) + "</title>\n<style>\n";
    out.append(reinterpret_cast<const char *>(kViewerCss), kViewerCss_size);
    out += "</style></head><body>\n";
    out += header_html;
    out += "<div id=\"vt-app\"><p class=\"note\">The interactive report needs JavaScript.</p></div>\n";
    out += static_html;
    // JSON with '<' written as \u003c (append_json_string), so no "</script" can occur inside.
    out += "<script type=\"application/json\" id=\"vt-data\">{\"mode\":\"";
    out += runs.size() > 1 ? "compare" : "single";
    out += "\",\"names\":[";
    for (size_t i = 0; i < runs.size(); ++i) {
        if (i) out += ',';
        append_json_string(out, report::escape_control_characters(runs[i].name));
    }
    out += "],\"runs\":[";
    for (size_t i = 0; i < runs.size(); ++i) {
        if (i) out += ',';
        out += runs[i].data_json;
    }
    out += "]}</script>\n<script>\n";
    out.append(reinterpret_cast<const char *>(kViewerJs), kViewerJs_size);
    out += "</script>\n</body></html>\n";
    return out;
}

} // namespace vramtrace::exporter::html
