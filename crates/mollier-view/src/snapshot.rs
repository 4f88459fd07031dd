//! Pictures of a page without a display: headless Chromium opens the page from disk with
//! `?export=...`, the page writes each asked frame's canvas as a PNG data URL into
//! `#mollier-export`, and `--dump-dom` hands the DOM back on standard output. The PNGs are the
//! canvas's own pixels (`canvas.toDataURL`), not a screenshot of the window.

use std::io::Read;
use std::path::{Path, PathBuf};
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
    /// The camera: `front`, `side` or `top`, or from along an axis (`x`, `-x`, `y`, `-y`, `z`, `-z`).
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
    let url = format!("file://{}?{}", page.display(), query(&format!("export={list}"), shot));
    let mut cmd = headless(&chromium, shot, &dir);
    cmd.arg("--dump-dom");
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

/// The page's query: `first`, then the shot's size, camera and hidden groups.
fn query(first: &str, shot: &Shot) -> String {
    let (w, h) = shot.size;
    let mut query = format!("{first}&size={w}x{h}&view={}", shot.view);
    if !shot.hide.is_empty() {
        query.push_str(&format!("&hide={}", shot.hide.join(",")));
    }
    query
}

/// The motion of the page `html` as a WebM video (VP8) of `fps` frames a second, every frame
/// drawn once: the page encodes its canvas with the browser's WebCodecs at the timestamps of
/// `fps` (so the video lasts frames / `fps` s however slowly the frames are drawn), and hands
/// the frames back over the DevTools protocol (`--remote-debugging-pipe`); they are put in a
/// WebM file here ([`crate::webm`]).
#[cfg(unix)]
pub fn video(html: &str, fps: f64, shot: &Shot) -> Result<Vec<u8>, SnapshotError> {
    let chromium = browser().ok_or(SnapshotError::NoBrowser)?;
    let dir = TempDir::new()?;
    let page = dir.0.join("page.html");
    std::fs::write(&page, html).map_err(|e| SnapshotError::Browser(format!("{}: {e}", page.display())))?;
    let url = format!("file://{}?{}", page.display(), query(&format!("video={fps}"), shot));
    let mut cmd = headless(&chromium, shot, &dir);
    cmd.arg("--remote-debugging-pipe").arg("about:blank");
    let mut devtools = devtools::DevTools::start(cmd, &chromium, shot.timeout)?;
    let result = (|| {
        let target = devtools.call("Target.createTarget", serde_json::json!({ "url": url }), None)?;
        let target = target["targetId"].as_str().unwrap_or_default().to_string();
        let session =
            devtools.call("Target.attachToTarget", serde_json::json!({ "targetId": target, "flatten": true }), None)?;
        let session = session["sessionId"].as_str().unwrap_or_default().to_string();
        let eval = |d: &mut devtools::DevTools, expression: &str| {
            let params = serde_json::json!({ "expression": expression, "awaitPromise": true, "returnByValue": true });
            d.call("Runtime.evaluate", params, Some(&session)).map(|r| r["result"]["value"].clone())
        };
        // the page's script has run once its promise exists
        while eval(&mut devtools, "typeof window.mollierVideo === 'object'")? != serde_json::Value::Bool(true) {
            devtools.check_time()?;
            std::thread::sleep(Duration::from_millis(100));
        }
        let text = eval(&mut devtools, "window.mollierVideo")?;
        parse_video(text.as_str().unwrap_or_default(), fps)
    })();
    devtools.close();
    result
}

/// Video needs the DevTools pipe, which is made here for Unix only.
#[cfg(not(unix))]
pub fn video(_html: &str, _fps: f64, _shot: &Shot) -> Result<Vec<u8>, SnapshotError> {
    Err(SnapshotError::Browser("--video is made on Unix only".into()))
}

