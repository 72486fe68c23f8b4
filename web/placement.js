// A task's placement drawn on its board: every core of the board, the task's own cores (with
// their logical index), dead cores, and the rectangle that holds the task's cores.
import { h, svg } from './dom.js';

const MAX_SIDE = 480;  // pixels: a large board gets smaller cells

export function boardPicture(board, task) {
  const w = board.width, hgt = board.height;
  const cell = Math.max(3, Math.min(28, Math.floor(MAX_SIDE / Math.max(w, hgt))));
  const mine = new Map();
  const cores = (task.mapping && task.mapping.cores) || [];
  cores.forEach((c, i) => mine.set(`${c.x || 0},${c.y || 0}`, i));
  const dead = new Set((board.dead_cores || []).map((c) => `${c.x || 0},${c.y || 0}`));
  const cells = [];
  for (let y = 0; y < hgt; ++y) {
    for (let x = 0; x < w; ++x) {
      const key = `${x},${y}`;
      const cls = mine.has(key) ? 'mine' : dead.has(key) ? 'dead' : 'free';
      cells.push(svg('rect', { class: cls, x: x * cell, y: y * cell, width: cell, height: cell }));
      if (cls === 'mine' && cell >= 16) {
        cells.push(svg('text', { x: x * cell + 3, y: y * cell + cell - 5 }, String(mine.get(key))));
      }
    }
  }
  const rect = bounds(cores);
  if (rect) {
    cells.push(svg('rect', { class: 'outline', x: rect.x * cell, y: rect.y * cell,
                             width: rect.w * cell, height: rect.h * cell }));
  }
  const what = rect
    ? `cores x ${rect.x} to ${rect.x + rect.w - 1}, y ${rect.y} to ${rect.y + rect.h - 1}` +
      ` (${rect.w} x ${rect.h}, ${cores.length} in use)`
    : 'no cores mapped yet';
  const label = `Board ${task.node}/${task.board} (${board.type}, ${w} x ${hgt} cores): ` +
                `this task holds ${what}` + (dead.size ? `; ${dead.size} dead cores` : '');
  return h('figure', {},
    svg('svg', { class: 'board', role: 'img', 'aria-label': label, width: w * cell,
                 height: hgt * cell, viewBox: `0 0 ${w * cell} ${hgt * cell}` }, cells),
    h('figcaption', {}, label + '. Key: filled = this task (logical core index), dark = dead.'));
}

function bounds(cores) {
  if (!cores.length) return null;
  const xs = cores.map((c) => c.x || 0), ys = cores.map((c) => c.y || 0);
  const x = Math.min(...xs), y = Math.min(...ys);
  return { x, y, w: Math.max(...xs) - x + 1, h: Math.max(...ys) - y + 1 };
}
