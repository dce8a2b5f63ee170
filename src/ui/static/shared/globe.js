/**
 * An orthographic globe on a <canvas>: a graticule (no coastlines: no map data is shipped or
 * fetched), plus layers of polygons, polylines and points given in degrees. Drag to rotate,
 * wheel or buttons to zoom. Pure canvas 2-D, no libraries.
 */
const RAD = Math.PI / 180;
const GRID_STEP = 15; // degrees between graticule lines
const SAMPLE = 3; // degrees between samples along a graticule line

/** Orthographic projection onto the unit disc centred on view.lat/view.lon (Snyder, eq. 20-3/4). */
export function project(view, lat, lon) {
  const phi = lat * RAD;
  const phi0 = view.lat * RAD;
  const dl = (lon - view.lon) * RAD;
  const cosc = Math.sin(phi0) * Math.sin(phi) + Math.cos(phi0) * Math.cos(phi) * Math.cos(dl);
  return {
    x: Math.cos(phi) * Math.sin(dl),
    y: Math.cos(phi0) * Math.sin(phi) - Math.sin(phi0) * Math.cos(phi) * Math.cos(dl),
    visible: cosc >= 0,
  };
}

export function createGlobe(canvas) {
  const view = { lat: 30, lon: -40, zoom: 1 };
  let layers = { polygons: [], lines: [], points: [] };
  let size = { w: 0, h: 0, dpr: 1 };
  let queued = false;
  const g = canvas.getContext('2d');

  const radius = () => (Math.min(size.w, size.h) / 2.1) * view.zoom;
  const toScreen = (lat, lon) => {
    const p = project(view, lat, lon);
    const r = radius();
    return { x: size.w / 2 + p.x * r, y: size.h / 2 - p.y * r, visible: p.visible };
  };

  /** Strokes a sampled curve, lifting the pen where it passes behind the globe. */
  function strokeCurve(coords) {
    g.beginPath();
    let down = false;
    for (const [lat, lon] of coords) {
      const s = toScreen(lat, lon);
      if (!s.visible) down = false;
      else if (down) g.lineTo(s.x, s.y);
      else {
        g.moveTo(s.x, s.y);
        down = true;
      }
    }
    g.stroke();
  }

  function drawGraticule() {
    g.strokeStyle = 'rgba(140, 170, 200, 0.25)';
    g.lineWidth = 1;
    for (let lon = -180; lon < 180; lon += GRID_STEP) {
      const line = [];
      for (let lat = -90; lat <= 90; lat += SAMPLE) line.push([lat, lon]);
      strokeCurve(line);
    }
    for (let lat = -90 + GRID_STEP; lat < 90; lat += GRID_STEP) {
      const line = [];
      for (let lon = -180; lon <= 180; lon += SAMPLE) line.push([lat, lon]);
      strokeCurve(line);
    }
  }

  function draw() {
    queued = false;
    const { w, h, dpr } = size;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    g.beginPath();
    g.arc(w / 2, h / 2, radius(), 0, 2 * Math.PI);
    g.fillStyle = '#0b1d2e';
    g.fill();
    g.strokeStyle = 'rgba(140, 170, 200, 0.6)';
    g.stroke();
    drawGraticule();
    for (const poly of layers.polygons) {
      const pts = poly.ring.map(([lat, lon]) => toScreen(lat, lon));
      if (!pts.every((p) => p.visible)) continue;
      g.beginPath();
      pts.forEach((p, i) => (i ? g.lineTo(p.x, p.y) : g.moveTo(p.x, p.y)));
      g.closePath();
      g.fillStyle = poly.fill;
      g.fill();
      g.strokeStyle = poly.stroke;
      g.stroke();
    }
    for (const line of layers.lines) {
      g.strokeStyle = line.color;
      g.lineWidth = 1.5;
      strokeCurve(line.coords);
    }
    g.lineWidth = 1;
    for (const pt of layers.points) {
      const s = toScreen(pt.lat, pt.lon);
      if (!s.visible) continue;
      g.fillStyle = pt.color;
      g.beginPath();
      if (pt.shape === 'diamond') {
        g.moveTo(s.x, s.y - 5);
        g.lineTo(s.x + 4, s.y);
        g.lineTo(s.x, s.y + 5);
        g.lineTo(s.x - 4, s.y);
      } else g.arc(s.x, s.y, pt.r ?? 4, 0, 2 * Math.PI);
      g.fill();
      if (pt.tag && view.zoom >= (pt.tagMinZoom ?? 0)) {
        g.font = '11px system-ui, sans-serif';
        g.fillText(pt.tag, s.x + 7, s.y - 6);
      }
    }
  }

  const redraw = () => {
    if (!queued) {
      queued = true;
      requestAnimationFrame(draw);
    }
  };

  function resize() {
    const rect = canvas.getBoundingClientRect();
    size = { w: rect.width, h: rect.height, dpr: window.devicePixelRatio || 1 };
    canvas.width = Math.round(rect.width * size.dpr);
    canvas.height = Math.round(rect.height * size.dpr);
    redraw();
  }

  /** The nearest visible point within 8 px of a canvas position, for the hover title. */
  function pick(x, y) {
    let best = null;
    let bestD = 64;
    for (const pt of layers.points) {
      const s = toScreen(pt.lat, pt.lon);
      const d = (s.x - x) ** 2 + (s.y - y) ** 2;
      if (s.visible && d < bestD) [best, bestD] = [pt, d];
    }
    return best;
  }

  let drag = null;
  canvas.addEventListener('pointerdown', (e) => {
    drag = { x: e.clientX, y: e.clientY };
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointerup', () => (drag = null));
  canvas.addEventListener('pointercancel', () => (drag = null));
  canvas.addEventListener('pointermove', (e) => {
    if (!drag) {
      const rect = canvas.getBoundingClientRect();
      canvas.title = pick(e.clientX - rect.left, e.clientY - rect.top)?.label ?? '';
      return;
    }
    // one screen pixel = 1/radius radians of arc at the centre of the disc
    const perPx = 1 / radius() / RAD;
    view.lon = ((view.lon - (e.clientX - drag.x) * perPx + 540) % 360) - 180;
    view.lat = Math.max(-89, Math.min(89, view.lat + (e.clientY - drag.y) * perPx));
    drag = { x: e.clientX, y: e.clientY };
    redraw();
  });
  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      zoomBy(Math.exp(-e.deltaY * 0.002));
    },
    { passive: false },
  );

  function zoomBy(factor) {
    view.zoom = Math.max(0.8, Math.min(50000, view.zoom * factor));
    redraw();
  }

  new ResizeObserver(resize).observe(canvas);
  resize();

  return {
    view,
    zoomBy,
    setLayers(next) {
      layers = { polygons: [], lines: [], points: [], ...next };
      redraw();
    },
    focus(lat, lon, zoom) {
      Object.assign(view, { lat, lon, zoom });
      redraw();
    },
  };
}