/// The WebM file of the page's encoded frames (`recordVideo` in `viewer.js`).
pub(crate) fn parse_video(text: &str, fps: f64) -> Result<Vec<u8>, SnapshotError> {
    let bad = |why: &str| SnapshotError::Browser(format!("the page's video: {why}"));
    let v: serde_json::Value = serde_json::from_str(text).map_err(|_| bad("not JSON"))?;
    if let Some(e) = v["error"].as_str() {
        return Err(bad(e));
    }
    let size = |k: &str| v[k].as_u64().and_then(|x| u32::try_from(x).ok()).ok_or_else(|| bad("no size"));
    let (w, h) = (size("width")?, size("height")?);
    let frames = v["frames"].as_u64().ok_or_else(|| bad("no frame count"))?;
    let mut chunks = Vec::new();
    for c in v["chunks"].as_array().ok_or_else(|| bad("no frames"))? {
        let data = c["data"].as_str().and_then(encode::unbase64).ok_or_else(|| bad("a frame is not base64"))?;
        let time_us = c["t"].as_i64().ok_or_else(|| bad("a frame without its time"))?;
        chunks.push(crate::webm::Chunk { time_us, key: c["key"].as_bool() == Some(true), data });
    }
    if chunks.len() as u64 != frames || chunks.first().is_some_and(|c| !c.key) {
        return Err(bad(&format!("{} frames encoded of {frames}", chunks.len())));
    }
    let frame_ns = (1e9 / fps).round() as u64;
    Ok(crate::webm::webm(&chunks, w, h, frame_ns, frames as f64 * 1000.0 / fps))
}

/// Headless Chromium drawing with its software renderer at the shot's size, its profile in
/// `dir`, no window, no network asked.
fn headless(chromium: &Path, shot: &Shot, dir: &TempDir) -> Command {
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--disable-gpu-sandbox",
        "--use-angle=swiftshader",
        "--enable-unsafe-swiftshader",
        "--disable-extensions",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ]);
    cmd.arg(format!("--window-size={},{}", shot.size.0, shot.size.1));
    cmd.arg(format!("--user-data-dir={}", dir.0.join("profile").display()));
    // Chromium refuses to start as root with its sandbox; the page is Mollier's own and loads
    // nothing from the network
    if running_as_root() {
        cmd.arg("--no-sandbox");
    }
    cmd
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

/// A Chromium driven over the DevTools protocol on a pipe: JSON messages ending in NUL, read
/// by the browser on its file descriptor 3 and written on its 4.
#[cfg(unix)]
mod devtools {
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
    use std::time::{Duration, Instant};

    use super::SnapshotError;

    pub(super) struct DevTools {
        child: Child,
        to: std::fs::File,
        from: Receiver<Vec<u8>>,
        next: u64,
        deadline: Instant,
        timeout: Duration,
        name: String,
    }

