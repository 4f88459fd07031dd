//! Reading a file a user named: model files, muscle tables, motion files, study files.
//!
//! A name in a model file can point anywhere (`/dev/zero`, a FIFO, `/proc/self/environ`, a
//! 2 GB log), so every such file is read here: regular files only (checked before opening, and
//! again on the open handle, which is opened non-blocking so that a FIFO swapped in meanwhile
//! cannot block), at most [`max_file_bytes`] bytes, and UTF-8 text without NUL bytes, a problem
//! placed at the first bad byte.

use std::io::Read;
use std::path::Path;

use crate::diag::{Diagnostic, Diagnostics};

/// The largest file read when `MOLLIER_MAX_FILE_BYTES` is not set: 256 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 256 << 20;

/// The environment variable that overrides [`DEFAULT_MAX_FILE_BYTES`] (a number of bytes).
pub const MAX_FILE_BYTES_VAR: &str = "MOLLIER_MAX_FILE_BYTES";

/// The size limit in bytes: `MOLLIER_MAX_FILE_BYTES` if set, else [`DEFAULT_MAX_FILE_BYTES`].
///
/// A value that is not a whole number of bytes is an error naming the variable.
pub fn max_file_bytes() -> Result<u64, String> {
    parse_limit(std::env::var_os(MAX_FILE_BYTES_VAR).map(|v| v.to_string_lossy().into_owned()))
}

fn parse_limit(value: Option<String>) -> Result<u64, String> {
    let Some(v) = value else { return Ok(DEFAULT_MAX_FILE_BYTES) };
    v.trim().parse::<u64>().map_err(|_| {
        format!("{MAX_FILE_BYTES_VAR} must be a whole number of bytes, found `{}`", crate::diag::excerpt(&v))
    })
}

/// Read the text of the file at `path`; `what` names it in messages (e.g. "motion file").
///
/// The error is one [`Diagnostic`] on the file (as `path` displays): without a location when the
/// file cannot be read at all (missing, not a regular file, too large), at `line:col` of the
/// first byte that is not UTF-8 or is NUL. A leading byte-order mark is kept (callers strip it).
pub fn read_text(path: &Path, what: &str) -> Result<String, Diagnostics> {
    let limit = max_file_bytes().map_err(|m| {
        Box::new(
            Diagnostic::new(path.display().to_string(), "", m)
                .with_hint("unset it, or give the limit in bytes, e.g. 1073741824"),
        )
    });
    limit.and_then(|limit| read_limited(path, what, limit)).map_err(|d| Diagnostics::one(*d))
}

/// [`read_text`] with the size limit given.
fn read_limited(path: &Path, what: &str, limit: u64) -> Result<String, Box<Diagnostic>> {
    let file = path.display().to_string();
    let fail = |message: String, hint: &str| Box::new(Diagnostic::new(&file, "", message).with_hint(hint));
    let too_large = |len: u64| {
        fail(
            format!("the {what} is larger than {limit} bytes ({len} bytes or more)"),
            &format!("files larger than {limit} bytes are refused; {MAX_FILE_BYTES_VAR} raises the limit"),
        )
    };
    // the metadata first: a FIFO or device is refused without being opened
    let meta = std::fs::metadata(path).map_err(|e| fail(format!("cannot read the {what}: {e}"), HINT_PATH))?;
    if let Some(kind) = not_regular(&meta) {
        return Err(fail(format!("cannot read the {what}: it is {kind}, not a regular file"), HINT_REGULAR));
    }
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    let mut handle = open(path).map_err(|e| fail(format!("cannot read the {what}: {e}"), HINT_PATH))?;
    // the path may have been replaced between the two looks: check what was opened
    let meta = handle.metadata().map_err(|e| fail(format!("cannot read the {what}: {e}"), HINT_PATH))?;
    if let Some(kind) = not_regular(&meta) {
        return Err(fail(format!("cannot read the {what}: it is {kind}, not a regular file"), HINT_REGULAR));
    }
    // files in /proc report a size of 0: the limit holds on what is read, not on the metadata
    let mut bytes = Vec::new();
    (&mut handle)
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| fail(format!("cannot read the {what}: {e}"), HINT_PATH))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    text(&file, what, bytes)
}

const HINT_PATH: &str = "check the path and that the file can be read";
const HINT_REGULAR: &str = "name a regular file: devices, FIFOs, sockets and directories are not read";

