// view_page.js - the player of `physid view` pages (tools/view.c embeds this file at build time): draws a model's
// geoms with three.js (Debian's libjs-three, inlined in the page) and plays recorded or predicted trajectories.
// Data: the global PHYSID_VIEW written by view.c (its header comment gives the layout). Z is up, as in MuJoCo.
// With "#selftest" in the address the page renders t = 0 and a later time, counts pixels that differ from the
// background and between the two pictures, and writes the figures and any script errors into
// a pre element with id physid-selftest (tests/tools/test_view.c reads it through headless Chromium).
(function () {
  'use strict';
  const D = window.PHYSID_VIEW;
  const errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message)); });
  const consoleError = console.error;
  console.error = function () {
    errors.push(Array.prototype.join.call(arguments, ' '));
    consoleError.apply(console, arguments);
  };

  const BACKGROUND = [235, 238, 242];   // sRGB of the clear colour (the self-test counts pixels that differ)
  const GHOST = [0xe8710a, 0x1f77b4, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2];
  // groups: the scenes the page can show, one at a time (D.groups); rank[k]: trajectory k's place in its group (the
  // first in the model's colours, the others ghosts)
  const groups = D.groups && D.groups.length ? D.groups : [''];
  const rank = [], seen = {};
  D.traj.forEach(function (tr, k) {
    tr.group = tr.group || 0;
    rank[k] = seen[tr.group] = tr.group in seen ? seen[tr.group] + 1 : 0;
  });
  let active = 0;
  const pick = /[#&]g=([0-9]+)/.exec(location.hash);   // "#g=N": start with scene N (the self-test of scene N)
  if (pick && parseInt(pick[1], 10) < groups.length) active = parseInt(pick[1], 10);

  // ---------------------------------------------------------------------------------------------- scene
  const view = document.getElementById('view');
  const renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setClearColor(new THREE.Color(BACKGROUND[0] / 255, BACKGROUND[1] / 255, BACKGROUND[2] / 255), 1);
  view.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(45, 1, D.radius / 100, 40 * D.extent);
  camera.up.set(0, 0, 1);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x808080, 0.75));
  const sun = new THREE.DirectionalLight(0xffffff, 0.55);
  sun.position.set(0.4, -0.6, 1.0);
  scene.add(sun);

  // a capsule or cylinder along the geom's z axis: three's cylinders run along y
  function alongZ(geometry) { geometry.rotateX(Math.PI / 2); return geometry; }

  // the three.js object of geom g (sizes as MJCF's geom size; a mesh's vertices are in the geom frame)
  function geomObject(g, material) {
    const s = g.size;
    switch (g.type) {
      case 'plane': {   // a checker of two shades of the geom's colour, cells a power of ten near the scene's size
        const hx = s[0] > 0 ? s[0] : D.extent, hy = s[1] > 0 ? s[1] : D.extent;
        const cell = Math.pow(10, Math.floor(Math.log10(D.radius)));
        const canvas = document.createElement('canvas');
        canvas.width = canvas.height = 2;
        const ctx = canvas.getContext('2d'), c = new THREE.Color(g.rgba[0], g.rgba[1], g.rgba[2]);
        ctx.fillStyle = '#' + c.getHexString();
        ctx.fillRect(0, 0, 2, 2);
        ctx.fillStyle = '#' + c.clone().multiplyScalar(0.8).getHexString();
        ctx.fillRect(0, 0, 1, 1);
        ctx.fillRect(1, 1, 1, 1);
        const texture = new THREE.CanvasTexture(canvas);
        texture.magFilter = THREE.NearestFilter;
        texture.wrapS = texture.wrapT = THREE.RepeatWrapping;
        texture.repeat.set(hx / cell, hy / cell);
        material.map = texture;
        material.color.setRGB(1, 1, 1);
        return new THREE.Mesh(new THREE.PlaneGeometry(2 * hx, 2 * hy), material);
      }
      case 'sphere': return new THREE.Mesh(new THREE.SphereGeometry(s[0], 32, 16), material);
      case 'ellipsoid': {
        const m = new THREE.Mesh(new THREE.SphereGeometry(1, 32, 16), material);
        m.scale.set(s[0], s[1], s[2]);
        return m;
      }
      case 'cylinder': return new THREE.Mesh(alongZ(new THREE.CylinderGeometry(s[0], s[0], 2 * s[1], 32)), material);
      case 'capsule': {
        const group = new THREE.Group();
        group.add(new THREE.Mesh(alongZ(new THREE.CylinderGeometry(s[0], s[0], 2 * s[1], 32, 1, true)), material));
        for (const z of [-s[1], s[1]]) {
          const cap = new THREE.Mesh(new THREE.SphereGeometry(s[0], 32, 16), material);
          cap.position.z = z;
          group.add(cap);
        }
        return group;
      }
      case 'box': return new THREE.Mesh(new THREE.BoxGeometry(2 * s[0], 2 * s[1], 2 * s[2]), material);
      case 'mesh': {
        const mesh = D.meshes[g.mesh];
        const geometry = new THREE.BufferGeometry();   // flat shading: every triangle its own vertices
        const pos = new Float32Array(mesh.face.length * 3);
        for (let i = 0; i < mesh.face.length; i++) {
          for (let k = 0; k < 3; k++) pos[3 * i + k] = mesh.vert[3 * mesh.face[i] + k];
        }
        geometry.setAttribute('position', new THREE.BufferAttribute(pos, 3));
        geometry.computeVertexNormals();
        return new THREE.Mesh(geometry, material);
      }
    }
    return new THREE.Group();
  }

  // the material of geom g in trajectory k: the model's colours for the first of its group, a tinted ghost for the
  // others
  function material(g, k) {
    if (rank[k] === 0 || g.body === 0) {
      return new THREE.MeshPhongMaterial({color: new THREE.Color(g.rgba[0], g.rgba[1], g.rgba[2]),
        transparent: g.rgba[3] < 1, opacity: g.rgba[3], side: g.type === 'plane' ? THREE.DoubleSide : THREE.FrontSide});
    }
    return new THREE.MeshPhongMaterial({color: GHOST[(rank[k] - 1) % GHOST.length], transparent: true, opacity: 0.4,
      depthWrite: false});
  }

  // one group per moving body per trajectory, holding that body's geoms in the body frame
  function place(object, g) {
    object.position.set(g.pos[0], g.pos[1], g.pos[2]);
    object.quaternion.set(g.quat[1], g.quat[2], g.quat[3], g.quat[0]);
  }
  for (const g of D.geoms) {   // the world's geoms once
    if (g.body !== 0) continue;
    const o = geomObject(g, material(g, 0));
    place(o, g);
    scene.add(o);
  }
  const bodies = D.traj.map(function (tr, k) {
    return D.bodies.map(function (b) {
      const group = new THREE.Group();
      for (const g of D.geoms) {
        if (g.body !== b) continue;
        const o = geomObject(g, material(g, k));
        place(o, g);
        group.add(o);
      }
      scene.add(group);
      return group;
    });
  });

  // contact points and force arrows (--contacts): a pool reused every frame
  const pool = [];
  const pointGeometry = new THREE.SphereGeometry(1, 12, 8);
  const pointMaterial = new THREE.MeshBasicMaterial({color: 0xd62728});
  function contactMarker(i) {
    while (pool.length <= i) {
      const dot = new THREE.Mesh(pointGeometry, pointMaterial);
      dot.scale.setScalar(D.radius / 80);
      const arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, 0xd62728);
      scene.add(dot);
      scene.add(arrow);
      pool.push({dot: dot, arrow: arrow});
    }
    return pool[i];
  }

  // ---------------------------------------------------------------------------------------------- time
  // frame index j and weight w with time[j] <= t <= time[j + 1] (clamped at the ends)
  function bracket(time, t) {
    let lo = 0, hi = time.length - 1;
    if (t <= time[0]) return [0, 0];
    if (t >= time[hi]) return [hi, 0];
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (time[mid] <= t) lo = mid; else hi = mid;
    }
    return [lo, (t - time[lo]) / (time[lo + 1] - time[lo])];
  }
  const qa = new THREE.Quaternion(), qb = new THREE.Quaternion();
  // body i of trajectory tr at frame j + w: positions linear, orientations by slerp
  function pose(tr, j, w, i, group) {
    const n = D.bodies.length, a = 7 * (j * n + i), p = tr.pose;
    const b = w > 0 ? 7 * ((j + 1) * n + i) : a;
    group.position.set(p[a] + w * (p[b] - p[a]), p[a + 1] + w * (p[b + 1] - p[a + 1]), p[a + 2] + w * (p[b + 2] - p[a + 2]));
    qa.set(p[a + 4], p[a + 5], p[a + 6], p[a + 3]);
    qb.set(p[b + 4], p[b + 5], p[b + 6], p[b + 3]);
    THREE.Quaternion.slerp(qa, qb, group.quaternion, w);
  }

  // the active group's time span: t0 its first sample, duration to its last
  let duration = 0, t0 = 0;
  function span() {
    let lo = Infinity, hi = -Infinity;
    D.traj.forEach(function (tr) {
      if (tr.group !== active) return;
      lo = Math.min(lo, tr.time[0]);
      hi = Math.max(hi, tr.time[tr.time.length - 1]);
    });
    t0 = lo < Infinity ? lo : 0;
    duration = hi > lo ? hi - lo : 0;
  }
  span();
  let now = 0, playing = true, speed = 1, follow = false, showContacts = D.contacts;
  const target = new THREE.Vector3();

  // everything at time now (s from the start)
  function setTime(t) {
    now = Math.min(Math.max(t, 0), duration);
    let ncontact = 0;
    let lead = -1;   // the first trajectory of the active group (follow)
    D.traj.forEach(function (tr, k) {
      const shown = tr.group === active;
      for (let i = 0; i < D.bodies.length; i++) bodies[k][i].visible = shown;
      if (!shown) return;
      if (lead < 0) lead = k;
      const jw = bracket(tr.time, now + t0);
      for (let i = 0; i < D.bodies.length; i++) pose(tr, jw[0], jw[1], i, bodies[k][i]);
      if (!showContacts || !tr.contacts) return;
      const c = tr.contacts[jw[0] + (jw[1] > 0.5 ? 1 : 0)];
      for (let i = 0; i < c.length; i += 6) {
        const m = contactMarker(ncontact++), f = new THREE.Vector3(c[i + 3], c[i + 4], c[i + 5]);
        const len = Math.min(f.length() * D.forcescale, D.radius);   // an impact's arrow clamped at the radius
        m.dot.position.set(c[i], c[i + 1], c[i + 2]);
        m.arrow.position.set(c[i], c[i + 1], c[i + 2]);
        m.dot.visible = true;
        m.arrow.visible = len > 1e-6;
        if (len > 1e-6) {
          m.arrow.setDirection(f.normalize());
          m.arrow.setLength(len, 0.25 * len, 0.12 * len);
        }
      }
    });
    for (let i = ncontact; i < pool.length; i++) pool[i].dot.visible = pool[i].arrow.visible = false;
    if (follow && lead >= 0 && bodies[lead].length) {
      const p = bodies[lead][0].position, d = new THREE.Vector3().subVectors(p, controls.target);
      controls.target.copy(p);
      camera.position.add(d);
    }
    timeline.value = String(Math.round(1000 * (duration > 0 ? now / duration : 0)));
    clock.textContent = now.toFixed(3) + ' / ' + duration.toFixed(3) + ' s';
  }

  // ---------------------------------------------------------------------------------------------- camera
  camera.position.set(D.center[0] + 1.6 * D.radius, D.center[1] - 2.0 * D.radius, D.center[2] + 1.2 * D.radius);
  const controls = new THREE.OrbitControls(camera, renderer.domElement);
  controls.target.set(D.center[0], D.center[1], D.center[2]);
  controls.update();
  target.copy(controls.target);

  // ---------------------------------------------------------------------------------------------- controls
  const timeline = document.getElementById('timeline');
  const clock = document.getElementById('clock');
  const playButton = document.getElementById('play');
  playButton.onclick = function () { playing = !playing; playButton.textContent = playing ? 'pause' : 'play'; };
  document.getElementById('speed').onchange = function (e) { speed = parseFloat(e.target.value); };
  timeline.oninput = function () { playing = false; playButton.textContent = 'play'; setTime(duration * timeline.value / 1000); };
  document.getElementById('follow').onchange = function (e) { follow = e.target.checked; };
  const contactBox = document.getElementById('contacts');
  if (D.contacts) contactBox.onchange = function (e) { showContacts = e.target.checked; setTime(now); };
  else contactBox.parentNode.style.display = 'none';
  const legend = document.getElementById('legend');
  // the legend of the active group's trajectories
  function fillLegend() {
    while (legend.firstChild) legend.removeChild(legend.firstChild);
    D.traj.forEach(function (tr, k) {
      if (tr.group !== active) return;
      const row = document.createElement('div'), swatch = document.createElement('span'), r = rank[k];
      swatch.className = 'swatch';
      swatch.style.background = r === 0 ? '#888' : '#' + GHOST[(r - 1) % GHOST.length].toString(16).padStart(6, '0');
      if (r === 0) swatch.style.border = '2px solid #333';
      row.appendChild(swatch);
      row.appendChild(document.createTextNode(tr.label));
      legend.appendChild(row);
    });
  }
  fillLegend();
  const groupSelect = document.getElementById('group');
  if (groupSelect && groups.length > 1) {
    groups.forEach(function (label, i) {
      const option = document.createElement('option');
      option.value = String(i);
      option.textContent = label || String(i + 1);
      groupSelect.appendChild(option);
    });
    groupSelect.value = String(active);
    groupSelect.onchange = function (e) {
      active = parseInt(e.target.value, 10);
      span();
      fillLegend();
      setTime(0);
    };
  } else if (groupSelect) {
    groupSelect.parentNode.style.display = 'none';
  }

  function resize() {
    const w = view.clientWidth || 800, h = view.clientHeight || 600;
    renderer.setSize(w, h);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
  }
  window.addEventListener('resize', resize);
  resize();

  // ---------------------------------------------------------------------------------------------- self-test
  // pixels of the current picture, RGBA from the bottom row up
  function pixels() {
    renderer.render(scene, camera);
    const gl = renderer.getContext(), w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const p = new Uint8Array(4 * w * h);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, p);
    return p;
  }
  function selftest() {
    setTime(0);
    const a = pixels();
    setTime(duration);
    const b = pixels();
    let drawn = 0, changed = 0;
    for (let i = 0; i < a.length; i += 4) {
      if (Math.abs(a[i] - BACKGROUND[0]) + Math.abs(a[i + 1] - BACKGROUND[1]) + Math.abs(a[i + 2] - BACKGROUND[2]) > 12) drawn++;
      if (Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) > 12) changed++;
    }
    const out = document.createElement('pre');
    out.id = 'physid-selftest';
    out.textContent = 'pixels ' + a.length / 4 + ' drawn ' + drawn + ' changed ' + changed + ' errors ' + errors.length +
      ' groups ' + groups.length + (errors.length ? ' first: ' + errors[0] : '');
    document.body.appendChild(out);
  }

  let last = null;
  function frame(ms) {
    if (last !== null && playing && duration > 0) {
      let t = now + speed * (ms - last) / 1000;
      if (t > duration) t = 0;
      setTime(t);
    }
    last = ms;
    controls.update();
    renderer.render(scene, camera);
    requestAnimationFrame(frame);
  }
  if (location.hash.indexOf('selftest') >= 0) {
    try {
      selftest();
    } catch (e) {   // still report, with nothing drawn
      const out = document.createElement('pre');
      out.id = 'physid-selftest';
      out.textContent = 'pixels 0 drawn 0 changed 0 errors ' + (errors.length + 1) + ' first: ' + String(e);
      document.body.appendChild(out);
    }
  } else {
    // "#t=SECONDS": start paused at that time (scripts/view_screenshot.sh)
    const at = /t=([0-9.]+)/.exec(location.hash);
    if (at) {
      playing = false;
      playButton.textContent = 'play';
    }
    setTime(at ? parseFloat(at[1]) : 0);
    requestAnimationFrame(frame);
  }
})();
