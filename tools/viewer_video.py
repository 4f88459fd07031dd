#!/usr/bin/env python3
"""Check a video written by `mollier view --video`.

Usage: viewer_video.py FILE.webm FRAMES FPS WIDTH HEIGHT

Read here, from the Matroska/WebM specification (EBML elements: an ID, a variable-length size,
the body): the header's doc type is `webm`; the segment's time scale is 1 ms and its duration
FRAMES / FPS s; its one track is VP8 video of WIDTH x HEIGHT; it holds FRAMES blocks, frame k at
round(k * 1000 / FPS) ms, the first a key frame, and every key frame's VP8 header (RFC 6386,
9.1: the start code 9d 01 2a, then the 14-bit width and height) gives WIDTH x HEIGHT. Then
headless Chromium's own demuxer and decoder open it in a <video> (DevTools protocol, as
tools/viewer_input.py): its duration and size as above, and its last frame, drawn on a canvas,
is a picture (not one colour). Prints `ok`/`FAIL` lines and exits 1 on a failure.
"""
import base64
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from viewer_input import Browser, Page  # noqa: E402


def elements(data):
    """(id, body) of each element of `data`."""
    out, pos = [], 0
    while pos < len(data):
        n = 1
        while not data[pos] & (0x80 >> (n - 1)):
            n += 1
        eid = int.from_bytes(data[pos:pos + n], 'big')
        pos += n
        m = 1
        while not data[pos] & (0x80 >> (m - 1)):
            m += 1
        size = int.from_bytes(data[pos:pos + m], 'big') & ((1 << (7 * m)) - 1)
        pos += m
        out.append((eid, data[pos:pos + size]))
        pos += size
    return out


def first(els, eid):
    return next((b for i, b in els if i == eid), None)


def main():
    path, frames, fps, width, height = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    failed = 0

    def check(ok, what):
        nonlocal failed
        print(('ok    ' if ok else 'FAIL  ') + what)
        failed += not ok

    data = open(path, 'rb').read() if os.path.exists(path) else b''
    top = elements(data) if data else []
    head = elements(first(top, 0x1A45DFA3) or b'')
    check(first(head, 0x4282) == b'webm', f'{path} is WebM: doc type {first(head, 0x4282)!r}, {len(data)} bytes')
    segment = elements(first(top, 0x18538067) or b'')
    info = elements(first(segment, 0x1549A966) or b'')
    scale = int.from_bytes(first(info, 0x2AD7B1) or b'', 'big')
    raw = first(info, 0x4489) or b''
    duration = struct.unpack('>d', raw)[0] if len(raw) == 8 else struct.unpack('>f', raw)[0] if len(raw) == 4 else None
    want_ms = frames * 1000 / fps
    check(scale == 1_000_000 and duration is not None and abs(duration - want_ms) < 0.5,
          f'its duration is {frames} frames at {fps:g} a second: {duration} ms (want {want_ms:.1f}), time scale {scale} ns')
    track = elements(first(elements(first(segment, 0x1654AE6B) or b''), 0xAE) or b'')
    video = elements(first(track, 0xE0) or b'')
    size = (int.from_bytes(first(video, 0xB0) or b'', 'big'), int.from_bytes(first(video, 0xBA) or b'', 'big'))
    check(first(track, 0x86) == b'V_VP8' and size == (width, height), f'one VP8 track of {width}x{height}: {first(track, 0x86)!r} {size}')
    blocks = []
    for eid, body in segment:
        if eid != 0x1F43B675:
            continue
        parts = elements(body)
        start = int.from_bytes(first(parts, 0xE7) or b'', 'big')
        for bid, b in parts:
            if bid == 0xA3:
                blocks.append((start + struct.unpack('>h', b[1:3])[0], bool(b[3] & 0x80), b[4:]))
    times = [t for t, _, _ in blocks]
    want = [round(k * 1000 / fps) for k in range(frames)]
    check(times == want, f'{len(blocks)} blocks (want {frames}), at round(k * 1000 / {fps:g}) ms: {times[:4]} ... {times[-2:]}')
    keys = [(k, f) for k, (_, key, f) in enumerate(blocks) if key]
    sizes = {(struct.unpack('<H', f[6:8])[0] & 0x3FFF, struct.unpack('<H', f[8:10])[0] & 0x3FFF)
             for _, f in keys if len(f) >= 10 and not f[0] & 1 and f[3:6] == b'\x9d\x01\x2a'}
    check(bool(keys) and keys[0][0] == 0 and sizes == {(width, height)},
          f'the first block is a key frame and the VP8 key frames say {width}x{height}: {len(keys)} key frames, sizes {sizes}')

    # Chromium's demuxer and decoder: duration, size, and the last frame decoded
    page_html = os.path.join(os.path.dirname(os.path.abspath(path)), 'video-check.html')
    with open(page_html, 'w') as f:
        f.write('<!DOCTYPE html><video muted preload="auto"></video><canvas></canvas>')
    b = Browser()
    try:
        page = Page(b, f'file://{page_html}')
        end = time.time() + 30
        # (the new tab is about:blank until the page has loaded)
        while not page.eval("document.readyState === 'complete' && !!document.querySelector('video')") and time.time() < end:
            time.sleep(0.1)
        src = 'data:video/webm;base64,' + base64.b64encode(data).decode()
        r = b.call('Runtime.evaluate', {'expression': f'''new Promise((done) => {{
            const v = document.querySelector('video'), c = document.querySelector('canvas');
            v.onerror = () => done({{ error: String(v.error && v.error.message) }});
            v.onloadedmetadata = () => {{ v.currentTime = Math.max(0, v.duration - {0.5 / fps}); }};
            // 'seeked' can come before the frame is ready to draw (a blank canvas under load):
            // draw again for up to 5 s until the picture is there
            let tries = 0;
            const draw = () => {{
                c.width = v.videoWidth; c.height = v.videoHeight;
                const g = c.getContext('2d'); g.drawImage(v, 0, 0);
                const px = g.getImageData(0, 0, c.width, c.height).data, colours = new Set();
                for (let i = 0; i < px.length; i += 4) colours.add(px[i] | (px[i + 1] << 8) | (px[i + 2] << 16));
                if (colours.size <= 20 && ++tries < 50) {{ setTimeout(draw, 100); return; }}
                done({{ duration: v.duration, width: v.videoWidth, height: v.videoHeight, colours: colours.size }});
            }};
            v.onseeked = draw;
            v.src = {src!r};
        }})''', 'awaitPromise': True, 'returnByValue': True}, page.s, timeout=60)
        got = r.get('result', {}).get('value') or {'error': str(r.get('exceptionDetails', r))[:200]}
    finally:
        b.close()
    check(not got.get('error') and abs(got.get('duration', 0) - frames / fps) < 0.002 and (got.get('width'), got.get('height')) == (width, height),
          f"Chromium plays it: {got.get('duration')} s (want {frames / fps:.3f}), {got.get('width')}x{got.get('height')} {got.get('error') or ''}")
    check(got.get('colours', 0) > 20, f"its last frame decodes to a picture: {got.get('colours')} colours")
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
