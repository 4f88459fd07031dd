//! WebM (Matroska with the `webm` doc type) around VP8 frames the browser encoded: an EBML
//! header, one segment with its info (time scale 1 ms, duration), one video track, and a cluster
//! per key frame holding the frames as simple blocks. No cues: players seek by the clusters.

/// An encoded frame: its time (µs from the start), whether it is a key frame, its VP8 bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// Time from the start (µs).
    pub time_us: i64,
    /// A key frame (decodable alone).
    pub key: bool,
    /// The VP8 frame.
    pub data: Vec<u8>,
}

/// An EBML element: its ID (with its marker bits, as the specification writes it) and body.
fn element(id: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 12);
    let id_bytes = id.to_be_bytes();
    let skip = id_bytes.iter().position(|&b| b != 0).unwrap_or(3);
    out.extend_from_slice(&id_bytes[skip..]);
    // the size as an 8-byte variable-length integer (0x01 then 7 bytes): always valid
    let size = (body.len() as u64) | (1 << 56);
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(body);
    out
}

fn uint(id: u32, v: u64) -> Vec<u8> {
    let b = v.to_be_bytes();
    let skip = b.iter().position(|&x| x != 0).unwrap_or(7);
    element(id, &b[skip..])
}

fn float(id: u32, v: f64) -> Vec<u8> {
    element(id, &v.to_be_bytes())
}

/// The WebM file of VP8 `chunks` (in order of time) of `width x height` pixels, lasting
/// `duration_ms` (the last frame's time plus a frame's duration). Times are kept to the
/// millisecond (the time scale). A cluster starts at each key frame and wherever a frame would
/// lie 30 s or more after its cluster's start (a block's time is a 16-bit offset).
pub fn webm(chunks: &[Chunk], width: u32, height: u32, frame_ns: u64, duration_ms: f64) -> Vec<u8> {
    let header = [
        uint(0x4286, 1),          // EBMLVersion
        uint(0x42F7, 1),          // EBMLReadVersion
        uint(0x42F2, 4),          // EBMLMaxIDLength
        uint(0x42F3, 8),          // EBMLMaxSizeLength
        element(0x4282, b"webm"), // DocType
        uint(0x4287, 2),          // DocTypeVersion
        uint(0x4285, 2),          // DocTypeReadVersion
    ]
    .concat();
    let info = [
        uint(0x2AD7B1, 1_000_000), // TimestampScale: 1 ms
        float(0x4489, duration_ms),
        element(0x4D80, b"Mollier"), // MuxingApp
        element(0x5741, b"Mollier"), // WritingApp
    ]
    .concat();
    let video = [uint(0xB0, u64::from(width)), uint(0xBA, u64::from(height))].concat();
    let track = [
        uint(0xD7, 1),            // TrackNumber
        uint(0x73C5, 1),          // TrackUID
        uint(0x83, 1),            // TrackType: video
        uint(0x9C, 0),            // FlagLacing
        element(0x86, b"V_VP8"),  // CodecID
        uint(0x23E383, frame_ns), // DefaultDuration (ns)
        element(0xE0, &video),    // Video
    ]
    .concat();
    let mut segment = [element(0x1549A966, &info), element(0x1654AE6B, &element(0xAE, &track))].concat();
    let mut cluster: Option<(i64, Vec<u8>)> = None;
    for c in chunks {
        let ms = (c.time_us as f64 / 1000.0).round() as i64;
        if cluster.as_ref().is_none_or(|(start, _)| c.key || ms - start >= 30_000) {
            if let Some((start, blocks)) = cluster.take() {
                segment.extend(element(0x1F43B675, &[uint(0xE7, start.max(0) as u64), blocks].concat()));
            }
            cluster = Some((ms, Vec::new()));
        }
        if let Some((start, blocks)) = cluster.as_mut() {
            // SimpleBlock: track 1 (as a 1-byte vint), time from the cluster's (16 bits), flags
            let mut block = vec![0x81];
            block.extend_from_slice(&((ms - *start) as i16).to_be_bytes());
            block.push(if c.key { 0x80 } else { 0 });
            block.extend_from_slice(&c.data);
            blocks.extend(element(0xA3, &block));
        }
    }
    if let Some((start, blocks)) = cluster {
        segment.extend(element(0x1F43B675, &[uint(0xE7, start.max(0) as u64), blocks].concat()));
    }
    [element(0x1A45DFA3, &header), element(0x18538067, &segment)].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Elements of `data` as (ID, body), read with the specification's variable-length sizes.
    fn read(mut data: &[u8]) -> Vec<(u32, &[u8])> {
        let mut out = Vec::new();
        while !data.is_empty() {
            let id_len = data[0].leading_zeros() as usize + 1;
            let id = data[..id_len].iter().fold(0u32, |a, &b| (a << 8) | u32::from(b));
            let rest = &data[id_len..];
            let size_len = rest[0].leading_zeros() as usize + 1;
            let mut size = u64::from(rest[0]) & ((1u64 << (8 - size_len)) - 1);
            for &b in &rest[1..size_len] {
                size = (size << 8) | u64::from(b);
            }
            let body = &rest[size_len..size_len + size as usize];
            out.push((id, body));
            data = &rest[size_len + size as usize..];
        }
        out
    }

    #[test]
    fn frames_and_times_read_back() {
        let chunks: Vec<Chunk> = (0..70)
            .map(|k| Chunk {
                time_us: (k as f64 * 1e6 / 30.0).round() as i64,
                key: k % 30 == 0,
                data: vec![k as u8; 3],
            })
            .collect();
        let file = webm(&chunks, 640, 480, 33_333_333, 70.0 * 1000.0 / 30.0);
        let top = read(&file);
        assert_eq!(top.len(), 2);
        assert_eq!(top[0].0, 0x1A45DFA3);
        assert!(read(top[0].1).contains(&(0x4282, &b"webm"[..])));
        let segment = read(top[1].1);
        let clusters: Vec<_> = segment.iter().filter(|(id, _)| *id == 0x1F43B675).collect();
        // a cluster per key frame: frames 0, 30 and 60
        assert_eq!(clusters.len(), 3);
        let mut frames = Vec::new();
        for (_, body) in clusters {
            let parts = read(body);
            let start = parts[0].1.iter().fold(0i64, |a, &b| (a << 8) | i64::from(b));
            for (id, block) in &parts[1..] {
                assert_eq!(*id, 0xA3);
                let dt = i16::from_be_bytes([block[1], block[2]]);
                frames.push((start + i64::from(dt), block[3] == 0x80, block[4..].to_vec()));
            }
        }
        assert_eq!(frames.len(), 70);
        for (k, (ms, key, data)) in frames.iter().enumerate() {
            assert_eq!(*ms, (k as f64 * 1000.0 / 30.0).round() as i64);
            assert_eq!(*key, k % 30 == 0);
            assert_eq!(data, &vec![k as u8; 3]);
        }
        let info = read(segment.iter().find(|(id, _)| *id == 0x1549A966).unwrap().1);
        let duration = info.iter().find(|(id, _)| *id == 0x4489).unwrap().1;
        assert_eq!(f64::from_be_bytes(duration.try_into().unwrap()), 70.0 * 1000.0 / 30.0);
    }
}
