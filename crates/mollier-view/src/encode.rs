//! Base64 (RFC 4648, with padding) of little-endian floats: the page decodes it with `atob` into
//! a `Float64Array` or `Float32Array`, about half the size of the numbers as JSON text.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 of `bytes`.
pub(crate) fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `f64`s as base64 of their little-endian bytes (exact).
pub(crate) fn f64s(v: &[f64]) -> String {
    base64(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>())
}

/// `f32`s as base64 of their little-endian bytes.
pub(crate) fn f32s(v: &[f32]) -> String {
    base64(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vectors of RFC 4648, section 10.
    #[test]
    fn rfc_4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
        // 1.0 is 3ff0000000000000: little-endian bytes 00 .. 00 f0 3f
        assert_eq!(f64s(&[1.0]), "AAAAAAAA8D8=");
    }
}
