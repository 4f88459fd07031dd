// Mollier's viewer: draws the geometry Mollier computed (the JSON in #mollier-data) with three.js.
// It computes no mechanics: every position, path point and solid comes from the file.
// URL parameters: frame=K shows frame K first; hide=bones,obstacles,... hides groups; size=WxH
// fixes the drawing's size; view=front|side|top the camera's start; test=1 runs the page's
// self-checks and writes them as JSON into #mollier-test (read by tools/test-viewer through
// --dump-dom); export=K,L,... or export=all writes those frames' canvas as PNG data URLs into
// #mollier-export (read by `mollier view --png/--frames` through --dump-dom).
(function () {
  'use strict';
  const errors = [];
  window.addEventListener('error', (e) => errors.push(String(e.message || e)));
  const consoleError = console.error;
  console.error = function (...args) {
    errors.push(args.map(String).join(' '));
    consoleError.apply(console, args);
  };
  const params = new URLSearchParams(location.search);
  // when each phase of the start ended (ms from navigation start): the embedded three.js and
  // data parsed, the data decoded, the scene built
  const T = { script: performance.now() };

  // ---- the data ----
  const D = JSON.parse(document.getElementById('mollier-data').textContent);
  function bytes(s) {
    if (Uint8Array.fromBase64) return Uint8Array.fromBase64(s).buffer;
    const bin = atob(s);
    const u = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return u.buffer;
  }
  const f64 = (s) => new Float64Array(bytes(s));
  const f32 = (s) => new Float32Array(bytes(s));
  const positions = f64(D.positions);
  const lengths = f64(D.lengths);
  const forces = D.forces ? f64(D.forces) : null;
  const linePoints = f32(D.line_points);
  const shapeData = f32(D.shapes);
  const bodyFrames = f32(D.body_frames);
  const nF = D.times.length, nP = D.points.length, nM = D.muscles.length, nB = D.bodies.length;
  const lines = [];
  const shapes = [];
  D.elements.forEach((e, i) => {
    for (let k = 0; k < e.lines; k++) lines.push({ el: i });
    e.shapes.forEach((kind) => shapes.push({ el: i, kind }));
  });
  T.decoded = performance.now();
  const nL = lines.length, nS = shapes.length;
  // where each line of each frame starts in linePoints (in points)
  const lineStart = new Float64Array(nF * nL + 1);
  const maxCount = new Uint32Array(nL);
  let acc = 0;
  for (let i = 0; i < nF * nL; i++) {
    lineStart[i] = acc;
    acc += D.line_counts[i];
    maxCount[i % nL] = Math.max(maxCount[i % nL], D.line_counts[i]);
  }
  let fMax = 0;
  // --compare: a second results directory's forces on the same motion, drawn in the right half
  // with the same camera and colour scale
  const compare = D.compare ? {
    title: D.compare.title,
    forces: f64(D.compare.forces),
    coneForce: D.compare.cone_force ? f64(D.compare.cone_force) : null,
    inside: D.compare.inside || [],
  } : null;
  for (const fs of [forces, compare && compare.forces]) if (fs) for (const f of fs) if (Number.isFinite(f) && f > fMax) fMax = f;
  // which results the scene shows: 0 the page's, 1 the compared (the right half)
  let side = 0;

  // ---- the scene ----
  const container = document.getElementById('view') || document.body.appendChild(Object.assign(document.createElement('div'), { id: 'view' }));
  // size=WxH fixes the drawing's size (CSS pixels), for pictures that do not depend on the window
  const fixedSize = /^(\d+)x(\d+)$/.exec(params.get('size') || '');
  const viewSize = () => (fixedSize ? [Number(fixedSize[1]), Number(fixedSize[2])] : [window.innerWidth, window.innerHeight]);
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setSize(...viewSize());
  renderer.setClearColor(0xf4f4f2);
  container.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.add(new THREE.AmbientLight(0xffffff, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(1, 2, 3);
  scene.add(sun);

  // ---- the bodies' meshes (decoded first: they count in the scene's size) ----
  // vertices in body coordinates (m), quantized to 16 bits over the mesh's box; triangles as
  // 16- or 32-bit indices; normals computed here
  const meshes = (D.meshes || []).map((m) => {
    const q = new Uint16Array(bytes(m.vertices));
    const v = new Float32Array(q.length);
    for (let i = 0; i < q.length; i++) {
      const a = i % 3;
      v[i] = m.box[a] + (q[i] / 65535) * (m.box[3 + a] - m.box[a]);
    }
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(v, 3));
    const t = m.index_bytes === 2 ? new Uint16Array(bytes(m.triangles)) : new Uint32Array(bytes(m.triangles));
    g.setIndex(new THREE.BufferAttribute(t, 1));
    g.computeVertexNormals();
    g.computeBoundingSphere();
    return { body: m.body, name: m.name, geometry: g };
  });
  // a body's frame in frame k as a matrix (its axes and origin): meshes are fixed in it
  function bodyMatrix(k, b, into) {
    const o = (k * nB + b) * 12, v = bodyFrames;
    return into.set(v[o + 3], v[o + 6], v[o + 9], v[o], v[o + 4], v[o + 7], v[o + 10], v[o + 1],
      v[o + 5], v[o + 8], v[o + 11], v[o + 2], 0, 0, 0, 1);
  }

  // size of the scene: the points and the meshes' boxes of every frame, so that the motion stays
  // in view
  // (flat arrays: a long motion has hundreds of thousands of points)
  const meshCorners = [];
  {
    const m4 = new THREE.Matrix4(), v = new THREE.Vector3();
    for (const m of D.meshes || []) for (let k = 0; k < nF; k++) {
      bodyMatrix(k, m.body, m4);
      for (let c = 0; c < 8; c++) {
        v.set(m.box[c & 1 ? 3 : 0], m.box[c & 2 ? 4 : 1], m.box[c & 4 ? 5 : 2]).applyMatrix4(m4);
        if (Number.isFinite(v.x + v.y + v.z)) meshCorners.push(v.x, v.y, v.z);
      }
    }
  }
  function eachScenePoint(fn) {
    for (const a of [positions, meshCorners]) for (let i = 0; i + 2 < a.length; i += 3) {
      const x = a[i], y = a[i + 1], z = a[i + 2];
      if (Number.isFinite(x + y + z)) fn(x, y, z);
    }
  }
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  eachScenePoint((x, y, z) => {
    if (x < lo[0]) lo[0] = x; if (x > hi[0]) hi[0] = x;
    if (y < lo[1]) lo[1] = y; if (y > hi[1]) hi[1] = y;
    if (z < lo[2]) lo[2] = z; if (z > hi[2]) hi[2] = z;
  });
  if (!Number.isFinite(lo[0])) { lo.fill(-0.5); hi.fill(0.5); meshCorners.push(...lo, ...hi); }
  const size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-3);
  const fov = 35;

  // each half of the drawing with --compare
  const aspect = () => viewSize()[0] / (compare ? 2 : 1) / viewSize()[1];
  const camera = new THREE.PerspectiveCamera(fov, aspect(), size / 100, size * 100);
  // the model's up (its `axes`; y by default): the orbit turns about it
  const worldUp = new THREE.Vector3(...(D.up || [0, 1, 0]));
  const forward = new THREE.Vector3(...(D.forward || [1, 0, 0]));
  camera.up.copy(worldUp);
  const controls = new THREE.OrbitControls(camera, renderer.domElement);
  controls.addEventListener('change', () => render());
  // The views a person is seen from, by the model's `axes` (OpenSim's and the ISB's by default:
  // x forward, y up, z to the right): front from ahead, side from the right, top from above
  // with forward down the screen (off the pole by 1e-4, where the orbit's up stays defined).
  const rightward = forward.clone().cross(worldUp);
  const views = {
    front: forward.toArray(),
    side: rightward.toArray(),
    top: worldUp.clone().add(forward.clone().multiplyScalar(1e-4)).toArray(),
  };
  // and from along any axis (view=x, -x, y, -y, z, -z)
  const axisViews = { x: [1, 0, 0], '-x': [-1, 0, 0], y: [1e-4, 1, 0], '-y': [1e-4, -1, 0], z: [0, 0, 1], '-z': [0, 0, -1] };
  // Place the camera along `dir` (towards it from the model) so that every point and mesh box
  // of every frame is in the view, the nearest side (height or width) filled to 92 %.
  function viewFrom(name) {
    const back = new THREE.Vector3(...(views[name] || axisViews[name])).normalize();
    const right = worldUp.clone().cross(back).normalize();
    const up = back.clone().cross(right);
    const t = 0.92 * Math.tan((fov / 2) * Math.PI / 180), ta = t * camera.aspect;
    let r0 = Infinity, r1 = -Infinity, u0 = Infinity, u1 = -Infinity, b0 = Infinity, b1 = -Infinity;
    eachScenePoint((x, y, z) => {
      const r = right.x * x + right.y * y + right.z * z, u = up.x * x + up.y * y + up.z * z, b = back.x * x + back.y * y + back.z * z;
      r0 = Math.min(r0, r); r1 = Math.max(r1, r); u0 = Math.min(u0, u); u1 = Math.max(u1, u); b0 = Math.min(b0, b); b1 = Math.max(b1, b);
    });
    const rc = (r0 + r1) / 2, uc = (u0 + u1) / 2;
    let dist = -Infinity;
    eachScenePoint((x, y, z) => {
      const r = right.x * x + right.y * y + right.z * z, u = up.x * x + up.y * y + up.z * z, b = back.x * x + back.y * y + back.z * z;
      dist = Math.max(dist, b + Math.max(Math.abs(r - rc) / ta, Math.abs(u - uc) / t));
    });
    dist = Math.max(dist, b1 + size / 50);
    const at = (c) => right.clone().multiplyScalar(rc).add(up.clone().multiplyScalar(uc)).add(back.clone().multiplyScalar(c));
    camera.position.copy(at(dist));
    controls.target.copy(at((b0 + b1) / 2));
    camera.near = Math.max((dist - b1) / 10, size / 1000);
    camera.far = dist - b0 + size * 10;
    camera.updateProjectionMatrix();
    controls.update();
    current = name;
  }
  let current = null;

  const groups = {};
  for (const name of ['bones', 'frames', 'points', 'obstacles', 'contacts', 'axes', 'elements', 'muscles']) {
    groups[name] = new THREE.Group();
    scene.add(groups[name]);
  }
  function dynamic(n) {
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(Math.max(n, 1) * 3), 3));
    return g;
  }
  // bones: each body's meshes, else its capsules (between its joints, see mollier_view::capsules)
  // Every shaded solid (bones, obstacles, contacts, the cone) is drawn by one lit shader
  // program: the same settings (blended, both sides in one pass; `solid`), the colour and
  // opacity being uniforms. three.js compiles a program per set of settings (opaque or not,
  // each side; two passes, back then front, for a translucent double-sided one), and a software
  // renderer (SwiftShader, headless) compiles each on the CPU at the first frame.
  const solid = (color, opacity, depthWrite = false) => new THREE.MeshLambertMaterial({
    color, opacity, depthWrite, transparent: true, side: THREE.DoubleSide, forceSinglePass: true,
  });
  const boneMaterial = solid(0xe6dcc8, 1, true);
  const meshObjects = meshes.map((m) => {
    const obj = new THREE.Mesh(m.geometry, boneMaterial);
    obj.matrixAutoUpdate = false;
    obj.userData = { body: m.body, mesh: m.name };
    groups.bones.add(obj);
    return obj;
  });
  const meshed = new Set(meshes.map((m) => m.body));
  const unitCylinder = new THREE.CylinderGeometry(1, 1, 1, 24, 1, true);
  const unitBall = new THREE.SphereGeometry(1, 24, 12);
  // a body with a mesh has no capsules, nor has a body without one towards a body with one
  // (ground to the pelvis: the pelvis's mesh shows that bone)
  const capsules = (D.capsules || []).filter((c) => !meshed.has(c.body) && !(c.child !== null && meshed.has(c.child))).map((c) => {
    const parts = [unitCylinder, unitBall, unitBall].map((g) => {
      const m = new THREE.Mesh(g, boneMaterial);
      m.matrixAutoUpdate = false;
      m.userData = { body: c.body, capsule: true };
      groups.bones.add(m);
      return m;
    });
    return { c, parts };
  });
  // a cylinder along y from a to b of radius r (three's cylinder: along y, height 1, centred)
  const va = new THREE.Vector3(), vb = new THREE.Vector3(), vx = new THREE.Vector3(), vz = new THREE.Vector3();
  function placeCapsules(pos) {
    for (const { c, parts } of capsules) {
      va.fromArray(pos, 3 * c.ends[0]);
      vb.fromArray(pos, 3 * c.ends[1]);
      const axis = vb.clone().sub(va);
      const ok = Number.isFinite(axis.length());
      parts.forEach((p) => { p.visible = ok; });
      if (!ok) continue;
      vx.set(1, 0, 0);
      if (Math.abs(axis.clone().normalize().x) > 0.9) vx.set(0, 0, 1);
      vz.crossVectors(vx, axis).normalize();
      vx.crossVectors(axis, vz).normalize();
      const r = c.radius;
      parts[0].matrix.makeBasis(vx.clone().multiplyScalar(r), axis, vz.clone().multiplyScalar(r)).setPosition(va.clone().add(vb).multiplyScalar(0.5));
      parts[1].matrix.makeScale(r, r, r).setPosition(va);
      parts[2].matrix.makeScale(r, r, r).setPosition(vb);
      parts.forEach((p) => { p.matrixWorldNeedsUpdate = true; });
    }
  }
  const points = new THREE.Points(dynamic(nP), new THREE.PointsMaterial({ color: 0x333333, size: 4, sizeAttenuation: false }));
  groups.points.add(points);
  // the bodies' x, y and z axes, a set of segments each in its colour (a plain colour, not
  // vertex colours: the lines' program serves)
  const axes = [0xd91a1a, 0x1aa61a, 0x1a33e6].map((colour) => {
    const obj = new THREE.LineSegments(dynamic(nB * 2), new THREE.LineBasicMaterial({ color: colour }));
    obj.frustumCulled = false;
    groups.frames.add(obj);
    return obj;
  });

  // colours of the force scale (N): blue, cyan, yellow, red
  const stops = [[0.17, 0.25, 0.75], [0.1, 0.7, 0.8], [0.95, 0.8, 0.15], [0.85, 0.1, 0.08]];
  function forceColour(f) {
    if (!Number.isFinite(f)) return new THREE.Color(0.6, 0.6, 0.6);
    const t = Math.min(Math.max(fMax > 0 ? f / fMax : 0, 0), 1) * (stops.length - 1);
    const i = Math.min(Math.floor(t), stops.length - 2), u = t - i;
    return new THREE.Color(...[0, 1, 2].map((a) => stops[i][a] * (1 - u) + stops[i + 1][a] * u));
  }
  const lineObjects = lines.map((l, i) => {
    const e = D.elements[l.el];
    const colour = e.group === 'muscle' ? 0xc0392b : e.group === 'axes' ? 0x8e44ad : 0x2c3e50;
    const obj = new THREE.Line(dynamic(maxCount[i]), new THREE.LineBasicMaterial({ color: colour }));
    obj.frustumCulled = false;
    obj.userData = { element: l.el };
    const into = { muscle: groups.muscles, contact: groups.contacts, axes: groups.axes };
    (into[e.group] || groups.elements).add(obj);
    return obj;
  });
  const unit = {
    sphere: new THREE.SphereGeometry(1, 32, 16),
    ellipsoid: new THREE.SphereGeometry(1, 48, 24),
    // three's cylinder runs along y: turned to run along z, from -1 to 1
    cylinder: new THREE.CylinderGeometry(1, 1, 2, 32, 1, true).rotateX(Math.PI / 2),
  };
  // an obstacle several muscles wrap over is in each muscle's drawing: drawn once
  const seen = new Set();
  const shapeObjects = shapes.map((s, k) => {
    const key = s.kind + Array.from(shapeData.subarray(k * 12, k * 12 + 12), (v) => v.toFixed(6)).join(',');
    if (seen.has(key)) return null;
    seen.add(key);
    const contact = D.elements[s.el].group === 'contact';
    const m = new THREE.Mesh(unit[s.kind], contact ? solid(0xd9c8a9, 0.3) : solid(0x8fa9c4, 0.45));
    m.matrixAutoUpdate = false;
    m.userData = { element: s.el };
    (contact ? groups.contacts : groups.obstacles).add(m);
    return m;
  });

  // the joint's stability cone (apex at the joint centre, opening along its x axis, into the
  // socket) and the joint force as an arrow, green inside the cone, red outside
  groups.joint = new THREE.Group();
  scene.add(groups.joint);
  const cone = D.cone ? {
    frames: f64(D.cone.frames),
    force: D.cone.force ? f64(D.cone.force) : null,
    tan: D.cone.half_angles.map(Math.tan),
  } : null;
  let coneMesh = null, arrow = null, jointMax = 0;
  if (cone) {
    // three's cone: apex at +h/2 on y; moved so the apex is at the origin and the base at y = -1
    const g = new THREE.ConeGeometry(1, 1, 48, 1, true).translate(0, -0.5, 0);
    coneMesh = new THREE.Mesh(g, solid(0x3a9d5d, 0.3));
    coneMesh.matrixAutoUpdate = false;
    groups.joint.add(coneMesh);
    if (cone.force) {
      for (let k = 0; k < nF; k++) jointMax = Math.max(jointMax, Math.hypot(cone.force[3 * k] || 0, cone.force[3 * k + 1] || 0, cone.force[3 * k + 2] || 0));
      arrow = new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(), 1, 0x1e8449);
      groups.joint.add(arrow);
    }
  }
  const coneLength = size * 0.12;
  function placeJoint() {
    if (!cone) return;
    const jointForce = side ? compare.coneForce : cone.force, inside = side ? compare.inside : (D.cone.inside || []);
    const o = frame * 12, v = cone.frames, L = coneLength;
    const c = new THREE.Vector3(v[o], v[o + 1], v[o + 2]);
    const ax = new THREE.Vector3(v[o + 3], v[o + 4], v[o + 5]);
    const ay = new THREE.Vector3(v[o + 6], v[o + 7], v[o + 8]).multiplyScalar(L * cone.tan[0]);
    const az = new THREE.Vector3(v[o + 9], v[o + 10], v[o + 11]).multiplyScalar(L * cone.tan[1]);
    coneMesh.matrix.makeBasis(ay, ax.clone().multiplyScalar(-L), az).setPosition(c);
    coneMesh.matrixWorldNeedsUpdate = true;
    if (arrow) arrow.visible = false;
    if (arrow && jointForce) {
      const f = new THREE.Vector3(jointForce[3 * frame], jointForce[3 * frame + 1], jointForce[3 * frame + 2]);
      const n = f.length();
      arrow.visible = Number.isFinite(n) && n > 0;
      if (arrow.visible) {
        arrow.position.copy(c);
        arrow.setDirection(f.clone().normalize());
        arrow.setLength(1.4 * L * n / jointMax, 0.2 * L, 0.1 * L);
        arrow.setColor(inside[frame] ? 0x1e8449 : 0xc0392b);
      }
    }
  }

  // ---- a frame ----
  let frame = 0;
  function setFrame(f) {
    frame = Math.min(Math.max(f | 0, 0), nF - 1);
    const pos = positions.subarray(frame * nP * 3, (frame + 1) * nP * 3);
    const pa = points.geometry.attributes.position;
    pa.array.set(pos);
    pa.needsUpdate = true;
    placeCapsules(pos);
    meshObjects.forEach((obj) => { bodyMatrix(frame, obj.userData.body, obj.matrix); obj.matrixWorldNeedsUpdate = true; });
    const len = size * 0.04;
    axes.forEach((obj, a) => {
      const aa = obj.geometry.attributes.position;
      for (let b = 0; b < nB; b++) {
        const o = (frame * nB + b) * 12, k = b * 6;
        for (let c = 0; c < 3; c++) {
          aa.array[k + c] = bodyFrames[o + c];
          aa.array[k + 3 + c] = bodyFrames[o + c] + len * bodyFrames[o + 3 + a * 3 + c];
        }
      }
      aa.needsUpdate = true;
    });
    lineObjects.forEach((obj, l) => {
      const i = frame * nL + l;
      const n = D.line_counts[i], s = lineStart[i] * 3;
      const a = obj.geometry.attributes.position;
      a.array.set(linePoints.subarray(s, s + n * 3));
      a.needsUpdate = true;
      obj.geometry.setDrawRange(0, n);
      obj.geometry.computeBoundingSphere();
    });
    colourMuscles();
    shapeObjects.forEach((mesh, k) => {
      if (!mesh) return;
      const o = (frame * nS + k) * 12, v = shapeData;
      mesh.matrix.set(v[o + 3], v[o + 6], v[o + 9], v[o], v[o + 4], v[o + 7], v[o + 10], v[o + 1],
        v[o + 5], v[o + 8], v[o + 11], v[o + 2], 0, 0, 0, 1);
      mesh.matrixWorldNeedsUpdate = true;
    });
    placeJoint();
    slider.value = String(frame);
    let jointText = '';
    if (cone && cone.force) {
      const n = Math.hypot(cone.force[3 * frame], cone.force[3 * frame + 1], cone.force[3 * frame + 2]);
      if (Number.isFinite(n)) jointText = `   ${D.cone.joint} force ${n.toFixed(0)} N${D.cone.inside[frame] ? '' : ' (outside the cone)'}`;
    }
    timeLabel.textContent = `frame ${frame + 1} / ${nF}   t = ${D.times[frame].toFixed(3)} s${jointText}`;
    if (pinned !== null) { hoverSide = pinnedSide; showInfo(pinned); }
    render();
  }
  function colourMuscles() {
    const fs = side ? compare.forces : forces;
    if (!fs) return;
    lineObjects.forEach((obj) => {
      const m = D.elements[obj.userData.element].muscle;
      if (m !== null) obj.material.color.copy(forceColour(fs[frame * nM + m]));
    });
  }
  function showResults(s) {
    side = s;
    colourMuscles();
    placeJoint();
  }
  // (w, h: the drawing's size in CSS pixels, the window's unless a picture is drawn)
  function render(w = viewSize()[0], h = viewSize()[1]) {
    if (!compare) {
      renderer.render(scene, camera);
      return;
    }
    const half = Math.floor(w / 2);
    renderer.setScissorTest(true);
    for (const s of [0, 1]) {
      showResults(s);
      renderer.setViewport(s * half, 0, half, h);
      renderer.setScissor(s * half, 0, half, h);
      renderer.render(scene, camera);
    }
    renderer.setScissorTest(false);
    renderer.setViewport(0, 0, w, h);
    showResults(0);
  }

  // ---- the page around it ----
  const panel = document.body.appendChild(document.createElement('div'));
  panel.id = 'panel';
  const h1 = panel.appendChild(document.createElement('h1'));
  h1.textContent = D.title;
  const counts = { joint: cone ? 1 : 0, bones: capsules.length + meshObjects.length, frames: nB, points: nP, obstacles: 0, contacts: 0, axes: 0, elements: 0, muscles: nM };
  shapes.forEach((s, k) => { if (shapeObjects[k] && D.elements[s.el].group !== 'contact') counts.obstacles++; });
  D.elements.forEach((e) => {
    if (e.group === 'contact') counts.contacts++;
    else if ((e.group === 'element' || e.group === 'axes') && e.lines) counts[e.group === 'axes' ? 'axes' : 'elements']++;
  });
  const labels = { joint: `${D.cone ? D.cone.joint : ''} cone${D.cone && D.cone.force ? ' and force' : ''}`, bones: 'bones', frames: 'body frames', points: 'points', obstacles: 'obstacles', contacts: 'contacts', axes: 'joint axes', elements: 'other elements', muscles: 'muscles' };
  for (const name of Object.keys(groups)) {
    if (!counts[name]) continue;
    const l = panel.appendChild(document.createElement('label'));
    const box = l.appendChild(Object.assign(document.createElement('input'), { type: 'checkbox', checked: true }));
    box.dataset.group = name;
    l.appendChild(document.createTextNode(` ${labels[name]} (${counts[name]})`));
    box.addEventListener('change', () => { groups[name].visible = box.checked; render(); });
  }
  if (nM) {
    const det = panel.appendChild(document.createElement('details'));
    det.appendChild(document.createElement('summary')).textContent = 'muscles one by one';
    const list = det.appendChild(document.createElement('div'));
    list.id = 'muscle-list';
    lineObjects.forEach((obj) => {
      const e = D.elements[obj.userData.element];
      if (e.group !== 'muscle') return;
      const l = list.appendChild(document.createElement('label'));
      const box = l.appendChild(Object.assign(document.createElement('input'), { type: 'checkbox', checked: true }));
      box.dataset.muscle = e.name;
      l.appendChild(document.createTextNode(' ' + e.name));
      box.addEventListener('change', () => { obj.visible = box.checked; render(); });
    });
  }
  const controlsBar = document.body.appendChild(document.createElement('div'));
  controlsBar.id = 'controls';
  const play = controlsBar.appendChild(Object.assign(document.createElement('button'), { id: 'play', textContent: 'play' }));
  const slider = controlsBar.appendChild(Object.assign(document.createElement('input'), {
    id: 'slider', type: 'range', min: '0', max: String(nF - 1), step: '1', value: '0',
  }));
  const timeLabel = controlsBar.appendChild(Object.assign(document.createElement('span'), { id: 'time' }));
  for (const name of Object.keys(views)) {
    const b = controlsBar.appendChild(Object.assign(document.createElement('button'), { textContent: name }));
    b.dataset.view = name;
    b.addEventListener('click', () => { viewFrom(name); render(); });
  }
  // the picture of this frame at a chosen size (pixels), saved as a PNG: drawn off the window's
  // size and back
  const pngSize = controlsBar.appendChild(Object.assign(document.createElement('input'), {
    id: 'png-size', type: 'text', size: 9, value: `${viewSize()[0]}x${viewSize()[1]}`, title: 'the PNG\'s size, WxH pixels',
  }));
  const pngButton = controlsBar.appendChild(Object.assign(document.createElement('button'), { id: 'png', textContent: 'PNG' }));
  pngButton.addEventListener('click', () => {
    const m = /^\s*(\d+)\s*x\s*(\d+)\s*$/.exec(pngSize.value);
    const [w, h] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
    if (!(w >= 16 && h >= 16 && w <= 8192 && h <= 8192)) { pngSize.setCustomValidity('WxH, 16 to 8192'); pngSize.reportValidity(); return; }
    pngSize.setCustomValidity('');
    const url = pictureAt(w, h);
    const a = Object.assign(document.createElement('a'), { href: url, download: `frame-${String(frame).padStart(5, '0')}.png` });
    document.body.appendChild(a);
    a.click();
    a.remove();
  });
  slider.addEventListener('input', () => setFrame(Number(slider.value)));
  let playing = null;
  play.addEventListener('click', () => {
    if (playing) { clearInterval(playing); playing = null; play.textContent = 'play'; return; }
    play.textContent = 'pause';
    playing = setInterval(() => setFrame((frame + 1) % nF), 1000 / 30);
  });
  const info = document.body.appendChild(Object.assign(document.createElement('div'), { id: 'info' }));
  if (forces) {
    const bar = document.body.appendChild(Object.assign(document.createElement('div'), { id: 'colorbar' }));
    bar.style.display = 'block';
    bar.appendChild(document.createTextNode(`${fMax.toFixed(0)} N`));
    const c = bar.appendChild(document.createElement('canvas'));
    c.width = 1; c.height = 100;
    const g = c.getContext('2d');
    for (let y = 0; y < 100; y++) { g.fillStyle = '#' + forceColour(fMax * (1 - y / 99)).getHexString(); g.fillRect(0, y, 1, 1); }
    bar.appendChild(document.createTextNode('0 N'));
  }
  if (compare) {
    for (const [s, text] of [[0, D.title], [1, compare.title]]) {
      const label = document.body.appendChild(Object.assign(document.createElement('div'), { className: 'compare-title', textContent: text }));
      label.style.left = s ? '50%' : '0';
    }
  }
  let pinned = null, pinnedSide = 0, hoverSide = 0;
  function showInfo(obj) {
    const e = D.elements[obj.userData.element];
    let text = `${e.name}  (${e.kind})`;
    if (e.muscle !== null) {
      text += `\nlength ${(lengths[frame * nM + e.muscle] * 1000).toFixed(1)} mm`;
      const fs = hoverSide && compare ? compare.forces : forces;
      if (fs) {
        const f = fs[frame * nM + e.muscle];
        text += Number.isFinite(f) ? `\nforce ${f.toFixed(1)} N` : '\nforce: none in this frame';
      }
    }
    info.textContent = text;
    info.style.display = 'block';
  }
  const raycaster = new THREE.Raycaster();
  raycaster.params.Line.threshold = size * 0.006;
  // the pointer in the camera's coordinates (-1 to 1), in its half with --compare
  function pointer(ev) {
    const r = renderer.domElement.getBoundingClientRect();
    const width = compare ? r.width / 2 : r.width;
    const s = compare && ev.clientX - r.left >= width ? 1 : 0;
    return { side: s, at: new THREE.Vector2(((ev.clientX - r.left - s * width) / width) * 2 - 1, -((ev.clientY - r.top) / r.height) * 2 + 1) };
  }
  function pick(ev) {
    const p = pointer(ev);
    hoverSide = p.side;
    raycaster.setFromCamera(p.at, camera);
    // three's raycaster also hits objects of hidden groups: only what is shown counts
    const shown = (o) => { for (; o; o = o.parent) if (!o.visible) return false; return true; };
    const hits = raycaster.intersectObjects([groups.muscles, groups.axes, groups.elements, groups.contacts], true).filter((h) => shown(h.object));
    return hits.length ? hits[0].object : null;
  }
  function pickBody(ev) {
    raycaster.setFromCamera(pointer(ev).at, camera);
    if (!groups.bones.visible) return null;
    const hits = raycaster.intersectObjects(groups.bones.children, false).filter((h) => h.object.visible);
    return hits.length ? hits[0].object.userData.body : null;
  }
  // the centre of a body's bones in this frame: its meshes' boxes, else its capsules' ends,
  // else its origin
  function bodyCentre(b) {
    const lo = new THREE.Vector3(Infinity, Infinity, Infinity), hi = lo.clone().negate(), v = new THREE.Vector3();
    const add = (p) => { lo.min(p); hi.max(p); };
    (D.meshes || []).forEach((m, k) => {
      if (m.body !== b) return;
      for (let c = 0; c < 8; c++) add(v.set(m.box[c & 1 ? 3 : 0], m.box[c & 2 ? 4 : 1], m.box[c & 4 ? 5 : 2]).applyMatrix4(meshObjects[k].matrix));
    });
    if (lo.x > hi.x) capsules.forEach(({ c }) => { if (c.body === b) for (const e of c.ends) add(v.fromArray(positions, (frame * nP + e) * 3)); });
    if (lo.x > hi.x) { const o = (frame * nB + b) * 12; add(v.set(bodyFrames[o], bodyFrames[o + 1], bodyFrames[o + 2])); }
    return lo.add(hi).multiplyScalar(0.5);
  }
  renderer.domElement.addEventListener('pointermove', (ev) => {
    const o = pick(ev);
    if (o) showInfo(o); else if (pinned) { hoverSide = pinnedSide; showInfo(pinned); } else info.style.display = 'none';
  });
  renderer.domElement.addEventListener('click', (ev) => { pinned = pick(ev); pinnedSide = hoverSide; if (pinned) showInfo(pinned); else info.style.display = 'none'; });
  // double-click on a bone: orbit about that body (its bones' centre in this frame)
  renderer.domElement.addEventListener('dblclick', (ev) => {
    const body = pickBody(ev);
    if (body === null) return;
    const c = bodyCentre(body);
    camera.position.add(c.clone().sub(controls.target));
    controls.target.copy(c);
    controls.update();
    render();
  });
  // this frame drawn at w x h pixels (the camera's view kept) as a PNG data URL; the drawing's
  // size restored after
  function pictureAt(w, h) {
    const [cw, ch] = viewSize();
    renderer.setPixelRatio(1);
    renderer.setSize(w, h, false);
    camera.aspect = w / (compare ? 2 : 1) / h;
    camera.updateProjectionMatrix();
    render(w, h);
    const url = renderer.domElement.toDataURL('image/png');
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    renderer.setSize(cw, ch);
    camera.aspect = aspect();
    camera.updateProjectionMatrix();
    render();
    return url;
  }
  window.addEventListener('resize', () => {
    camera.aspect = aspect();
    if (current) viewFrom(current);
    camera.updateProjectionMatrix();
    renderer.setSize(...viewSize());
    render();
  });

  T.scene = performance.now();
  // hide=bones,obstacles,... starts with those groups hidden (a link that shows just the muscles)
  for (const name of (params.get('hide') || '').split(',')) {
    const box = panel.querySelector(`input[data-group="${name}"]`);
    if (box && groups[name]) { box.checked = false; groups[name].visible = false; }
  }
  viewFrom(views[params.get('view')] || axisViews[params.get('view')] ? params.get('view') : 'front');
  setFrame(Number(params.get('frame') || 0));
  // from the start of the navigation (in a fresh headless browser that counts its start-up
  // too), and from the page's first script to its first picture (parsing the embedded
  // three.js and the data, decoding, building the scene, the first frame drawn)
  const loadMs = performance.now();
  const pageMs = loadMs - (window.mollierStart || 0);

  // ---- the page's own account, for tests and scripts ----
  function pixels() {
    const gl = renderer.getContext();
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const px = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    return { w, h, px };
  }
  function drawnMusclePaths() {
    return lineObjects.filter((o) => o.visible && D.elements[o.userData.element].group === 'muscle' && o.geometry.drawRange.count >= 2).length;
  }
  // For each muscle: whether a pixel of its colour is near one of its projected points.
  function colourCheck() {
    // the translucent solids and the bones are drawn over muscles behind them: hidden meanwhile
    const hidden = ['obstacles', 'contacts', 'bones', 'frames', 'points', 'axes', 'elements', 'joint'].filter((g) => groups[g].visible);
    hidden.forEach((g) => { groups[g].visible = false; });
    render();
    const { w, h, px } = pixels();
    hidden.forEach((g) => { groups[g].visible = true; });
    render();
    const v = new THREE.Vector3();
    const near = [];
    const checked = [];
    lineObjects.forEach((obj, l) => {
      const e = D.elements[obj.userData.element];
      if (e.group !== 'muscle') return;
      const hex = obj.material.color.getHex();
      const want = [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255];
      const i = frame * nL + l, s = lineStart[i] * 3, n = D.line_counts[i];
      let found = false;
      const screen = [];
      for (let k = 0; k < n && !found; k++) {
        v.set(linePoints[s + 3 * k], linePoints[s + 3 * k + 1], linePoints[s + 3 * k + 2]).project(camera);
        const x = Math.round((v.x + 1) / 2 * w), y = Math.round((v.y + 1) / 2 * h);
        screen.push([x, h - 1 - y]);
        for (let dy = -2; dy <= 2 && !found; dy++) for (let dx = -2; dx <= 2 && !found; dx++) {
          const xx = x + dx, yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const o = (yy * w + xx) * 4;
          found = Math.abs(px[o] - want[0]) + Math.abs(px[o + 1] - want[1]) + Math.abs(px[o + 2] - want[2]) < 40;
        }
      }
      checked.push(e.name);
      if (found) near.push(e.name);
    });
    return { muscles: checked.length, found: near.length, missing: checked.filter((m) => !near.includes(m)) };
  }
  // Each muscle's path points on the screen (CSS pixels from the top left) and its colour, and
  // the rectangles of the page's panels, for a check on a screenshot of the same view.
  function projections() {
    const r = renderer.domElement.getBoundingClientRect();
    const v = new THREE.Vector3();
    const muscles = [];
    lineObjects.forEach((obj, l) => {
      const e = D.elements[obj.userData.element];
      if (e.group !== 'muscle' || !obj.visible) return;
      const hex = obj.material.color.getHex();
      const i = frame * nL + l, s = lineStart[i] * 3, n = D.line_counts[i];
      const points = [];
      for (let k = 0; k < n; k++) {
        v.set(linePoints[s + 3 * k], linePoints[s + 3 * k + 1], linePoints[s + 3 * k + 2]).project(camera);
        points.push([r.left + (v.x + 1) / 2 * r.width, r.top + (1 - v.y) / 2 * r.height]);
      }
      muscles.push({ name: e.name, colour: [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255], points });
    });
    const panels = ['panel', 'controls', 'colorbar', 'info'].map((id) => document.getElementById(id))
      .filter((el) => el && el.offsetParent !== null).map((el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; });
    return { muscles, panels };
  }
  // Each drawn joint axis in this frame: its element, type and end points (m).
  function jointAxes() {
    const out = [];
    lineObjects.forEach((obj, l) => {
      const e = D.elements[obj.userData.element];
      const i = frame * nL + l, s = lineStart[i] * 3, n = D.line_counts[i];
      if (e.group !== 'axes' || !obj.visible || n < 2) return;
      out.push({ name: e.name, kind: e.kind, points: Array.from(linePoints.subarray(s, s + 3 * n)) });
    });
    return out;
  }
  // The named points of every frame that project outside the view (the camera's start).
  function outOfView() {
    const v = new THREE.Vector3();
    let outside = 0;
    for (let i = 0; i < nF * nP; i++) {
      v.set(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]);
      if (!Number.isFinite(v.x)) continue;
      v.project(camera);
      if (Math.abs(v.x) > 1 || Math.abs(v.y) > 1) outside++;
    }
    return { points: nF * nP, outside };
  }
  function fingerprint() {
    const { px } = pixels();
    let hash = 2166136261, nonBackground = 0;
    for (let i = 0; i < px.length; i += 4) {
      hash = Math.imul(hash ^ (px[i] | (px[i + 1] << 8) | (px[i + 2] << 16)), 16777619) >>> 0;
      if (px[i] !== 0xf4 || px[i + 1] !== 0xf4 || px[i + 2] !== 0xf2) nonBackground++;
    }
    return { hash, nonBackground };
  }
  // Where the camera looks from and how much of the view the model fills: the largest |x| and
  // |y| of every point and mesh box corner of every frame in normalized device coordinates
  // (1: the edge of the view).
  function cameraReport() {
    const v = new THREE.Vector3();
    let x = 0, y = 0;
    eachScenePoint((px, py, pz) => {
      v.set(px, py, pz).project(camera);
      x = Math.max(x, Math.abs(v.x));
      y = Math.max(y, Math.abs(v.y));
    });
    const dir = camera.position.clone().sub(controls.target).normalize();
    const up = new THREE.Vector3(0, 1, 0).applyQuaternion(camera.quaternion);
    return { view: current, from: dir.toArray(), screen_up: up.toArray(), fill: [x, y], forward: forward.toArray(), up: worldUp.toArray() };
  }
  function bonesReport() {
    return { capsules: capsules.length, meshes: meshObjects.map((o, k) => ({ body: D.bodies[o.userData.body].name, mesh: o.userData.mesh, triangles: meshes[k].geometry.index.count / 3 })) };
  }
  // export=K,L,... (or all): each frame's canvas as a PNG data URL, one line `K data:...` each
  const exportFrames = params.get('export');
  if (exportFrames) {
    const list = exportFrames === 'all' ? [...Array(nF).keys()] : exportFrames.split(',').map(Number).filter((k) => Number.isInteger(k) && k >= 0 && k < nF);
    const lines = list.map((k) => { setFrame(k); return `${k} ${renderer.domElement.toDataURL('image/png')}`; });
    document.body.appendChild(Object.assign(document.createElement('pre'), { id: 'mollier-export', textContent: lines.join('\n') }));
  }
  // video=FPS: every frame encoded as VP8 (the browser's WebCodecs) with the timestamps of FPS
  // frames a second, not the wall clock's (MediaRecorder's), so that a renderer slower than FPS
  // does not stretch the video; window.mollierVideo resolves to JSON of the encoded chunks
  // (timestamps in µs), which `mollier view --video` writes as WebM
  async function recordVideo(fps) {
    const canvas = renderer.domElement, w = canvas.width, h = canvas.height;
    const config = { codec: 'vp8', width: w, height: h, bitrate: Math.round(0.1 * w * h * fps), framerate: fps };
    if (typeof VideoEncoder === 'undefined' || !(await VideoEncoder.isConfigSupported(config)).supported) {
      return JSON.stringify({ error: `this browser cannot encode VP8 at ${w}x${h}` });
    }
    const chunks = [];
    let failure = null;
    const encoder = new VideoEncoder({
      output: (c) => {
        const b = new Uint8Array(c.byteLength);
        c.copyTo(b);
        let bin = '';
        for (let i = 0; i < b.length; i += 0x8000) bin += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
        chunks.push({ t: c.timestamp, key: c.type === 'key', data: btoa(bin) });
      },
      error: (e) => { failure = String(e); },
    });
    encoder.configure(config);
    // a key frame every second, for seeking
    const keyEvery = Math.max(1, Math.round(fps));
    for (let k = 0; k < nF && !failure; k++) {
      setFrame(k);
      const f = new VideoFrame(canvas, { timestamp: Math.round((k * 1e6) / fps), duration: Math.round(1e6 / fps) });
      encoder.encode(f, { keyFrame: k % keyEvery === 0 });
      f.close();
      while (encoder.encodeQueueSize > 4) await new Promise((r) => setTimeout(r, 5));
    }
    if (!failure) await encoder.flush();
    encoder.close();
    return JSON.stringify({ width: w, height: h, fps, frames: nF, chunks, error: failure });
  }
  const videoFps = Number(params.get('video'));
  if (videoFps > 0) window.mollierVideo = recordVideo(videoFps).catch((e) => JSON.stringify({ error: String(e) }));
  // a body's bones' centre in this frame (m) and where it is on the screen (CSS pixels from the
  // top left), and the orbit's target (m): for a test of the double-click
  function bodyOnScreen(name) {
    const b = D.bodies.findIndex((x) => x.name === name);
    if (b < 0) return null;
    const c = bodyCentre(b), v = c.clone().project(camera), r = renderer.domElement.getBoundingClientRect();
    return { centre: c.toArray(), screen: [r.left + (v.x + 1) / 2 * r.width / (compare ? 2 : 1), r.top + (1 - v.y) / 2 * r.height] };
  }
  const target = () => controls.target.toArray();
  window.mollierView = { D, setFrame, render, drawnMusclePaths, colourCheck, projections, jointAxes, fingerprint, bodyOnScreen, target, errors, loadMs, pageMs, get frame() { return frame; } };
  if (params.get('test')) {
    const report = { phases_ms: T, load_ms: loadMs, page_ms: pageMs, frames: nF, frame, muscles: nM, drawn_muscle_paths: drawnMusclePaths(), points: D.points };
    report.positions = Array.from(positions.subarray(frame * nP * 3, (frame + 1) * nP * 3));
    report.colours = colourCheck();
    report.projections = projections();
    report.joint_axes = jointAxes();
    report.in_view = outOfView();
    report.camera = cameraReport();
    if (compare) {
      // the two halves' pixels, to see the same camera (same results: equal halves)
      const { w, h, px } = pixels(), half = Math.floor(w / 2);
      const hashes = [0, 1].map((s) => {
        let hash = 2166136261, colours = new Set();
        for (let y = 0; y < h; y++) for (let x = 0; x < half; x++) {
          const o = (y * w + s * half + x) * 4, c = px[o] | (px[o + 1] << 8) | (px[o + 2] << 16);
          hash = Math.imul(hash ^ c, 16777619) >>> 0;
          colours.add(c);
        }
        return { hash, colours: colours.size };
      });
      // and how many pixels differ between the halves (one camera: a pixel or two where
      // overlapping translucent solids tie in depth)
      let differ = 0;
      for (let y = 0; y < h; y++) for (let x = 0; x < half; x++) {
        const o = (y * w + x) * 4, p = o + half * 4;
        if (px[o] !== px[p] || px[o + 1] !== px[p + 1] || px[o + 2] !== px[p + 2]) differ++;
      }
      report.compare = { title: compare.title, left: hashes[0], right: hashes[1], differ };
    }
    report.bones = bonesReport();
    // the shader programs the first frames compiled (each costs a software renderer ~0.5 s)
    report.programs = renderer.info.programs.map((p) => p.cacheKey.split(',')[0]);
    // the names as the page shows them (text, never markup), and what the document holds: a
    // name that broke out of its text would add elements or scripts
    report.shown = {
      title: h1.textContent,
      // the <title> element's own text (document.title drops controls and folds spaces)
      title_element: document.querySelector('title').textContent,
      muscles: [...panel.querySelectorAll('#muscle-list label')].map((l) => l.textContent.slice(1)),
      tags: [...new Set([...document.querySelectorAll('*')].map((e) => e.tagName.toLowerCase()))].sort(),
      scripts: document.scripts.length,
    };
    // the canvas itself, to compare with what `mollier view --png` writes
    if (params.get('png')) report.png = renderer.domElement.toDataURL('image/png');
    const first = fingerprint();
    const other = (frame + Math.max(1, Math.floor(nF / 2))) % nF;
    setFrame(other);
    const second = fingerprint();
    setFrame(report.frame);
    report.picture = { frame: first, other_frame: other, other: second, changed: nF > 1 && first.hash !== second.hash };
    report.canvas = { width: renderer.domElement.width, height: renderer.domElement.height };
    report.errors = errors;
    const out = document.body.appendChild(Object.assign(document.createElement('pre'), { id: 'mollier-test' }));
    out.textContent = JSON.stringify(report);
  }
})();
