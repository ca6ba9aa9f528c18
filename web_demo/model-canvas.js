// A drawing pad (pointer events: mouse, pen and touch) whose strokes become an 8x8 digit the way
// scikit-learn's digits were made (UCI optdigits): the drawing is fitted into a 32x32 bitmap, and each
// 4x4 block counts its set pixels, 0..16. The model was trained on count / 16, in [0, 1].

const BITMAP = 32;
const BLOCK = 4;
const LINE = 6; // stroke width in bitmap pixels

/** Draws the 8x8 image (values in [0, 1]) into a canvas, dark ink on white, as the dataset is usually shown. */
export function paintDigit(canvas, image, size = 8) {
  const ctx = canvas.getContext('2d');
  const cell = canvas.width / size;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  for (let i = 0; i < size * size; i++) {
    const v = Math.max(0, Math.min(1, image[i]));
    const shade = Math.round(255 * (1 - v));
    ctx.fillStyle = `rgb(${shade},${shade},${shade})`;
    ctx.fillRect((i % size) * cell, Math.floor(i / size) * cell, Math.ceil(cell), Math.ceil(cell));
  }
}

/** The strokes (lists of points in pad pixels) as the 8x8 digit: Float32Array of count / 16. */
export function strokesToDigit(strokes, padSize) {
  const points = strokes.flat();
  const image = new Float32Array(64);
  if (points.length === 0) return image;
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const p of points) {
    x0 = Math.min(x0, p.x); y0 = Math.min(y0, p.y); x1 = Math.max(x1, p.x); y1 = Math.max(y1, p.y);
  }
  // NIST's preprocessing (optdigits): size-normalised into the 32x32 box, centred, aspect ratio kept. The
  // dataset's strokes are about 1.5 to 2 cells (6 to 8 bitmap pixels) wide, whatever the pen was.
  const scale = (BITMAP - LINE) / Math.max(x1 - x0, y1 - y0, padSize / 4);
  const ox = (BITMAP - (x1 - x0) * scale) / 2 - x0 * scale;
  const oy = (BITMAP - (y1 - y0) * scale) / 2 - y0 * scale;
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = BITMAP;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  ctx.strokeStyle = '#000';
  ctx.lineWidth = LINE;
  for (const stroke of strokes) {
    ctx.beginPath();
    stroke.forEach((p, i) => (i ? ctx.lineTo(p.x * scale + ox, p.y * scale + oy) : ctx.moveTo(p.x * scale + ox, p.y * scale + oy)));
    if (stroke.length === 1) ctx.lineTo(stroke[0].x * scale + ox + 0.01, stroke[0].y * scale + oy);
    ctx.stroke();
  }
  const alpha = ctx.getImageData(0, 0, BITMAP, BITMAP).data;
  for (let y = 0; y < BITMAP; y++) {
    for (let x = 0; x < BITMAP; x++) {
      if (alpha[(y * BITMAP + x) * 4 + 3] >= 128) image[Math.floor(y / BLOCK) * 8 + Math.floor(x / BLOCK)] += 1 / 16;
    }
  }
  return image;
}

/**
 * A drawing pad in `canvas`. onChange(image) fires (throttled to animation frames) while drawing and
 * when a stroke ends. Returns { clear(), isEmpty(), image(), destroy() }.
 */
export function createPad(canvas, onChange) {
  const ctx = canvas.getContext('2d');
  const size = canvas.width;
  let strokes = [];
  let current = null;
  let pending = 0;
  const redraw = () => {
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, size, size);
    ctx.strokeStyle = '#1d2330';
    ctx.lineWidth = size / 10;
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    for (const s of strokes) {
      ctx.beginPath();
      s.forEach((p, i) => (i ? ctx.lineTo(p.x, p.y) : ctx.moveTo(p.x, p.y)));
      if (s.length === 1) ctx.lineTo(s[0].x + 0.01, s[0].y);
      ctx.stroke();
    }
  };
  const notify = () => {
    if (pending) return;
    pending = requestAnimationFrame(() => {
      pending = 0;
      onChange(strokesToDigit(strokes, size));
    });
  };
  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    return { x: ((e.clientX - r.left) * size) / r.width, y: ((e.clientY - r.top) * size) / r.height };
  };
  const down = (e) => {
    if (e.button !== undefined && e.button !== 0) return;
    e.preventDefault();
    canvas.setPointerCapture?.(e.pointerId);
    current = [at(e)];
    strokes.push(current);
    redraw();
    notify();
  };
  const move = (e) => {
    if (!current) return;
    e.preventDefault();
    current.push(at(e));
    redraw();
    notify();
  };
  const up = () => {
    if (!current) return;
    current = null;
    notify();
  };
  canvas.addEventListener('pointerdown', down);
  canvas.addEventListener('pointermove', move);
  canvas.addEventListener('pointerup', up);
  canvas.addEventListener('pointercancel', up);
  canvas.style.touchAction = 'none'; // no scrolling or zooming while drawing on a touch screen
  redraw();
  return {
    clear() {
      strokes = [];
      current = null;
      redraw();
    },
    isEmpty: () => strokes.length === 0,
    image: () => strokesToDigit(strokes, size),
    destroy() {
      cancelAnimationFrame(pending);
      canvas.removeEventListener('pointerdown', down);
      canvas.removeEventListener('pointermove', move);
      canvas.removeEventListener('pointerup', up);
      canvas.removeEventListener('pointercancel', up);
    },
  };
}
