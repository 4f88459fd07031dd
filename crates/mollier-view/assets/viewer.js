// Mollier's viewer: draws the geometry Mollier computed (the JSON in #mollier-data) with three.js.
// It computes no mechanics: every position, path point and solid comes from the file.
// URL parameters: frame=K shows frame K first; hide=bones,obstacles,... hides groups; size=WxH
// fixes the drawing's size; view=front|side|top the camera's start; test=1 runs the page's
// self-checks and writes them as JSON into #mollier-test (read by tools/test-viewer through
// --dump-dom); export=K,L,... or export=all writes those frames' canvas as PNG data URLs into
// #mollier-export (read by `mollier view --png/--frames` through --dump-dom).
// With --compare the data holds a second geometry (`compare`), drawn in the right half as a
// scene of its own with the same camera; the frames of the page are then its `steps` (the
// frame each half shows), and frame=K, export=K and the slider count in steps.
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
  // the page's steps: the frame each half shows (one model: its frames)
  const steps = D.compare ? D.steps : D.times.map((_, k) => [k, 0]);
  const nSteps = steps.length;
  const pair = !!D.compare;

  // Every shaded solid (bones, obstacles, contacts, the cone) is drawn by one lit shader
  // program: the same settings (blended, both sides in one pass; `solid`), the colour and
  // opacity being uniforms. three.js compiles a program per set of settings (opaque or not,
  // each side; two passes, back then front, for a translucent double-sided one), and a software
  // renderer (SwiftShader, headless) compiles each on the CPU at the first frame.
  const solid = (color, opacity, depthWrite = false) => new THREE.MeshLambertMaterial({
    color, opacity, depthWrite, transparent: true, side: THREE.DoubleSide, forceSinglePass: true,
  });
  const boneMaterial = solid(0xe6dcc8, 1, true);
  const unitCylinder = new THREE.CylinderGeometry(1, 1, 1, 24, 1, true);
  const unitBall = new THREE.SphereGeometry(1, 24, 12);
  const unit = {
    sphere: new THREE.SphereGeometry(1, 32, 16),
    ellipsoid: new THREE.SphereGeometry(1, 48, 24),
    // three's cylinder runs along y: turned to run along z, from -1 to 1
    cylinder: new THREE.CylinderGeometry(1, 1, 2, 32, 1, true).rotateX(Math.PI / 2),
  };
  const groupNames = ['bones', 'frames', 'points', 'obstacles', 'contacts', 'axes', 'elements', 'muscles', 'joint'];
  // colours of the force scale (N): blue, cyan, yellow, red
  const stops = [[0.17, 0.25, 0.75], [0.1, 0.7, 0.8], [0.95, 0.8, 0.15], [0.85, 0.1, 0.08]];
  function forceColour(f, fMax) {
    if (!Number.isFinite(f)) return new THREE.Color(0.6, 0.6, 0.6);
    const t = Math.min(Math.max(fMax > 0 ? f / fMax : 0, 0), 1) * (stops.length - 1);
    const i = Math.min(Math.floor(t), stops.length - 2), u = t - i;
    return new THREE.Color(...[0, 1, 2].map((a) => stops[i][a] * (1 - u) + stops[i + 1][a] * u));
  }
  function dynamic(n) {
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(Math.max(n, 1) * 3), 3));
    return g;
  }

  // ---- one model's scene: its bodies, muscles, solids and joint cone through its frames ----
  // (`s`: 0 the page's model, 1 the compared one in the right half)
  function Side(D, s) {
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
    if (forces) for (const f of forces) if (Number.isFinite(f) && f > fMax) fMax = f;

    const scene = new THREE.Scene();
    scene.add(new THREE.AmbientLight(0xffffff, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(1, 2, 3);
    scene.add(sun);
    // everything drawn hangs from `root`, which places the model in the page (a pair: each
    // model turned to the page's axes and centred; one model: where it is)
    const root = new THREE.Group();
    root.matrixAutoUpdate = false;
    scene.add(root);

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
    // the points and the meshes' box corners of every frame (model coordinates), so that the
    // motion stays in view (flat arrays: a long motion has hundreds of thousands of points)
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
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (const a of [positions, meshCorners]) for (let i = 0; i + 2 < a.length; i += 3) {
      for (let c = 0; c < 3; c++) if (Number.isFinite(a[i] + a[i + 1] + a[i + 2])) { lo[c] = Math.min(lo[c], a[i + c]); hi[c] = Math.max(hi[c], a[i + c]); }
    }
    if (!Number.isFinite(lo[0])) { lo.fill(-0.5); hi.fill(0.5); meshCorners.push(...lo, ...hi); }
    const size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-3);
    // each point and mesh box corner of every frame where the page draws it
    const wp = new THREE.Vector3();
    function eachPoint(fn) {
      const moved = !root.matrix.equals(identity);
      for (const a of [positions, meshCorners]) for (let i = 0; i + 2 < a.length; i += 3) {
        let x = a[i], y = a[i + 1], z = a[i + 2];
        if (!Number.isFinite(x + y + z)) continue;
        if (moved) {
          wp.set(x, y, z).applyMatrix4(root.matrix);
          x = wp.x; y = wp.y; z = wp.z;
        }
        fn(x, y, z);
      }
    }

    const groups = {};
    for (const name of groupNames) {
      groups[name] = new THREE.Group();
      root.add(groups[name]);
    }
    // bones: each body's meshes, else its capsules (between its joints, see mollier_view::capsules)
    const meshObjects = meshes.map((m) => {
      const obj = new THREE.Mesh(m.geometry, boneMaterial);
      obj.matrixAutoUpdate = false;
      obj.userData = { side: s, body: m.body, mesh: m.name };
      groups.bones.add(obj);
      return obj;
    });
    const meshed = new Set(meshes.map((m) => m.body));
    // a body with a mesh has no capsules, nor has a body without one towards a body with one
    // (ground to the pelvis: the pelvis's mesh shows that bone)
    const capsules = (D.capsules || []).filter((c) => !meshed.has(c.body) && !(c.child !== null && meshed.has(c.child))).map((c) => {
      const parts = [unitCylinder, unitBall, unitBall].map((g) => {
        const m = new THREE.Mesh(g, boneMaterial);
        m.matrixAutoUpdate = false;
        m.userData = { side: s, body: c.body, capsule: true };
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
    const lineObjects = lines.map((l, i) => {
      const e = D.elements[l.el];
      const colour = e.group === 'muscle' ? 0xc0392b : e.group === 'axes' ? 0x8e44ad : 0x2c3e50;
      const obj = new THREE.Line(dynamic(maxCount[i]), new THREE.LineBasicMaterial({ color: colour }));
      obj.frustumCulled = false;
      obj.userData = { side: s, element: l.el };
      const into = { muscle: groups.muscles, contact: groups.contacts, axes: groups.axes };
      (into[e.group] || groups.elements).add(obj);
      return obj;
    });
    // an obstacle several muscles wrap over is in each muscle's drawing: drawn once
    const seen = new Set();
    const shapeObjects = shapes.map((sh, k) => {
      const key = sh.kind + Array.from(shapeData.subarray(k * 12, k * 12 + 12), (v) => v.toFixed(6)).join(',');
      if (seen.has(key)) return null;
      seen.add(key);
      const contact = D.elements[sh.el].group === 'contact';
      const m = new THREE.Mesh(unit[sh.kind], contact ? solid(0xd9c8a9, 0.3) : solid(0x8fa9c4, 0.45));
      m.matrixAutoUpdate = false;
      m.userData = { side: s, element: sh.el };
      (contact ? groups.contacts : groups.obstacles).add(m);
      return m;
    });

    // the joint's stability cone (apex at the joint centre, opening along its x axis, into the
    // socket) and the joint force as an arrow, green inside the cone, red outside
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
    const side = { s, D, scene, root, groups, positions, lengths, forces, linePoints, lineStart, nF, nP, nM, nB, nL, size, fMax, meshes, meshObjects, capsules, lineObjects, shapeObjects, cone, frame: 0, eachPoint };
    function placeJoint() {
      if (!cone) return;
      const frame = side.frame, o = frame * 12, v = cone.frames, L = coneLength;
      const c = new THREE.Vector3(v[o], v[o + 1], v[o + 2]);
      const ax = new THREE.Vector3(v[o + 3], v[o + 4], v[o + 5]);
      const ay = new THREE.Vector3(v[o + 6], v[o + 7], v[o + 8]).multiplyScalar(L * cone.tan[0]);
      const az = new THREE.Vector3(v[o + 9], v[o + 10], v[o + 11]).multiplyScalar(L * cone.tan[1]);
      coneMesh.matrix.makeBasis(ay, ax.clone().multiplyScalar(-L), az).setPosition(c);
      coneMesh.matrixWorldNeedsUpdate = true;
      if (!arrow) return;
      const f = new THREE.Vector3(cone.force[3 * frame], cone.force[3 * frame + 1], cone.force[3 * frame + 2]);
      const n = f.length();
      arrow.visible = Number.isFinite(n) && n > 0;
      if (arrow.visible) {
        arrow.position.copy(c);
        arrow.setDirection(f.clone().normalize());
        arrow.setLength(1.4 * L * n / jointMax, 0.2 * L, 0.1 * L);
        arrow.setColor(D.cone.inside[frame] ? 0x1e8449 : 0xc0392b);
      }
    }
    function colourMuscles() {
      if (!forces) return;
      lineObjects.forEach((obj) => {
        const m = D.elements[obj.userData.element].muscle;
        if (m !== null) obj.material.color.copy(forceColour(forces[side.frame * nM + m], side.fMax));
      });
    }
    // show frame f (clamped to the motion's)
    side.setFrame = function (f) {
      const frame = side.frame = Math.min(Math.max(f | 0, 0), nF - 1);
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
        const n = D.line_counts[i], st = lineStart[i] * 3;
        const a = obj.geometry.attributes.position;
        a.array.set(linePoints.subarray(st, st + n * 3));
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
    };
    // this frame's time and joint force, as the page writes them
    side.timeText = function () {
      const frame = side.frame;
      let jointText = '';
      if (cone && cone.force) {
        const n = Math.hypot(cone.force[3 * frame], cone.force[3 * frame + 1], cone.force[3 * frame + 2]);
        if (Number.isFinite(n)) jointText = `   ${D.cone.joint} force ${n.toFixed(0)} N${D.cone.inside[frame] ? '' : ' (outside the cone)'}`;
      }
      return `frame ${frame + 1} / ${nF}   t = ${D.times[frame].toFixed(3)} s${jointText}`;
    };
    // the centre of a body's bones in this frame, where the page draws it: its meshes' boxes,
    // else its capsules' ends, else its origin
    side.bodyCentre = function (b) {
      const lo = new THREE.Vector3(Infinity, Infinity, Infinity), hi = lo.clone().negate(), v = new THREE.Vector3();
      const add = (p) => { lo.min(p); hi.max(p); };
      const frame = side.frame;
      (D.meshes || []).forEach((m, k) => {
        if (m.body !== b) return;
        for (let c = 0; c < 8; c++) add(v.set(m.box[c & 1 ? 3 : 0], m.box[c & 2 ? 4 : 1], m.box[c & 4 ? 5 : 2]).applyMatrix4(meshObjects[k].matrix));
      });
      if (lo.x > hi.x) capsules.forEach(({ c }) => { if (c.body === b) for (const e of c.ends) add(v.fromArray(positions, (frame * nP + e) * 3)); });
      if (lo.x > hi.x) { const o = (frame * nB + b) * 12; add(v.set(bodyFrames[o], bodyFrames[o + 1], bodyFrames[o + 2])); }
      return lo.add(hi).multiplyScalar(0.5).applyMatrix4(root.matrix);
    };
    // its box's centre over every frame (model coordinates)
    side.centre = new THREE.Vector3((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2);
    side.bonesReport = () => ({ capsules: capsules.length, meshes: meshObjects.map((o, k) => ({ body: D.bodies[o.userData.body].name, mesh: o.userData.mesh, triangles: meshes[k].geometry.index.count / 3 })) });
    side.drawnMusclePaths = () => lineObjects.filter((o) => o.visible && D.elements[o.userData.element].group === 'muscle' && o.geometry.drawRange.count >= 2).length;
    return side;
  }
  const identity = new THREE.Matrix4();

  const sides = [Side(D, 0)].concat(pair ? [Side(D.compare, 1)] : []);
  T.decoded = performance.now();

  // ---- the drawing: one canvas, one camera, a half for each model of a pair ----
  const container = document.getElementById('view') || document.body.appendChild(Object.assign(document.createElement('div'), { id: 'view' }));
  // size=WxH fixes the drawing's size (CSS pixels), for pictures that do not depend on the window
  const fixedSize = /^(\d+)x(\d+)$/.exec(params.get('size') || '');
  const viewSize = () => (fixedSize ? [Number(fixedSize[1]), Number(fixedSize[2])] : [window.innerWidth, window.innerHeight]);
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setSize(...viewSize());
  renderer.setClearColor(0xf4f4f2);
  container.appendChild(renderer.domElement);
  // the model's up (its `axes`; y by default): the orbit turns about it
  const worldUp = new THREE.Vector3(...(D.up || [0, 1, 0]));
  const forward = new THREE.Vector3(...(D.forward || [1, 0, 0]));
  if (pair) {
    // Each model turned so that its front, up and right are the page's model's, and centred on
    // its box over its motion: one camera then sees both from the same side, each in the middle
    // of its half at the same scale.
    const basis = (f, u) => new THREE.Matrix4().makeBasis(f, u, f.clone().cross(u));
    const page = basis(forward, worldUp);
    for (const side of sides) {
      const turn = page.clone().multiply(basis(new THREE.Vector3(...(side.D.forward || [1, 0, 0])), new THREE.Vector3(...(side.D.up || [0, 1, 0]))).transpose());
      const centre = side.centre.clone().applyMatrix4(turn);
      side.root.matrix.copy(turn).setPosition(centre.negate());
      side.root.matrixWorldNeedsUpdate = true;
    }
    // one colour scale for the same muscles (criterion d against b), each its own otherwise
    const [a, b] = sides;
    if (JSON.stringify(a.D.muscles) === JSON.stringify(b.D.muscles)) a.fMax = b.fMax = Math.max(a.fMax, b.fMax);
  }
  function eachScenePoint(fn) {
    for (const side of sides) side.eachPoint(fn);
  }
  const size = Math.max(...sides.map((x) => x.size));
  const fov = 35;

  // each half of the drawing with --compare
  const aspect = () => viewSize()[0] / (pair ? 2 : 1) / viewSize()[1];
  const camera = new THREE.PerspectiveCamera(fov, aspect(), size / 100, size * 100);
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
  // of every frame (of both models of a pair) is in the view, the nearest side (height or
  // width) filled to 92 %.
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

  // ---- a step: the frame of each half ----
  let frame = 0;
  function setFrame(k) {
    frame = Math.min(Math.max(k | 0, 0), nSteps - 1);
    sides.forEach((side, s) => side.setFrame(steps[frame][s]));
    slider.value = String(frame);
    if (pair) {
      timeLabel.textContent = `step ${frame + 1} / ${nSteps}`;
      sides.forEach((side, s) => { halfTimes[s].textContent = side.timeText(); });
    } else {
      timeLabel.textContent = sides[0].timeText();
    }
    if (pinned !== null) showInfo(pinned);
    render();
  }
  // (w, h: the drawing's size in CSS pixels, the window's unless a picture is drawn)
  function render(w = viewSize()[0], h = viewSize()[1]) {
    if (!pair) {
      renderer.render(sides[0].scene, camera);
      return;
    }
    const half = Math.floor(w / 2);
    renderer.setScissorTest(true);
    sides.forEach((side, s) => {
      renderer.setViewport(s * half, 0, half, h);
      renderer.setScissor(s * half, 0, half, h);
      renderer.render(side.scene, camera);
    });
    renderer.setScissorTest(false);
    renderer.setViewport(0, 0, w, h);
  }

  // ---- the page around it ----
  const panel = document.body.appendChild(document.createElement('div'));
  panel.id = 'panel';
  const h1 = panel.appendChild(document.createElement('h1'));
  h1.textContent = D.title;
  // the groups of both halves together: a box shows or hides a group in both
  const counts = Object.fromEntries(groupNames.map((n) => [n, 0]));
  for (const side of sides) {
    const SD = side.D;
    counts.joint += side.cone ? 1 : 0;
    counts.bones += side.capsules.length + side.meshObjects.length;
    counts.frames += side.nB;
    counts.points += side.nP;
    counts.muscles += side.nM;
    side.shapeObjects.forEach((o) => { if (o && SD.elements[o.userData.element].group !== 'contact') counts.obstacles++; });
    SD.elements.forEach((e) => {
      if (e.group === 'contact') counts.contacts++;
      else if ((e.group === 'element' || e.group === 'axes') && e.lines) counts[e.group === 'axes' ? 'axes' : 'elements']++;
    });
  }
  const cones = sides.filter((x) => x.cone).map((x) => x.D.cone);
  const labels = { joint: `${[...new Set(cones.map((c) => c.joint))].join(', ')} cone${cones.some((c) => c.force) ? ' and force' : ''}`, bones: 'bones', frames: 'body frames', points: 'points', obstacles: 'obstacles', contacts: 'contacts', axes: 'joint axes', elements: 'other elements', muscles: 'muscles' };
  const showGroup = (name, on) => sides.forEach((x) => { x.groups[name].visible = on; });
  for (const name of groupNames) {
    if (!counts[name]) continue;
    const l = panel.appendChild(document.createElement('label'));
    const box = l.appendChild(Object.assign(document.createElement('input'), { type: 'checkbox', checked: true }));
    box.dataset.group = name;
    l.appendChild(document.createTextNode(` ${labels[name]} (${counts[name]})`));
    box.addEventListener('change', () => { showGroup(name, box.checked); render(); });
  }
  // each half's muscles one by one (the right half's list: #muscle-list-1)
  for (const side of sides) {
    if (!side.nM) continue;
    const det = panel.appendChild(document.createElement('details'));
    det.appendChild(document.createElement('summary')).textContent = 'muscles one by one' + (pair ? (side.s ? ' (right)' : ' (left)') : '');
    const list = det.appendChild(document.createElement('div'));
    list.id = side.s ? 'muscle-list-1' : 'muscle-list';
    list.className = 'muscle-list';
    side.lineObjects.forEach((obj) => {
      const e = side.D.elements[obj.userData.element];
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
    id: 'slider', type: 'range', min: '0', max: String(nSteps - 1), step: '1', value: '0',
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
    playing = setInterval(() => setFrame((frame + 1) % nSteps), 1000 / 30);
  });
  const info = document.body.appendChild(Object.assign(document.createElement('div'), { id: 'info' }));
  // each half's force scale (the left's #colorbar, the right's #colorbar-1)
  for (const side of sides) {
    if (!side.forces) continue;
    const bar = document.body.appendChild(Object.assign(document.createElement('div'), { id: side.s ? 'colorbar-1' : 'colorbar', className: 'colorbar' }));
    bar.style.display = 'block';
    if (pair && !side.s) { bar.style.right = 'auto'; bar.style.left = 'calc(50% - 76px)'; }
    bar.appendChild(document.createTextNode(`${side.fMax.toFixed(0)} N`));
    const c = bar.appendChild(document.createElement('canvas'));
    c.width = 1; c.height = 100;
    const g = c.getContext('2d');
    for (let y = 0; y < 100; y++) { g.fillStyle = '#' + forceColour(side.fMax * (1 - y / 99), side.fMax).getHexString(); g.fillRect(0, y, 1, 1); }
    bar.appendChild(document.createTextNode('0 N'));
  }
  // each half's name (its model, its results) and the time of its frame
  const halfTimes = sides.map((side) => {
    if (!pair) return null;
    const label = document.body.appendChild(Object.assign(document.createElement('div'), { className: `compare-title ${side.s ? 'right' : 'left'}` }));
    label.style.left = side.s ? '50%' : '0';
    label.appendChild(document.createTextNode(side.D.title));
    if (side.D.results) label.appendChild(Object.assign(document.createElement('div'), { className: 'compare-results', textContent: side.D.results }));
    return label.appendChild(Object.assign(document.createElement('div'), { className: 'compare-time' }));
  });
  let pinned = null;
  function showInfo(obj) {
    const side = sides[obj.userData.side], e = side.D.elements[obj.userData.element], k = side.frame;
    let text = `${e.name}  (${e.kind})`;
    if (e.muscle !== null) {
      text += `\nlength ${(side.lengths[k * side.nM + e.muscle] * 1000).toFixed(1)} mm`;
      if (side.forces) {
        const f = side.forces[k * side.nM + e.muscle];
        text += Number.isFinite(f) ? `\nforce ${f.toFixed(1)} N` : '\nforce: none in this frame';
      }
    }
    info.textContent = text;
    info.style.display = 'block';
  }
  const raycaster = new THREE.Raycaster();
  raycaster.params.Line.threshold = size * 0.006;
  // the half under the pointer and the pointer in the camera's coordinates (-1 to 1) in it
  function pointer(ev) {
    const r = renderer.domElement.getBoundingClientRect();
    const width = pair ? r.width / 2 : r.width;
    const s = pair && ev.clientX - r.left >= width ? 1 : 0;
    return { side: sides[s], at: new THREE.Vector2(((ev.clientX - r.left - s * width) / width) * 2 - 1, -((ev.clientY - r.top) / r.height) * 2 + 1) };
  }
  function pick(ev) {
    const { side, at } = pointer(ev);
    raycaster.setFromCamera(at, camera);
    // three's raycaster also hits objects of hidden groups: only what is shown counts
    const shown = (o) => { for (; o; o = o.parent) if (!o.visible) return false; return true; };
    const g = side.groups;
    const hits = raycaster.intersectObjects([g.muscles, g.axes, g.elements, g.contacts], true).filter((h) => shown(h.object));
    return hits.length ? hits[0].object : null;
  }
  function pickBody(ev) {
    const { side, at } = pointer(ev);
    raycaster.setFromCamera(at, camera);
    if (!side.groups.bones.visible) return null;
    const hits = raycaster.intersectObjects(side.groups.bones.children, false).filter((h) => h.object.visible);
    return hits.length ? { side, body: hits[0].object.userData.body } : null;
  }
  renderer.domElement.addEventListener('pointermove', (ev) => {
    const o = pick(ev);
    if (o) showInfo(o); else if (pinned) showInfo(pinned); else info.style.display = 'none';
  });
  renderer.domElement.addEventListener('click', (ev) => { pinned = pick(ev); if (pinned) showInfo(pinned); else info.style.display = 'none'; });
  // double-click on a bone: orbit about that body (its bones' centre in this frame)
  renderer.domElement.addEventListener('dblclick', (ev) => {
    const hit = pickBody(ev);
    if (hit === null) return;
    const c = hit.side.bodyCentre(hit.body);
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
    camera.aspect = w / (pair ? 2 : 1) / h;
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
    if (box && groupNames.includes(name)) { box.checked = false; showGroup(name, false); }
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
  const drawnMusclePaths = () => sides[0].drawnMusclePaths();
  // a point of a half's model (model coordinates) on the screen: [x, y] from the left and from
  // the bottom of a drawing w wide and h high (its half of it with a pair)
  function onScreen(side, x, y, z, w, h) {
    const v = new THREE.Vector3(x, y, z).applyMatrix4(side.root.matrix).project(camera);
    const half = pair ? w / 2 : w;
    return [side.s * half + (v.x + 1) / 2 * half, (v.y + 1) / 2 * h];
  }
  // each muscle line of a half in this frame: [object, its element, its points (flat, m)]
  function muscleLines(side) {
    const out = [];
    side.lineObjects.forEach((obj, l) => {
      const e = side.D.elements[obj.userData.element];
      if (e.group !== 'muscle') return;
      const i = side.frame * side.nL + l, st = side.lineStart[i] * 3, n = side.D.line_counts[i];
      out.push([obj, e, side.linePoints.subarray(st, st + 3 * n)]);
    });
    return out;
  }
  // For each muscle of the page's model: whether a pixel of its colour is near one of its
  // projected points.
  function colourCheck() {
    // the translucent solids and the bones are drawn over muscles behind them: hidden meanwhile
    const hidden = groupNames.filter((g) => g !== 'muscles' && sides[0].groups[g].visible);
    hidden.forEach((g) => showGroup(g, false));
    render();
    const { w, h, px } = pixels();
    hidden.forEach((g) => showGroup(g, true));
    render();
    const near = [];
    const checked = [];
    for (const [obj, e, p] of muscleLines(sides[0])) {
      const hex = obj.material.color.getHex();
      const want = [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255];
      let found = false;
      for (let k = 0; k + 2 < p.length && !found; k += 3) {
        const [sx, sy] = onScreen(sides[0], p[k], p[k + 1], p[k + 2], w, h).map(Math.round);
        for (let dy = -2; dy <= 2 && !found; dy++) for (let dx = -2; dx <= 2 && !found; dx++) {
          const xx = sx + dx, yy = sy + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const o = (yy * w + xx) * 4;
          found = Math.abs(px[o] - want[0]) + Math.abs(px[o + 1] - want[1]) + Math.abs(px[o + 2] - want[2]) < 40;
        }
      }
      checked.push(e.name);
      if (found) near.push(e.name);
    }
    return { muscles: checked.length, found: near.length, missing: checked.filter((m) => !near.includes(m)) };
  }
  // Each shown muscle's path points on the screen (CSS pixels from the top left) and its colour,
  // and the rectangles of the page's panels, for a check on a screenshot of the same view.
  function projections(s = 0) {
    const r = renderer.domElement.getBoundingClientRect();
    const muscles = [];
    for (const [obj, e, p] of muscleLines(sides[s])) {
      if (!obj.visible) continue;
      const hex = obj.material.color.getHex();
      const points = [];
      for (let k = 0; k + 2 < p.length; k += 3) {
        const [x, y] = onScreen(sides[s], p[k], p[k + 1], p[k + 2], r.width, r.height);
        points.push([r.left + x, r.top + r.height - y]);
      }
      muscles.push({ name: e.name, colour: [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255], points });
    }
    const panels = ['panel', 'controls', 'colorbar', 'colorbar-1', 'info'].map((id) => document.getElementById(id))
      .filter((el) => el && el.offsetParent !== null).map((el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; });
    return { muscles, panels };
  }
  // Each drawn joint axis of the page's model in this frame: its element, type and end points (m).
  function jointAxes() {
    const out = [];
    const side = sides[0];
    side.lineObjects.forEach((obj, l) => {
      const e = side.D.elements[obj.userData.element];
      const i = side.frame * side.nL + l, st = side.lineStart[i] * 3, n = side.D.line_counts[i];
      if (e.group !== 'axes' || !obj.visible || n < 2) return;
      out.push({ name: e.name, kind: e.kind, points: Array.from(side.linePoints.subarray(st, st + 3 * n)) });
    });
    return out;
  }
  // The named points of every frame (of both models of a pair) that project outside the view.
  function outOfView() {
    const v = new THREE.Vector3();
    let outside = 0, all = 0;
    for (const side of sides) for (let i = 0; i < side.nF * side.nP; i++) {
      v.set(side.positions[3 * i], side.positions[3 * i + 1], side.positions[3 * i + 2]);
      if (!Number.isFinite(v.x)) continue;
      all++;
      v.applyMatrix4(side.root.matrix).project(camera);
      if (Math.abs(v.x) > 1 || Math.abs(v.y) > 1) outside++;
    }
    return { points: all, outside };
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
  // The two halves' pixels: per half a hash, its colours and the pixels not background, and
  // how many pixels differ between the halves.
  function halves() {
    const { w, h, px } = pixels(), half = Math.floor(w / 2);
    const out = [0, 1].map((s) => {
      let hash = 2166136261, drawn = 0;
      const colours = new Set();
      for (let y = 0; y < h; y++) for (let x = 0; x < half; x++) {
        const o = (y * w + s * half + x) * 4, c = px[o] | (px[o + 1] << 8) | (px[o + 2] << 16);
        hash = Math.imul(hash ^ c, 16777619) >>> 0;
        colours.add(c);
        if (c !== 0xf2f4f4) drawn++;
      }
      return { hash, colours: colours.size, drawn };
    });
    let differ = 0;
    for (let y = 0; y < h; y++) for (let x = 0; x < half; x++) {
      const o = (y * w + x) * 4, p = o + half * 4;
      if (px[o] !== px[p] || px[o + 1] !== px[p + 1] || px[o + 2] !== px[p + 2]) differ++;
    }
    return { left: out[0], right: out[1], differ };
  }
  // Where the camera looks from and how much of the view the models fill: the largest |x| and
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
    return { view: current, from: dir.toArray(), screen_up: up.toArray(), fill: [x, y], forward: forward.toArray(), up: worldUp.toArray(), position: camera.position.toArray(), target: controls.target.toArray() };
  }
  const bonesReport = () => sides[0].bonesReport();
  // each half: its model, frames, the frame shown, its muscles drawn and its bones
  function pairReport() {
    return sides.map((side) => ({
      title: side.D.title, results: side.D.results || null, frames: side.nF, frame: side.frame, muscles: side.nM,
      drawn_muscle_paths: side.drawnMusclePaths(), bones: side.bonesReport(), time: side.D.times[side.frame],
    }));
  }
  // export=K,L,... (or all): each step's canvas as a PNG data URL, one line `K data:...` each
  const exportFrames = params.get('export');
  if (exportFrames) {
    const list = exportFrames === 'all' ? [...Array(nSteps).keys()] : exportFrames.split(',').map(Number).filter((k) => Number.isInteger(k) && k >= 0 && k < nSteps);
    const out = list.map((k) => { setFrame(k); return `${k} ${renderer.domElement.toDataURL('image/png')}`; });
    document.body.appendChild(Object.assign(document.createElement('pre'), { id: 'mollier-export', textContent: out.join('\n') }));
  }
  // video=FPS: every step encoded as VP8 (the browser's WebCodecs) with the timestamps of FPS
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
    for (let k = 0; k < nSteps && !failure; k++) {
      setFrame(k);
      const f = new VideoFrame(canvas, { timestamp: Math.round((k * 1e6) / fps), duration: Math.round(1e6 / fps) });
      encoder.encode(f, { keyFrame: k % keyEvery === 0 });
      f.close();
      while (encoder.encodeQueueSize > 4) await new Promise((r) => setTimeout(r, 5));
    }
    if (!failure) await encoder.flush();
    encoder.close();
    return JSON.stringify({ width: w, height: h, fps, frames: nSteps, chunks, error: failure });
  }
  const videoFps = Number(params.get('video'));
  if (videoFps > 0) window.mollierVideo = recordVideo(videoFps).catch((e) => JSON.stringify({ error: String(e) }));
  // a body's bones' centre in this frame (m, where the page draws it) and where it is on the
  // screen (CSS pixels from the top left), and the orbit's target (m): for a test of the
  // double-click (s: the half)
  function bodyOnScreen(name, s = 0) {
    const side = sides[s], b = side.D.bodies.findIndex((x) => x.name === name);
    if (b < 0) return null;
    const c = side.bodyCentre(b), v = c.clone().project(camera), r = renderer.domElement.getBoundingClientRect();
    const half = pair ? r.width / 2 : r.width;
    return { centre: c.toArray(), screen: [r.left + s * half + (v.x + 1) / 2 * half, r.top + (1 - v.y) / 2 * r.height] };
  }
  const target = () => controls.target.toArray();
  window.mollierView = {
    D, setFrame, render, drawnMusclePaths, colourCheck, projections, jointAxes, fingerprint, halves, bodyOnScreen, target,
    pairReport, cameraReport, errors, loadMs, pageMs, get frame() { return frame; },
  };
  if (params.get('test')) {
    const side = sides[0], first0 = frame;
    const report = { phases_ms: T, load_ms: loadMs, page_ms: pageMs, frames: nSteps, frame, muscles: side.nM, drawn_muscle_paths: drawnMusclePaths(), points: D.points };
    report.positions = Array.from(side.positions.subarray(side.frame * side.nP * 3, (side.frame + 1) * side.nP * 3));
    report.colours = colourCheck();
    report.projections = projections();
    report.joint_axes = jointAxes();
    report.in_view = outOfView();
    report.camera = cameraReport();
    // the two halves' pixels, to see the same camera (same results: equal halves; one
    // camera: a pixel or two where overlapping translucent solids tie in depth)
    if (pair) report.compare = Object.assign(halves(), { title: D.compare.title, sides: pairReport(), steps: nSteps });
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
    const other = (first0 + Math.max(1, Math.floor(nSteps / 2))) % nSteps;
    setFrame(other);
    const second = fingerprint();
    setFrame(first0);
    report.picture = { frame: first, other_frame: other, other: second, changed: nSteps > 1 && first.hash !== second.hash };
    report.canvas = { width: renderer.domElement.width, height: renderer.domElement.height };
    report.errors = errors;
    const out = document.body.appendChild(Object.assign(document.createElement('pre'), { id: 'mollier-test' }));
    out.textContent = JSON.stringify(report);
  }
})();