    /// A pipe's (read, write) ends, close-on-exec, above the descriptors the child is given.
    fn pipe() -> Result<(OwnedFd, OwnedFd), SnapshotError> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(SnapshotError::Browser(format!("a pipe: {}", std::io::Error::last_os_error())));
        }
        let high = |fd: i32| {
            // SAFETY: fd is open (just made); F_DUPFD_CLOEXEC makes a new one at 10 or above
            let h = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
            // SAFETY: fd is ours, closed once here
            unsafe { libc::close(fd) };
            // SAFETY: h, when not -1, is a new descriptor owned by nothing else
            (h >= 0).then(|| unsafe { OwnedFd::from_raw_fd(h) })
        };
        match (high(fds[0]), high(fds[1])) {
            (Some(r), Some(w)) => Ok((r, w)),
            _ => Err(SnapshotError::Browser(format!("a pipe: {}", std::io::Error::last_os_error()))),
        }
    }

    impl DevTools {
        pub(super) fn start(mut cmd: Command, chromium: &Path, timeout: Duration) -> Result<Self, SnapshotError> {
            let (browser_reads, we_write) = pipe()?;
            let (we_read, browser_writes) = pipe()?;
            let (r, w) = (browser_reads.as_raw_fd(), browser_writes.as_raw_fd());
            // SAFETY: only dup2, async-signal-safe, between fork and exec; the descriptors are
            // open in the child (inherited) and 3 and 4 are free to replace
            unsafe {
                cmd.pre_exec(move || {
                    if libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
            let name = chromium.display().to_string();
            let child = cmd.spawn().map_err(|e| SnapshotError::Browser(format!("{name}: {e}")))?;
            drop((browser_reads, browser_writes));
            let (send, from) = channel();
            let mut reader = std::fs::File::from(we_read);
            std::thread::spawn(move || {
                let (mut buf, mut chunk) = (Vec::new(), vec![0u8; 1 << 16]);
                while let Ok(n) = reader.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    while let Some(end) = buf.iter().position(|&b| b == 0) {
                        let message: Vec<u8> = buf.drain(..=end).collect();
                        if send.send(message[..end].to_vec()).is_err() {
                            return;
                        }
                    }
                }
            });
            let to = std::fs::File::from(we_write);
            Ok(DevTools { child, to, from, next: 0, deadline: Instant::now() + timeout, timeout, name })
        }

        pub(super) fn check_time(&self) -> Result<(), SnapshotError> {
            if Instant::now() > self.deadline {
                return Err(SnapshotError::Browser(format!(
                    "{}: no video after {} s: stopped",
                    self.name,
                    self.timeout.as_secs()
                )));
            }
            Ok(())
        }

        /// Send `method` and wait for its answer's `result` (events in between are skipped).
        pub(super) fn call(
            &mut self,
            method: &str,
            params: serde_json::Value,
            session: Option<&str>,
        ) -> Result<serde_json::Value, SnapshotError> {
            self.next += 1;
            let mut msg = serde_json::json!({ "id": self.next, "method": method, "params": params });
            if let Some(s) = session {
                msg["sessionId"] = s.into();
            }
            let mut bytes = msg.to_string().into_bytes();
            bytes.push(0);
            self.to.write_all(&bytes).map_err(|e| SnapshotError::Browser(format!("{}: {e}", self.name)))?;
            loop {
                let left = self.deadline.saturating_duration_since(Instant::now());
                let raw = match self.from.recv_timeout(left) {
                    Ok(raw) => raw,
                    Err(RecvTimeoutError::Timeout) => {
                        return self.check_time().and(Err(SnapshotError::Browser("timed out".into())));
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(SnapshotError::Browser(format!(
                            "{}: the browser closed its DevTools pipe",
                            self.name
                        )));
                    }
                };
                let Ok(reply) = serde_json::from_slice::<serde_json::Value>(&raw) else { continue };
                if reply["id"].as_u64() != Some(self.next) {
                    continue;
                }
                if let Some(e) = reply.get("error") {
                    return Err(SnapshotError::Browser(format!("{}: {method}: {:.200}", self.name, e.to_string())));
                }
                if let Some(e) = reply["result"].get("exceptionDetails") {
                    return Err(SnapshotError::Browser(format!("the page: {:.200}", e.to_string())));
                }
                return Ok(reply["result"].clone());
            }
        }

        /// Ask the browser to close, and end it if it does not.
        pub(super) fn close(mut self) {
            self.deadline = Instant::now() + Duration::from_secs(10);
            let _ = self.call("Browser.close", serde_json::json!({}), None);
            let end = Instant::now() + Duration::from_secs(10);
            while Instant::now() < end {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
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

    /// The page's video JSON becomes WebM when whole: every frame there, the first a key frame;
    /// the page's own error is passed on.
    #[test]
    fn video_json_is_checked() {
        let frame = |t: i64, key: bool| serde_json::json!({ "t": t, "key": key, "data": encode::base64(b"vp8") });
        let json = |chunks: Vec<serde_json::Value>, frames: u64| {
            serde_json::json!({ "width": 32, "height": 16, "fps": 10, "frames": frames, "chunks": chunks, "error": null })
                .to_string()
        };
        let webm = parse_video(&json(vec![frame(0, true), frame(100_000, false)], 2), 10.0).unwrap();
        assert!(webm.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]));
        for bad in [
            json(vec![frame(0, true)], 2),
            json(vec![frame(0, false), frame(100_000, false)], 2),
            r#"{"error": "this browser cannot encode VP8 at 32x16"}"#.to_string(),
            "not json".to_string(),
        ] {
            assert!(parse_video(&bad, 10.0).is_err(), "{bad}");
        }
    }
}
