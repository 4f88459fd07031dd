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

/// The bytes of base64 text (RFC 4648, padding optional); `None` for any other character or a
/// length no encoder writes.
pub(crate) fn unbase64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=').as_bytes();
    if text.len() % 4 == 1 {
        return None;
    }
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        let mut n = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * k);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    Some(out)
}

/// `f64`s as base64 of their little-endian bytes (exact).
pub(crate) fn f64s(v: &[f64]) -> String {
    base64(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>())
}

/// A body's mesh as the page reads it, compressed: `box` its bounds `[x0, y0, z0, x1, y1, z1]`
/// (m, body coordinates), `vertices` each coordinate as a little-endian `u16` over the box
/// (`x0 + q / 65535 · (x1 - x0)`: a 20 cm bone to 3 µm), `triangles` the corners as `u16`
/// (`index_bytes` 2, under 65,536 vertices) or `u32`, all base64. The page computes the normals.
pub(crate) fn mesh(m: &crate::mesh::BodyMesh) -> serde_json::Value {
    let v = &m.mesh.vertices;
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in v {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    let q: Vec<u8> = v
        .iter()
        .flat_map(|p| {
            (0..3).map(|a| {
                let span = hi[a] - lo[a];
                let t = if span > 0.0 { (p[a] - lo[a]) / span } else { 0.0 };
                (t * 65535.0).round().clamp(0.0, 65535.0) as u16
            })
        })
        .flat_map(u16::to_le_bytes)
        .collect();
    let small = v.len() <= 1 << 16;
    let corners = m.mesh.triangles.iter().flatten();
    let t: Vec<u8> = if small {
        corners.flat_map(|&i| (i as u16).to_le_bytes()).collect()
    } else {
        corners.flat_map(|&i| i.to_le_bytes()).collect()
    };
    serde_json::json!({
        "body": m.body,
        "name": m.name,
        "box": [lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]],
        "vertices": base64(&q),
        "triangles": base64(&t),
        "index_bytes": if small { 2 } else { 4 },
    })
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
        for (plain, coded) in cases {
            assert_eq!(unbase64(coded).as_deref(), Some(plain.as_bytes()), "{coded}");
        }
        assert_eq!(unbase64("Zm9v!"), None);
        assert_eq!(unbase64("Z"), None);
        // 1.0 is 3ff0000000000000: little-endian bytes 00 .. 00 f0 3f
        assert_eq!(f64s(&[1.0]), "AAAAAAAA8D8=");
    }
}
