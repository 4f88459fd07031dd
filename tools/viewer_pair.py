#!/usr/bin/env python3
"""Two different models side by side (`mollier view --compare-model`) in headless Chromium.

Usage: viewer_pair.py MOLLIER STUDY_DIR WORK [OPENSIM_MODELS]

STUDY_DIR is a shoulder abduction study (`mollier study models/shoulder/abduction.toml`); pages
and pictures go into WORK. The pair: the shoulder with criterion b's forces (37 frames, 95
muscles, capsules) beside the wrapping mechanism on its own motion (45 frames, 3 muscles,
obstacles), and with OPENSIM_MODELS (tools/fetch-opensim-models) the shoulder beside arm26.osim
imported in memory with its Geometry/ meshes. Checked:
  - both models drawn: each half's muscle paths and bones counted by the page (?test=1) equal
    its model's, and each half is drawn on (its own pixels: the halves differ);
  - one camera: a drag with the real mouse (DevTools protocol, as tools/viewer_input.py) on
    either half changes both halves, and so do the front, side and top buttons; the camera
    starts with every named point of both motions in view;
  - `mollier view --png` of a step of the pair is the page's canvas, pixel for pixel;
  - --video of the pair holds one frame per step (tools/viewer_video.py);
  - the pair's page shows its first picture < 2 s after its first script: the fastest of up to
    8 fresh browsers, 3 s apart;
  - bad input on one side (a missing model, a malformed .osim, results without forces.csv, a
    malformed motion): exit 2, the file named (with line and column where it has them), and no
    page, picture or --frames folder written.
Prints `ok`/`FAIL` lines and exits 1 on a failure.
"""
import base64
import glob
import html
import json
import os
import re
import subprocess
import sys
import time
import zlib
import struct

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from viewer_input import Browser, Page  # noqa: E402

W, H = 1000, 600
passed = failed = 0


def check(ok, what):
    global passed, failed
    print(("ok    " if ok else "FAIL  ") + what)
    passed, failed = passed + bool(ok), failed + (not ok)


def browse(page, query, *args):
    """Chromium's --dump-dom of `page?query` (a fresh browser)."""
    cmd = ['chromium', '--headless', '--no-sandbox', '--disable-gpu-sandbox', '--use-angle=swiftshader',
           '--enable-unsafe-swiftshader', '--disable-extensions', '--no-first-run', '--hide-scrollbars',
           '--window-size=1000,750', '--force-device-scale-factor=1', *args, '--dump-dom', f'file://{page}?{query}']
    try:
        return subprocess.run(cmd, capture_output=True, timeout=120).stdout.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired:
        return ''


def report(dom):
    m = re.search(r'<pre id="mollier-test">(.*?)</pre>', dom, re.S)
    return json.loads(html.unescape(m.group(1))) if m else None


def png_pixels(data):
    """Width, height and rows of RGB of an 8-bit RGB or RGBA PNG (Chromium's and the canvas's)."""
    pos, idat, w, h, bpp = 8, b'', 0, 0, 3
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, _, ctype = struct.unpack('>IIBB', body[:10])
            bpp = {2: 3, 6: 4}[ctype]
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line[x * bpp + k] for x in range(w) for k in range(3)))
        prev = line
    return w, h, rows


def run(mollier, *args):
    return subprocess.run([mollier, 'view', *args], capture_output=True, text=True, errors='replace')


def drawn(side, muscles, bones):
    """A half's report against its model's muscles and bones (capsules or meshes)."""
    ok = side['drawn_muscle_paths'] == side['muscles'] == muscles
    got = side['bones']['capsules'] if isinstance(bones, int) else len(side['bones']['meshes'])
    want = bones if isinstance(bones, int) else bones[0]
    return ok and got >= want if isinstance(bones, int) else ok and got == want


def pair_page(name, r, left, right):
    """The page's account of a pair: both halves drawn, each with its own model."""
    check(r is not None and r['errors'] == [] and 'compare' in r, f"{name}: the pair's page runs ({r and r['errors'][:3]})")
    if not (r and 'compare' in r):
        return
    a, b = r['compare']['sides']
    check(drawn(a, *left) and drawn(b, *right),
          f"{name}: both models drawn: {a['drawn_muscle_paths']} of {left[0]} and {b['drawn_muscle_paths']} of {right[0]} muscle paths, "
          f"bones {a['bones']['capsules']} capsules / {len(a['bones']['meshes'])} meshes and {b['bones']['capsules']} / {len(b['bones']['meshes'])}")
    c = r['compare']
    area = W * H / 2
    check(c['left']['drawn'] > 0.01 * area and c['right']['drawn'] > 0.002 * area and c['differ'] > 0.005 * area,
          f"{name}: each half drawn on ({c['left']['drawn']} and {c['right']['drawn']} pixels), the halves differ in {c['differ']}")
    check(r['in_view']['outside'] == 0, f"{name}: the camera starts with every named point of both motions in view ({r['in_view']['outside']} of {r['in_view']['points']} outside)")


