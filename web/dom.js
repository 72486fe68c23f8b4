// Building the page: elements from data (text is always text, never parsed as HTML), and the
// formats every view shares.

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function h(tag, attrs, ...children) { return build(document.createElement(tag), attrs, children); }
export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

// A table: `columns` are [heading, value(row), {num: true}?].
export function table(caption, columns, rows, rowAttrs = () => ({})) {
  return h('table', {},
    caption ? h('caption', { class: 'muted' }, caption) : null,
    h('thead', {}, h('tr', {}, columns.map(([name, , opt]) =>
      h('th', { scope: 'col', class: opt && opt.num ? 'num' : null }, name)))),
    h('tbody', {}, rows.map((row) => h('tr', rowAttrs(row), columns.map(([, value, opt]) =>
      h('td', { class: opt && opt.num ? 'num' : null }, value(row)))))));
}

export function stateText(state) {
  const base = String(state || '').split(' ')[0];
  return h('span', { class: 'state state-' + base }, state || '');
}

export function errorLine(message) { return h('p', { class: 'error', role: 'alert' }, message); }

// Milliseconds since the epoch (a string in the API's JSON) as local date and time.
export function formatTime(ms) {
  const n = Number(ms);
  if (!n) return '';
  return new Date(n).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function formatDuration(ms) {
  let s = Math.max(0, Math.round(Number(ms) / 1000));
  const parts = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60]]) {
    if (s >= size) { parts.push(Math.floor(s / size) + unit); s %= size; }
  }
  if (s || !parts.length) parts.push(s + 's');
  return parts.join(' ');
}

export function formatCount(n) { return Number(n || 0).toLocaleString(); }

// Replaces what `main` shows and moves focus there (so a screen reader reads the new view).
export function show(main, ...children) {
  main.replaceChildren(...children);
  main.focus({ preventScroll: true });
}
