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

/**
 * Makes a horizontally scrolling wrapper (a table's) say so: a hint above it, shown while its content is wider
 * than it, updated when either changes size or the content is replaced. Returns the wrapper.
 */
export function scrollable(wrap) {
  if (wrap.dataset.scrollable) return wrap;
  wrap.dataset.scrollable = 'true';
  wrap.classList.add('scroll-x');
  const hint = h('p', { class: 'scroll-hint', hidden: true, text: 'Wider than the screen: scroll sideways →' });
  wrap.before(hint);
  const resize = new ResizeObserver(() => update());
  const update = () => {
    if (!hint.isConnected && wrap.isConnected) wrap.before(hint);
    const wide = wrap.scrollWidth > wrap.clientWidth + 1;
    hint.hidden = !wide;
    wrap.classList.toggle('scroll-x-wide', wide);
    for (const child of wrap.children) resize.observe(child);
  };
  resize.observe(wrap);
  new MutationObserver(update).observe(wrap, { childList: true, subtree: true });
  queueMicrotask(update);
  return wrap;
}
