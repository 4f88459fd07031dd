//! Helpers the viewer's tests share.

/// Base64 back to bytes (RFC 4648), written apart from the encoder.
pub fn decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let mut out = Vec::new();
    for chunk in s.as_bytes().chunks(4) {
        let n = chunk.iter().filter(|&&c| c != b'=').count();
        let mut acc = 0u32;
        for k in 0..4 {
            acc = (acc << 6) | if k < n { u32::from(value(chunk[k])) } else { 0 };
        }
        out.extend_from_slice(&acc.to_be_bytes()[1..n]);
    }
    out
}
