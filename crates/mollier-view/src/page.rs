//! The HTML page: one file, no network. It holds the three.js bundle and its licence, the
//! viewer's script and style (`assets/`), and the geometry as JSON in a
//! `<script type="application/json" id="mollier-data">` element.

use crate::Geometry;

const THREE: &str = include_str!("../assets/three.min.js");
const THREE_LICENSE: &str = include_str!("../assets/three-LICENSE");
const SCRIPT: &str = include_str!("../assets/viewer.js");
const STYLE: &str = include_str!("../assets/viewer.css");

/// Text safe inside a `<script>` element: `</` cannot close it early (`<\/` reads back the same
/// in JSON and in a JavaScript string).
fn in_script(text: &str) -> String {
    text.replace("</", "<\\/")
}

/// Text safe in HTML content or an attribute.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The page that draws `g`.
pub fn page(g: &Geometry) -> String {
    let data = in_script(&g.to_json().to_string());
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
        let s = in_script(r#"{"name":"</script><b>"}"#);
        assert!(!s.contains("</"));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["name"], "</script><b>");
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
        // the bundle and the script are embedded unchanged
        assert!(!THREE.contains("</script") && !SCRIPT.contains("</script"));
    }
}
