#!/usr/bin/env python3
"""Hover and click on a muscle of a viewer page with the real mouse of headless Chromium.

Usage: viewer_input.py PAGE FRAME OTHER_FRAME LENGTHS_CSV FORCES_CSV

Chromium is driven through the DevTools protocol over a pipe (--remote-debugging-pipe: JSON
messages ending in NUL on file descriptors 3 and 4), so nothing beyond Python's standard library
is needed. The page is opened with the muscles alone shown (size fixed); it reports where each
muscle's path points are on the screen; this script picks, for a few muscles, a point of the
path at least 12 px from every other muscle's path and the page's panels, and moves the mouse
there (Input.dispatchMouseEvent, the browser's own input path). Checked:
  - hovering shows that muscle's name, its length in mm and its force in N, equal (to the 0.1
    printed) to the study's lengths.csv and forces.csv at that frame;
  - a click pins it: moving the mouse to an empty place keeps it shown, and after the slider
    moves to another frame it shows that frame's length and force;
  - a click on an empty place unpins it (the panel is hidden).
Prints `ok`/`FAIL` lines and exits 1 on a failure.
"""
import csv
import fcntl
import json
import math
import os
import re
import subprocess
import struct
import sys
import tempfile
import time
import zlib

W, H = 1000, 600
HIDE = 'bones,frames,points,obstacles,contacts,axes,elements,joint'


