// The page's one DOM helper: h('div', { class, text, onclick, ...attributes }, ...children).
export const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
};

// One observer for every scrollable(): a wrapper or its table changing size re-checks that wrapper; a wrapper
// taken out of the page (the explorer re-renders its tables) is forgotten.
const resized = new ResizeObserver((entries) => {
  for (const e of entries) {
    const wrap = e.target.closest('[data-scrollable]');
    if (wrap) updateScrollHint(wrap);
  }
});

function updateScrollHint(wrap) {
  const hint = wrap.previousElementSibling?.classList.contains('scroll-hint') ? wrap.previousElementSibling : null;
  if (!wrap.isConnected) {
    resized.unobserve(wrap);
    for (const child of wrap.children) resized.unobserve(child);
    return;
  }
  const wide = wrap.scrollWidth > wrap.clientWidth + 1;
  if (!hint && wrap.parentNode) wrap.before(h('p', { class: 'scroll-hint', hidden: !wide, text: 'Wider than the screen: scroll sideways →' }));
  else if (hint) hint.hidden = !wide;
  wrap.classList.toggle('scroll-x-wide', wide);
  for (const child of wrap.children) resized.observe(child);
}

/**
 * Makes a horizontally scrolling wrapper (a table's) say so: a hint above it, shown while its content is wider
 * than it, checked again when either changes size or the content is replaced. Returns the wrapper.
 */
export function scrollable(wrap) {
  if (wrap.dataset.scrollable) return wrap;
  wrap.dataset.scrollable = 'true';
  resized.observe(wrap);
  new MutationObserver(() => updateScrollHint(wrap)).observe(wrap, { childList: true });
  queueMicrotask(() => updateScrollHint(wrap));
  return wrap;
}