def camera_shared(url):
    """A drag on each half and the view buttons change both halves: one camera."""
    b = Browser()
    try:
        page = Page(b, url)
        end = time.time() + 120
        while not page.eval('!!window.mollierView') and time.time() < end:
            time.sleep(0.2)
        halves = lambda: page.eval('window.mollierView.halves()')
        for s, x in ((0, W // 4 + 60), (1, 3 * W // 4)):
            before, cam0 = halves(), page.eval('window.mollierView.cameraReport()')
            page.mouse('mouseMoved', x, H // 2)
            b.call('Input.dispatchMouseEvent', {'type': 'mousePressed', 'x': x, 'y': H // 2, 'button': 'left', 'buttons': 1, 'clickCount': 1}, page.s)
            for k in range(1, 9):
                b.call('Input.dispatchMouseEvent', {'type': 'mouseMoved', 'x': x + 12 * k, 'y': H // 2 + 4 * k, 'button': 'left', 'buttons': 1}, page.s)
            b.call('Input.dispatchMouseEvent', {'type': 'mouseReleased', 'x': x + 96, 'y': H // 2 + 32, 'button': 'left', 'buttons': 0, 'clickCount': 1}, page.s)
            after, cam1 = halves(), page.eval('window.mollierView.cameraReport()')
            moved = cam0['position'] != cam1['position']
            check(moved and before['left']['hash'] != after['left']['hash'] and before['right']['hash'] != after['right']['hash'],
                  f"a drag on the {('left', 'right')[s]} half turns the camera and changes both halves (camera moved: {moved})")
        for view in ('side', 'top', 'front'):
            before = halves()
            at = page.eval(f"(() => {{ const r = document.querySelector('button[data-view=\"{view}\"]').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()")
            page.click(*at)
            after, cam = halves(), page.eval('window.mollierView.cameraReport()')
            check(cam['view'] == view and before['left']['hash'] != after['left']['hash'] and before['right']['hash'] != after['right']['hash'],
                  f"the {view} button places the one camera ({cam['view']}) and changes both halves")
        errors = page.eval('window.mollierView.errors')
        check(errors == [], f'no script errors while driven ({errors[:3]})')
    finally:
        b.close()


def main():
    mollier, study, work = sys.argv[1:4]
    osim = sys.argv[4] if len(sys.argv) > 4 else None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    shoulder = ['models/shoulder/shoulder.toml', '--results', f'{study}/b-glenoid']
    wrapping = ['--compare-model', 'models/mechanisms/wrapping.toml', '--compare-motion', 'models/mechanisms/wrapping-motion.csv']
    pair, shot = os.path.join(work, 'pair.html'), os.path.join(work, 'pair.png')
    step = 20
    out = run(mollier, *shoulder, *wrapping, '--out', pair, '--png', shot, '--frame', str(step), '--size', '800x600', '-q')
    check(out.returncode == 0, f'mollier view of the shoulder beside the wrapping mechanism, with --png (exit {out.returncode}) {out.stderr.strip()[:300]}')
    r = report(browse(pair, f'test=1&png=1&frame={step}&size=800x600'))
    pair_page('shoulder | wrapping', r, (95, 3), (3, 0))
    if r and 'compare' in r:
        n = r['compare']['steps']
        check(n == 37 + 45 - 5 and r['frame'] == step, f"the slider steps through both motions on normalized time: {n} steps (37 + 45 frames, 5 at the same normalized time)")
    if r and os.path.exists(shot):
        page = png_pixels(base64.b64decode(r['png'].split(',', 1)[1]))
        mine = png_pixels(open(shot, 'rb').read())
        differ = sum(1 for y in range(600) for x in range(800) if page[:2] == mine[:2] == (800, 600)
                     and any(abs(page[2][y][3 * x + k] - mine[2][y][3 * x + k]) > 2 for k in range(3))) if page[:2] == mine[:2] else -1
        check(page[:2] == mine[:2] == (800, 600) and 0 <= differ <= 0.001 * 480000,
              f"mollier view --png of the pair (step {step}, {mine[0]}x{mine[1]}) is the page's canvas: {differ} of 480000 pixels differ")
    else:
        check(False, 'the pair --png written and the page reported its canvas')
    camera_shared(f'file://{pair}?frame={step}&size={W}x{H}&hide=points,frames')
    # --video of the pair: one frame per step
    video = os.path.join(work, 'pair.webm')
    out = run(mollier, *shoulder, *wrapping, '--video', video, '--size', '320x240', '--fps', '30', '-q')
    check(out.returncode == 0, f'--video of the pair (exit {out.returncode}) {out.stderr.strip()[:200]}')
    v = subprocess.run([sys.executable, os.path.join(root, 'tools', 'viewer_video.py'), video, str(37 + 45 - 5), '30', '320', '240'],
                       capture_output=True, text=True)
    print(v.stdout, end='')
    check(v.returncode == 0, 'the pair\'s video holds a frame per step (tools/viewer_video.py)')
    # start-up of the pair in fresh browsers
    times = []
    for attempt in range(8):
        if attempt:
            time.sleep(3)
        x = report(browse(pair, 'test=1'))
        times.append(x['page_ms'] if x else None)
        if x and x['page_ms'] < 2000:
            break
    best = min((t for t in times if t is not None), default=None)
    load = open('/proc/loadavg').read().split()[0]
    check(best is not None and best < 2000, f"the pair ({os.path.getsize(pair) / 1e6:.1f} MB) shows its first picture in {best and round(best)} ms, the fastest of {len(times)} fresh browsers ({', '.join(str(t and round(t)) for t in times)}; < 2000; load {load})")
    # the shoulder beside arm26 imported in memory, its meshes from its Geometry/ folder
    if osim and os.path.exists(os.path.join(osim, 'arm26.osim')):
        arm = os.path.join(work, 'arm-pair.html')
        out = run(mollier, *shoulder, '--compare-model', os.path.join(osim, 'arm26.osim'), '--out', arm, '-q')
        check(out.returncode == 0, f'mollier view of the shoulder beside arm26.osim (exit {out.returncode}) {out.stderr.strip()[:200]}')
        pair_page('shoulder | arm26.osim', report(browse(arm, 'test=1')), (95, 3), (6, (36,)))
    else:
        print(f'SKIPPED: the shoulder beside arm26.osim: no arm26.osim in {osim or "(no folder given)"} (tools/fetch-opensim-models)')
    bad_input(mollier, shoulder, work)
    print(f'viewer pair: {passed} passed, {failed} failed')
    sys.exit(1 if failed else 0)


def bad_input(mollier, shoulder, work):
    """One side missing or malformed: exit 2, located, nothing written."""
    bad = os.path.join(work, 'bad-pair')
    os.makedirs(os.path.join(bad, 'empty'), exist_ok=True)
    broken = os.path.join(bad, 'broken.osim')
    open(broken, 'w').write('<?xml version="1.0"?>\n<OpenSimDocument Version="40000">\n<Model name="x">\n<BodySet><objects><Body name="a">\n</OpenSimDocument>\n')
    motion = os.path.join(bad, 'motion.csv')
    open(motion, 'w').write('time,elbow.rotation [deg]\n0,1\n0.1,1 1\n')
    outs = [os.path.join(bad, n) for n in ('page.html', 'page.png', 'frames')]
    cases = [
        (['--compare-model', os.path.join(bad, 'gone.osim')], os.path.join(bad, 'gone.osim')),
        (['--compare-model', broken], f'{broken}:5:1'),
        (['--compare', os.path.join(bad, 'empty'), '--compare-motion', 'models/mechanisms/wrapping-motion.csv',
          '--compare-model', 'models/mechanisms/wrapping.toml'], os.path.join(bad, 'empty', 'forces.csv')),
        (['--compare-model', 'models/mechanisms/wrapping.toml', '--compare-motion', motion], f'{motion}:3:'),
    ]
    for extra, located in cases:
        out = run(mollier, *shoulder, *extra, '--out', outs[0], '--png', outs[1], '--frames', outs[2], '-q')
        written = [os.path.basename(p) for p in outs if os.path.exists(p)]
        check(out.returncode == 2 and located in out.stderr and not written,
              f"bad input {os.path.basename(extra[1])}: exit {out.returncode}, {located!r} named, nothing written ({written}): {out.stderr.strip()[:160]!r}")


if __name__ == '__main__':
    main()