class Browser:
    def __init__(self):
        to_browser, self._to = os.pipe()
        self._from, from_browser = os.pipe()
        # high copies first, so that placing them on 3 and 4 cannot overwrite one another
        hi = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]

        def fds():
            os.dup2(hi[0], 3)
            os.dup2(hi[1], 4)

        self.proc = subprocess.Popen(
            ['chromium', '--headless', '--no-sandbox', '--disable-gpu-sandbox', '--use-angle=swiftshader',
             '--enable-unsafe-swiftshader', '--disable-extensions', '--no-first-run', '--hide-scrollbars',
             f'--window-size={W + 40},{H + 40}', '--force-device-scale-factor=1', '--remote-debugging-pipe',
             'about:blank'],
            preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in hi + [to_browser, from_browser]:
            os.close(fd)
        self._buf, self._id = b'', 0

    def call(self, method, params=None, session=None, timeout=60):
        self._id += 1
        msg = {'id': self._id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self._to, json.dumps(msg).encode() + b'\0')
        end = time.time() + timeout
        while time.time() < end:
            while b'\0' not in self._buf:
                chunk = os.read(self._from, 1 << 16)
                if not chunk:
                    raise RuntimeError('chromium closed the DevTools pipe')
                self._buf += chunk
            raw, self._buf = self._buf.split(b'\0', 1)
            reply = json.loads(raw)
            if reply.get('id') == self._id:
                if 'error' in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get('result', {})
        raise TimeoutError(method)

    def close(self):
        try:
            self.call('Browser.close', timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Page:
    def __init__(self, browser, url):
        self.b = browser
        target = browser.call('Target.createTarget', {'url': url})['targetId']
        self.s = browser.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']

    def eval(self, expr):
        r = self.b.call('Runtime.evaluate', {'expression': expr, 'returnByValue': True}, self.s)
        if 'exceptionDetails' in r:
            raise RuntimeError(f'{expr}: {r["exceptionDetails"]}')
        return r['result'].get('value')

    def mouse(self, kind, x, y):
        p = {'type': kind, 'x': x, 'y': y, 'button': 'none', 'buttons': 0}
        if kind in ('mousePressed', 'mouseReleased'):
            p.update(button='left', buttons=1 if kind == 'mousePressed' else 0, clickCount=1)
        self.b.call('Input.dispatchMouseEvent', p, self.s)

    def double_click(self, x, y):
        self.mouse('mouseMoved', x, y)
        for count in (1, 2):
            for kind in ('mousePressed', 'mouseReleased'):
                self.b.call('Input.dispatchMouseEvent', {'type': kind, 'x': x, 'y': y, 'button': 'left',
                            'buttons': 1 if kind == 'mousePressed' else 0, 'clickCount': count}, self.s)

    def click(self, x, y):
        self.mouse('mouseMoved', x, y)
        self.mouse('mousePressed', x, y)
        self.mouse('mouseReleased', x, y)

    def info(self):
        return self.eval("(() => { const i = document.getElementById('info');"
                         " return i.style.display === 'none' ? null : i.textContent; })()")


def table(path):
    rows = [r for r in csv.reader(open(path)) if r and not r[0].startswith('#')]
    return rows[0], [[float(v) for v in r] for r in rows[1:]]


def seg_dist(p, a, b):
    ab = (b[0] - a[0], b[1] - a[1])
    n = ab[0] ** 2 + ab[1] ** 2
    t = 0.0 if n == 0 else max(0.0, min(1.0, ((p[0] - a[0]) * ab[0] + (p[1] - a[1]) * ab[1]) / n))
    return math.hypot(p[0] - a[0] - t * ab[0], p[1] - a[1] - t * ab[1])


def dist(p, path):
    if len(path) == 1:
        return math.hypot(p[0] - path[0][0], p[1] - path[0][1])
    return min(seg_dist(p, a, b) for a, b in zip(path, path[1:]))


def free(p, panels, margin=12):
    x, y = p
    if not (margin <= x < W - margin and margin <= y < H - margin):
        return False
    # the info panel opens at the top right on the first hover
    if x > W - 280 and y < 140:
        return False
    return not any(a - margin <= x <= c + margin and b - margin <= y <= d + margin for a, b, c, d in panels)


def lone_points(muscles, panels, want=3):
    """(muscle, point) pairs: a point of its path, 12 px from the others' paths and the panels."""
    out = []
    for m in muscles:
        path, others = m['points'], [o['points'] for o in muscles if o is not m and o['points']]
        for a, b in zip(path, path[1:]):
            steps = max(1, int(math.hypot(b[0] - a[0], b[1] - a[1]) // 2))
            hit = None
            for k in range(steps + 1):
                p = (a[0] + (b[0] - a[0]) * k / steps, a[1] + (b[1] - a[1]) * k / steps)
                if free(p, panels) and all(dist(p, o) >= 12 for o in others):
                    hit = p
                    break
            if hit:
                out.append((m['name'], hit))
                break
        if len(out) >= want:
            break
    return out


def empty_point(muscles, panels):
    for y in range(30, H - 30, 10):
        for x in range(30, W - 30, 10):
            if free((x, y), panels) and all(dist((x, y), m['points']) >= 40 for m in muscles if m['points']):
                return (x, y)
    return None


def png_size(path):
    """Width, height and the number of distinct bytes of the image data of a PNG."""
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        return None
    w, h = struct.unpack('>II', data[16:24])
    pos, idat = 8, b''
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        if kind == b'IDAT':
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    return w, h, len(set(zlib.decompress(idat)))


def bones_and_png(b, page_path, frame, check):
    """A double-click on a bone centres the orbit on its body; the PNG button saves the frame at
    the size typed in its field."""
    page = Page(b, f'file://{page_path}?frame={frame}&size={W}x{H}')
    end = time.time() + 120
    while not page.eval('!!window.mollierView') and time.time() < end:
        time.sleep(0.2)
    panels = page.eval('window.mollierView.projections()')['panels']
    # the bodies drawn as capsules, the humerus first (the largest bone in the front view)
    bodies = page.eval('[...new Set(window.mollierView.D.capsules.map((c) => window.mollierView.D.bodies[c.body].name))]')
    bodies.sort(key=lambda n: n != 'humerus')
    aim = None
    for name in bodies:
        at = page.eval(f'window.mollierView.bodyOnScreen({json.dumps(name)})')
        if at and free(at['screen'], panels):
            aim = (name, at)
            break
    check(aim is not None, f'a bone on screen to double-click: {aim and aim[0]}')
    if aim:
        name, at = aim
        before = page.eval('window.mollierView.target()')
        page.double_click(*at['screen'])
        after = page.eval('window.mollierView.target()')
        moved = math.dist(before, at['centre'])
        check(math.dist(after, at['centre']) < 1e-9 * max(1, moved) and moved > 1e-3,
              f'a double-click on the {name} moves the orbit\'s target {moved * 1000:.0f} mm, onto its centre: {[round(v, 4) for v in after]} (want {[round(v, 4) for v in at["centre"]]})')
    # the PNG button: the frame at 640x480 (not the window's size) saved as frame-NNNNN.png
    with tempfile.TemporaryDirectory() as d:
        b.call('Browser.setDownloadBehavior', {'behavior': 'allow', 'downloadPath': d})
        page.eval("(() => { const s = document.getElementById('png-size'); s.value = '640x480'; })()")
        r = page.eval("(() => { const r = document.getElementById('png').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        page.click(*r)
        want = os.path.join(d, f'frame-{frame:05d}.png')
        end = time.time() + 60
        while not os.path.exists(want) and time.time() < end:
            time.sleep(0.2)
        got = png_size(want) if os.path.exists(want) else None
        check(got is not None and got[:2] == (640, 480) and got[2] > 20,
              f'the PNG button saves frame {frame} at the size asked (640x480): {os.listdir(d)} {got}')
    size = page.eval('(() => { const c = document.querySelector("canvas"); return [c.width, c.height]; })()')
    check(size == [W, H], f'the drawing is back at its size after the picture: {size}')


def main():
    page_path, frame, other, lengths_csv, forces_csv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    lh, lengths = table(lengths_csv)
    fh, forces = table(forces_csv)
    failed = 0

    def check(ok, what):
        nonlocal failed
        print(('ok    ' if ok else 'FAIL  ') + what)
        failed += not ok

    def expect(text, name, f):
        """Whether the panel's text names `name` with its length and force of frame `f`."""
        if not text or not text.startswith(name + '  ('):
            return False, f'{text!r}'
        length = re.search(r'length ([-\d.]+) mm', text)
        force = re.search(r'force ([-\d.]+) N', text)
        want_l = lengths[f][lh.index(name)] * 1000
        want_f = forces[f][fh.index(name)]
        ok = bool(length and force) and abs(float(length.group(1)) - want_l) <= 0.051 \
            and abs(float(force.group(1)) - want_f) <= 0.051
        return ok, f'{text!r} (lengths.csv {want_l:.3f} mm, forces.csv {want_f:.3f} N)'

    b = Browser()
    try:
        page = Page(b, f'file://{page_path}?frame={frame}&hide={HIDE}&size={W}x{H}')
        end = time.time() + 120
        while not page.eval('!!window.mollierView') and time.time() < end:
            time.sleep(0.2)
        proj = page.eval('window.mollierView.projections()')
        muscles, panels = proj['muscles'], proj['panels']
        # muscles with a force in both frames first: a zero would match a panel showing zeros
        loaded = lambda m: all(forces[f][fh.index(m['name'])] > 1 for f in (frame, other)) if m['name'] in fh else False
        picks = lone_points(sorted(muscles, key=lambda m: not loaded(m)), panels)
        check(len(picks) >= 1, f'muscles with a lone point on screen to hover: {[m for m, _ in picks]}')
        for name, (x, y) in picks:
            page.mouse('mouseMoved', x, y)
            ok, text = expect(page.info(), name, frame)
            check(ok, f'hovering {name} at ({x:.0f}, {y:.0f}) px shows its name, length and force: {text}')
        blank = empty_point(muscles, panels)
        check(blank is not None, f'an empty place on screen: {blank}')
        if picks and blank:
            name, (x, y) = picks[0]
            page.mouse('mouseMoved', *blank)
            check(page.info() is None, 'moving off the muscles hides the panel')
            page.click(x, y)
            page.mouse('mouseMoved', *blank)
            ok, text = expect(page.info(), name, frame)
            check(ok, f'a click pins {name}: still shown with the mouse elsewhere: {text}')
            page.eval(f"(() => {{ const s = document.getElementById('slider'); s.value = '{other}';"
                      " s.dispatchEvent(new Event('input')); })()")
            ok, text = expect(page.info(), name, other)
            check(ok, f'the pinned {name} follows the slider to frame {other}: {text}')
            page.click(*blank)
            check(page.info() is None, 'a click on an empty place unpins it')
        errors = page.eval('window.mollierView.errors')
        check(errors == [], f'no console errors ({errors[:3]})')
        bones_and_png(b, page_path, frame, check)
    finally:
        b.close()
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
