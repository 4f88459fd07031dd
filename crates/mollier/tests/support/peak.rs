//! This process's memory from `/proc/self/status` (Linux), for the memory tests and benchmarks:
//! `VmHWM`, the peak resident memory, and `VmRSS`, the resident memory now.

/// A `/proc/self/status` memory field (`"VmHWM:"`, `"VmRSS:"`) in bytes; `None` where there is
/// no such file or field.
pub fn status_bytes(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? * 1024.0)
}