/// The UTF-8 text of `bytes` read from `file`, or the problem at the first bad byte.
pub(crate) fn text(file: &str, what: &str, bytes: Vec<u8>) -> Result<String, Box<Diagnostic>> {
    let s = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let bytes = e.into_bytes();
            let good = match std::str::from_utf8(&bytes) {
                Err(u) => u.valid_up_to(),
                Ok(_) => bytes.len(),
            };
            let before = std::str::from_utf8(&bytes[..good]).unwrap_or_default();
            return Err(Box::new(
                Diagnostic::new(
                    file,
                    "",
                    format!("the {what} is not UTF-8 text: byte 0x{:02X} is not part of a character", bytes[good]),
                )
                .with_hint("save the file as UTF-8 (text editors offer it under \"encoding\")")
                .at_span(before, good..good),
            ));
        }
    };
    if let Some(nul) = s.find('\0') {
        // no snippet: a NUL byte means a binary file (or /proc/self/environ), not one to echo
        let mut d = Diagnostic::new(file, "", format!("the {what} contains a NUL byte: it is not a text file"))
            .with_hint("name the text file itself (TOML, JSON or CSV)")
            .at_span(&s, nul..nul + 1);
        d.snippet = None;
        return Err(Box::new(d));
    }
    Ok(s)
}

/// What a file that is not a regular file is ("a directory", "a FIFO", ...).
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_char_device() || t.is_block_device() {
            return Some("a device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

#[cfg(unix)]
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("mollier-format-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir.join(name)
    }

    #[test]
    fn the_limit_is_the_default_or_the_variable() {
        assert_eq!(parse_limit(None), Ok(256 * 1024 * 1024));
        assert_eq!(parse_limit(Some(" 1000 ".into())), Ok(1000));
        let e = parse_limit(Some("1 GB".into())).unwrap_err();
        assert!(e.contains("MOLLIER_MAX_FILE_BYTES") && e.contains("`1 GB`"), "{e}");
    }

    #[test]
    fn files_over_the_limit_are_refused_and_at_it_are_read() {
        let p = temp("ten.toml");
        std::fs::write(&p, "0123456789").expect("write");
        assert_eq!(read_limited(&p, "model file", 10).as_deref(), Ok("0123456789"));
        let d = read_limited(&p, "model file", 9).unwrap_err();
        assert!(d.message.contains("larger than 9 bytes"), "{}", d.message);
        assert!(d.hint.as_deref().is_some_and(|h| h.contains(MAX_FILE_BYTES_VAR)));
    }

    #[test]
    fn directories_devices_and_fifos_are_refused_without_reading() {
        let dir = std::env::temp_dir();
        let d = read_limited(&dir, "model file", 1000).unwrap_err();
        assert!(d.message.ends_with("it is a directory, not a regular file"), "{}", d.message);
        #[cfg(unix)]
        {
            // /dev/zero never ends: it must be refused, not read up to the limit
            let d = read_limited(Path::new("/dev/zero"), "model file", u64::MAX).unwrap_err();
            assert!(d.message.ends_with("it is a device, not a regular file"), "{}", d.message);
            let fifo = temp("pipe");
            let _ = std::fs::remove_file(&fifo);
            let c = std::ffi::CString::new(fifo.display().to_string()).expect("path");
            // SAFETY: `c` is a NUL-terminated path that outlives the call
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
            // a FIFO with no writer would block an ordinary open: this returns at once
            let d = read_limited(&fifo, "motion file", 1000).unwrap_err();
            assert!(d.message.ends_with("it is a FIFO (named pipe), not a regular file"), "{}", d.message);
            assert!(d.location.is_none());
            let _ = std::fs::remove_file(&fifo);
        }
    }

    #[test]
    fn a_missing_file_says_so() {
        let d = read_limited(&temp("missing.toml"), "muscle table", 1000).unwrap_err();
        assert!(d.message.starts_with("cannot read the muscle table: "), "{}", d.message);
    }

    #[test]
    fn invalid_utf8_is_placed_at_its_byte() {
        let d = text("m.toml", "model file", b"a = 1\n# caf\xe9 = 2\n".to_vec()).unwrap_err();
        assert_eq!(
            d.headline(),
            "m.toml:2:6: error: the model file is not UTF-8 text: byte 0xE9 is not part of a character"
        );
        // a character of several bytes before it counts as one column
        let d = text("m.toml", "model file", "µ\u{20}\u{ff}".bytes().chain([0xff]).collect()).unwrap_err();
        assert_eq!(d.location.map(|l| (l.line, l.column)), Some((1, 4)));
    }

    #[test]
    fn a_nul_byte_is_not_text_and_is_not_echoed() {
        let d = text("env", "model file", b"SECRET=1\0HOME=/root\0".to_vec()).unwrap_err();
        assert_eq!(d.location.map(|l| (l.line, l.column)), Some((1, 9)));
        assert!(d.snippet.is_none());
        assert!(!d.render().contains("SECRET"), "{}", d.render());
    }
}
