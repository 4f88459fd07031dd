//! Pictures of a page without a display: headless Chromium opens the page from disk with
//! `?export=...`, the page writes each asked frame's canvas as a PNG data URL into
//! `#mollier-export`, and `--dump-dom` hands the DOM back on standard output. The PNGs are the
//! canvas's own pixels (`canvas.toDataURL`), not a screenshot of the window.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::encode;

/// Why pictures cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// No browser to draw with.
    #[error(
        "no Chromium to draw with: install Debian's `chromium` (apt-get install chromium) or name a Chromium or Chrome binary in MOLLIER_CHROMIUM"
    )]
    NoBrowser,
    /// The browser or its temporary files failed.
    #[error("{0}")]
    Browser(String),
}

/// How the pictures are taken.
#[derive(Clone, Debug)]
pub struct Shot {
    /// The drawing's size in pixels (width, height).
    pub size: (u32, u32),
    /// The camera: `front`, `side` or `top`.
    pub view: String,
    /// Groups hidden, as the page's `hide=` names them.
    pub hide: Vec<String>,
    /// The longest the browser may take (it is killed then).
    pub timeout: Duration,
}

impl Default for Shot {
    fn default() -> Self {
        Shot { size: (1280, 960), view: "front".into(), hide: Vec::new(), timeout: Duration::from_secs(300) }
    }
}

/// The browser: `MOLLIER_CHROMIUM` if set, else the first of `chromium`, `chromium-browser`,
/// `google-chrome` on the `PATH`.
pub fn browser() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MOLLIER_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser", "google-chrome"].map(|n| dir.join(n)))
        .find(|p| p.is_file())
}

/// Draw frames `frames` (indices of the page's frames; `None`: all) of the page `html` and return
/// each frame's index and PNG bytes, in the order drawn. Frames outside the page are skipped by
/// the page; the caller compares what came back with what it asked.
pub fn pngs(html: &str, frames: Option<&[usize]>, shot: &Shot) -> Result<Vec<(usize, Vec<u8>)>, SnapshotError> {
    let chromium = browser().ok_or(SnapshotError::NoBrowser)?;
    let dir = TempDir::new()?;
    let page = dir.0.join("page.html");
    std::fs::write(&page, html).map_err(|e| SnapshotError::Browser(format!("{}: {e}", page.display())))?;
    let list = match frames {
        Some(f) => f.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
        None => "all".into(),
    };
    let (w, h) = shot.size;
    let mut query = format!("export={list}&size={w}x{h}&view={}", shot.view);
    if !shot.hide.is_empty() {
        query.push_str(&format!("&hide={}", shot.hide.join(",")));
    }
    let url = format!("file://{}?{query}", page.display());
    let mut cmd = Command::new(&chromium);
    cmd.args([
        "--headless",
        "--disable-gpu-sandbox",
        "--use-angle=swiftshader",
        "--enable-unsafe-swiftshader",
        "--disable-extensions",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--dump-dom",
    ]);
    cmd.arg(format!("--window-size={w},{h}"));
    cmd.arg(format!("--user-data-dir={}", dir.0.join("profile").display()));
    // Chromium refuses to start as root with its sandbox; the page is Mollier's own and loads
    // nothing from the network
    if running_as_root() {
        cmd.arg("--no-sandbox");
    }
    cmd.arg(&url).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| SnapshotError::Browser(format!("{}: {e}", chromium.display())))?;
    let mut stdout = child.stdout.take().ok_or_else(|| SnapshotError::Browser("no output from the browser".into()))?;
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        stdout.read_to_string(&mut out).map(|_| out)
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > shot.timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(SnapshotError::Browser(format!(
                    "{}: no picture after {} s: stopped",
                    chromium.display(),
                    shot.timeout.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(SnapshotError::Browser(format!("{}: {e}", chromium.display()))),
        }
    };
    let dom = reader
        .join()
        .map_err(|_| SnapshotError::Browser("reading the browser's output failed".into()))?
        .map_err(|e| SnapshotError::Browser(format!("reading the browser's output: {e}")))?;
    if !status.success() {
        return Err(SnapshotError::Browser(format!("{} exited with {status}", chromium.display())));
    }
    parse_export(&dom)
}

/// The frames and PNGs of a dumped DOM's `#mollier-export`: lines `K data:image/png;base64,...`.
pub(crate) fn parse_export(dom: &str) -> Result<Vec<(usize, Vec<u8>)>, SnapshotError> {
    let start = dom
        .find("<pre id=\"mollier-export\">")
        .ok_or_else(|| SnapshotError::Browser("the page drew no picture (its script did not run to the end)".into()))?;
    let body = &dom[start + "<pre id=\"mollier-export\">".len()..];
    let body = &body[..body.find("</pre>").unwrap_or(body.len())];
    let mut out = Vec::new();
    for line in body.lines().filter(|l| !l.trim().is_empty()) {
        let bad = || SnapshotError::Browser(format!("the page wrote an unreadable picture line: {:.60}", line));
        let (k, url) = line.trim().split_once(' ').ok_or_else(bad)?;
        let k: usize = k.parse().map_err(|_| bad())?;
        let data = url.strip_prefix("data:image/png;base64,").ok_or_else(bad)?;
        let png = encode::unbase64(data).ok_or_else(bad)?;
        if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
            return Err(bad());
        }
        out.push((k, png));
    }
    Ok(out)
}

#[cfg(unix)]
fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail
    unsafe { libc::geteuid() == 0 }
}

#[cfg(not(unix))]
fn running_as_root() -> bool {
    false
}

/// A directory of its own under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, SnapshotError> {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("mollier-view-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| SnapshotError::Browser(format!("{}: {e}", dir.display())))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_lines_are_read_and_checked() {
        // a 1x1 PNG's first bytes are enough for the signature check
        let png = b"\x89PNG\r\n\x1a\nrest";
        let line = format!("3 data:image/png;base64,{}", encode::base64(png));
        let dom = format!("<html><pre id=\"mollier-export\">{line}\n</pre></html>");
        let got = parse_export(&dom).unwrap();
        assert_eq!(got, vec![(3, png.to_vec())]);
        for bad in ["x data:image/png;base64,AAAA", "3 data:image/jpeg;base64,AAAA", "3 data:image/png;base64,!!", "3"]
        {
            let dom = format!("<pre id=\"mollier-export\">{bad}</pre>");
            assert!(parse_export(&dom).is_err(), "{bad}");
        }
        assert!(parse_export("<html></html>").is_err());
    }
}
