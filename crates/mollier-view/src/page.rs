//! The HTML page: one file, no network. It holds the three.js bundle and its licence, the
//! viewer's script and style (`assets/`), and the geometry as JSON in a
//! `<script type="application/json" id="mollier-data">` element.

use crate::Geometry;

const THREE: &str = include_str!("../assets/three.min.js");
const THREE_LICENSE: &str = include_str!("../assets/three-LICENSE");
const SCRIPT: &str = include_str!("../assets/viewer.js");
const STYLE: &str = include_str!("../assets/viewer.css");

/// Script text (the bundled code, its licence): `</` cannot close its element early (`<\/` reads
/// back the same in a JavaScript string). Only for Mollier's own text: a test checks that none of
/// it holds `<!--` or `<script`, which would put the HTML parser in its escaped states.
fn in_script(text: &str) -> String {
    text.replace("</", "<\\/")
}

/// JSON safe inside a `<script type="application/json">` data block, whatever its strings hold:
/// every `<`, `>` and `&` is written `\u003c`, `\u003e`, `\u0026`. Outside strings JSON has none
/// of them, and inside one the escape reads back the same character, so no `</script`, `<!--` or
/// `<script` of a name can end the block or keep it open (the HTML standard's "script data
/// escaped" states).
fn json_in_script(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

/// Text safe in HTML content or an attribute.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The page that draws `g`.
pub fn page(g: &Geometry) -> String {
    let data = json_in_script(&g.to_json().to_string());
    let mut html = String::with_capacity(THREE.len() + data.len() + SCRIPT.len() + 4096);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    // the page's clock starts when its first script runs (browser start-up is not the page's)
    html.push_str("<script>window.mollierStart = performance.now();</script>\n");
    html.push_str(&format!("<title>{} — Mollier view</title>\n", escape(&g.title)));
    html.push_str(&format!("<style>\n{STYLE}</style>\n</head>\n<body>\n"));
    html.push_str(&format!(
        "<script type=\"text/plain\" id=\"three-license\">\nthree.js (bundled below) is under this licence:\n{}</script>\n",
        in_script(THREE_LICENSE)
    ));
    html.push_str(&format!("<script type=\"application/json\" id=\"mollier-data\">{data}</script>\n"));
    html.push_str(&format!("<script>\n{}\n</script>\n", in_script(THREE)));
    html.push_str(&format!("<script>\n{}\n</script>\n</body>\n</html>\n", in_script(SCRIPT)));
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_text_cannot_close_its_element() {
        let s = in_script("a = '</b>';");
        assert_eq!(s, "a = '<\\/b>';");
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
        // the bundle, its licence and the script are embedded unchanged, and none of them can put
        // the parser in an escaped state
        for text in [THREE, THREE_LICENSE, SCRIPT] {
            for bad in ["</script", "<!--", "<script"] {
                assert!(!text.to_ascii_lowercase().contains(bad), "{bad}");
            }
        }
    }

    /// A name holding `<!--`, `<script` or `</script` leaves the data block whole: the block's
    /// text has no `<` at all, and it reads back to the same strings (issue 33: a title with
    /// `<!--` kept the block open and the page never ran).
    #[test]
    fn data_block_survives_any_name() {
        for name in ["<!--", "</script>", "<script>", "<!-- <script>", "a</SCRIPT >b", "x&lt;y", "<\u{2028}>"] {
            let json = serde_json::json!({ "title": name, "names": [name, "plain"] }).to_string();
            let s = json_in_script(&json);
            assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'), "{s}");
            let back: serde_json::Value = serde_json::from_str(&s).unwrap();
            assert_eq!(back["title"], name);
            assert_eq!(back["names"][0], name);
        }
    }
}
