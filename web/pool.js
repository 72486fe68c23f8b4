// The pool: every node and its boards with their state, health, power, attributes, what they
// carry and their measured speed. Read again when the event stream says a node or board changed,
// and at most once a second while jobs start or end (what the boards carry).
import { api } from './api.js';
import { h, table, stateText, errorLine, formatTime, show } from './dom.js';

export function poolView(main) {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  show(main, h('h1', {}, 'Pool'), body);
  let reading = false;
  let again = false;
  let later = null;  // a read that jobs' events asked for, at most one a second

  async function read() {
    if (reading) { again = true; return; }
    reading = true;
    do {
      again = false;
      try {
        body.replaceChildren(...render(await api('/v1/pool')));
      } catch (e) {
        body.replaceChildren(errorLine(e.message));
      }
    } while (again);
    reading = false;
  }

  read();
  return {
    onEvent(type, event) {
      if (type === 'node' || type === 'reset') {
        read();
      } else if (type === 'job' && !later &&
                 ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'].includes(event.job.state)) {
        // What the boards carry changed: one read for however many jobs started or ended.
        later = setTimeout(() => { later = null; read(); }, 1000);
      }
    },
  };
}

function render(pool) {
  if (!pool.nodes.length) return [h('p', {}, 'No node has joined yet (operator guide: enrol a node).')];
  const unit = pool.unit_board_type
    ? `1 unit = ${pool.unit_ksps} measured KSPS on ${pool.unit_board_type}` : '';
  const out = unit ? [h('p', { class: 'muted' }, unit)] : [];
  for (const node of pool.nodes) {
    out.push(h('h2', { 'data-node': node.name }, node.name, ' ', stateText(node.state)),
      h('p', { class: 'muted' }, `Pools: ${node.pools.join(', ') || 'default'}; last heartbeat ` +
        formatTime(node.last_heartbeat_ms)),
      table(null, [
        ['Board', (b) => b.info.index], ['Type', (b) => b.info.type],
        ['State', (b) => stateText(b.state)],
        ['Health', (b) => `${b.info.health}%` + (b.info.health_detail ? ` (${b.info.health_detail})` : '')],
        ['Power', (b) => b.info.power || '—'],
        ['Cores used / live', (b) => `${b.cores_used} / ${b.cores_total}`, { num: true }],
        ['KSPS used / budget', (b) => `${b.ksps_used} / ${b.info.ksps}`, { num: true }],
        ['Measured KSPS', (b) => (b.info.measured_ksps ? String(b.info.measured_ksps) : 'not measured'), { num: true }],
        ['Latency', (b) => (b.info.latency_us ? `${b.info.latency_us} µs` : '—'), { num: true }],
        ['Tasks', (b) => b.tasks, { num: true }],
        ['Attributes', (b) => attributes(b.info.attributes)],
      ], node.boards, (b) => ({ 'data-board': `${node.name}/${b.info.index}` })));
  }
  return out;
}

function attributes(map) {
  const entries = Object.entries(map || {}).sort(([a], [b]) => a.localeCompare(b));
  if (!entries.length) return '—';
  return h('ul', { class: 'attrs' }, entries.map(([k, v]) => h('li', {}, `${k} = ${v}`)));
}
