// The interactive HTML report as one self-contained page: a static head written here (escaped
// text), the data of one or two snapshots (page_data.h) in <script type="application/json">, and
// the viewer's JavaScript and CSS (viewer_*.js, viewer.css), embedded at build time. No network.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vramtrace::exporter::html {

// HTML text and attribute values: markup characters as entities, control characters (ESC, CR, a
// lone byte that is not UTF-8) as visible \xHH (report::escape_control_characters).
std::string escape(std::string_view raw);

struct PageRun {
    std::string name;      // "base" / "new" on a compare page, "" on a single one
    std::string data_json; // page_data_json
};

// The page. `title` is raw text (escaped here); `static_html` is markup made of escaped text that
// goes after the viewer (tables that read without JavaScript). One run: a report; two: a compare
// page (the first the base).
std::string page(std::string_view title, std::string_view header_html, const std::vector<PageRun> &runs,
                 std::string_view static_html);

} // namespace vramtrace::exporter::html
