// One job: its fields, its state history with reasons, each task's placement (the rectangle of
// cores drawn on its board), output, results and usage. Read again when the event stream says it
// changed; its boards' descriptions (the pool) only when one of them changes.
import { api, withQuery } from './api.js';
import { h, table, stateText, errorLine, formatTime, formatDuration, formatCount, show }
  from './dom.js';
import { boardPicture } from './placement.js';

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT']);

export function jobView(main, tenant, id) {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  show(main, h('h1', {}, `Job ${id} `, h('span', { class: 'muted' }, `(${tenant})`)), body);
  const query = (extra = {}) => withQuery('', { tenant, ...extra });
  const path = '/v1/jobs/' + encodeURIComponent(id);
  let reading = null;  // the read in flight
  let again = false;   // another event came during it
  let boards = new Map();  // node/board -> its description: read once, not at every event

  async function read() {
    if (reading) { again = true; return; }
    reading = (async () => {
      do {
        again = false;
        try {
          const { job } = await api(path + query());
          if (job.tasks.some((t) => !boards.has(t.node + '/' + t.board))) boards = await boardsOf();
          const outputs = await Promise.all(job.tasks.map((t) => outputOf(t.index)));
          const results = await Promise.all(job.tasks.map((t) => resultsOf(t.index)));
          body.replaceChildren(...render(job, boards, outputs, results, download));
        } catch (e) {
          body.replaceChildren(errorLine(e.message));
        }
      } while (again);
      reading = null;
    })();
  }

  async function boardsOf() {
    const pool = await api('/v1/pool').catch(() => ({ nodes: [] }));
    const boards = new Map();
    for (const node of pool.nodes) {
      for (const b of node.boards) boards.set(node.name + '/' + b.info.index, b.info);
    }
    return boards;
  }

  async function outputOf(task) {
    const text = async (stderr) => {
      const data = await api(path + '/logs' + query({ task, stderr: stderr ? 'true' : '' }));
      const bytes = Uint8Array.from(atob(data.data), (c) => c.charCodeAt(0));
      return { text: new TextDecoder().decode(bytes), offset: Number(data.offset),
               size: Number(data.size) };
    };
    try {
      return { stdout: await text(false), stderr: await text(true) };
    } catch (e) {
      return { error: e.message };
    }
  }

  async function resultsOf(task) {
    try {
      return await api(path + '/results' + query({ task }));
    } catch (e) {
      return { error: e.message };
    }
  }

  // A result file, a slice at a time, saved by the browser.
  async function download(task, name) {
    const parts = [];
    let offset = 0;
    for (;;) {
      const page = await api(path + '/results' + query({ task, file: name, offset }));
      const bytes = Uint8Array.from(atob(page.data), (c) => c.charCodeAt(0));
      parts.push(bytes);
      offset += bytes.length;
      if (!bytes.length || offset >= Number(page.size)) break;
    }
    const link = h('a', { href: URL.createObjectURL(new Blob(parts)),
                          download: name.split('/').pop() });
    document.body.append(link);
    link.click();
    link.remove();
  }

  read();
  return {
    onEvent(type, event) {
      // A board of its tasks changed (a dead core, a drain): its picture is read again.
      const ours = type === 'node' &&
        [...boards.keys()].some((key) => key.startsWith(event.node.node + '/'));
      if (type === 'reset' || ours) boards = new Map();
      if (type === 'reset' || ours ||
          (type === 'job' && event.job.tenant === tenant && event.job.tenant_job_id === id)) {
        read();
      }
    },
  };
}

// What kind of job, with what makes each kind itself.
function kindText(job) {
  const spec = job.spec;
  switch (spec.kind) {
    case 'SESSION': return `session: ${job.steps || 0} steps so far, keepalive ${spec.keepalive_s}s`;
    case 'STEP': return `step in session ${spec.alloc} (task ${spec.alloc_task || 0})`;
    case 'SERVICE':
      return `experiment service: turns of ${(spec.service && spec.service.period_ms) || 20} ms`;
    default: return 'batch';
  }
}

function render(job, boards, outputs, results, download) {
  const spec = job.spec;
  const res = (spec.task && spec.task.resources) || {};
  const out = [
    h('dl', { 'data-state': job.state },
      h('dt', {}, 'State'), h('dd', { id: 'job-state' }, stateText(job.state)),
      h('dt', {}, 'Reason'), h('dd', {}, job.reason || '—'),
      h('dt', {}, 'Name'), h('dd', {}, spec.name),
      h('dt', {}, 'Kind'), h('dd', { id: 'job-kind' }, kindText(job)),
      h('dt', {}, 'User'), h('dd', {}, spec.user),
      h('dt', {}, 'Pool / queue'), h('dd', {}, `${spec.pool || 'default'} / ${spec.queue || 'default'}`),
      h('dt', {}, 'Asked for'), h('dd', {}, `${res.cores || 0} cores, ${res.ksps || 0} KSPS` +
        (res.board_type ? `, ${res.board_type}` : '')),
      h('dt', {}, 'Submitted'), h('dd', {}, formatTime(job.submit_ms)),
      h('dt', {}, 'Started'), h('dd', {}, formatTime(job.start_ms) || '—'),
      h('dt', {}, 'Ended'), h('dd', {}, formatTime(job.end_ms) || '—'),
      h('dt', {}, 'Attempts'), h('dd', {}, String(job.attempt)),
      TERMINAL.has(job.state) ? [h('dt', {}, 'Exit code'), h('dd', {}, String(job.exit_code))] : null),
    h('h2', {}, 'History'),
    table(null, [
      ['Time', (t) => formatTime(t.time_ms)],
      ['From', (t) => (t.from === 'JOB_STATE_UNSPECIFIED' ? '(submitted)' : t.from)],
      ['To', (t) => stateText(t.to)], ['Reason', (t) => t.reason],
    ], job.history),
  ];
  if (!job.tasks.length) {
    out.push(h('p', { class: 'muted' }, 'No task has started yet.'));
    return out;
  }
  out.push(h('h2', {}, 'Usage'), usageTable(job));
  job.tasks.forEach((task, i) => {
    out.push(h('h2', {}, `Task ${task.index} on ${task.node}/${task.board}`));
    const board = boards.get(task.node + '/' + task.board);
    out.push(board ? boardPicture(board, task)
                   : h('p', { class: 'muted' }, 'Its board is no longer in the pool.'));
    out.push(outputBlock(outputs[i]), resultsBlock(task.index, results[i], download));
  });
  return out;
}

function usageTable(job) {
  const now = Date.now();
  const elapsed = (t) => (Number(t.end_ms) || now) - Number(t.start_ms);
  const cores = (t) => t.mapping && t.mapping.cores ? t.mapping.cores.length : 0;
  const u = (t) => t.usage || {};
  return table('This attempt, per task (core-seconds = cores held x time)', [
    ['Task', (t) => t.index], ['Board', (t) => `${t.node}/${t.board}`],
    ['State', (t) => t.state.replace('TASK_', '')],
    ['Run time', (t) => (Number(t.start_ms) ? formatDuration(elapsed(t)) : '—')],
    ['Cores', (t) => cores(t), { num: true }],
    ['Core-seconds', (t) => formatCount(Math.round(cores(t) * elapsed(t) / 1000)), { num: true }],
    ['Spikes in', (t) => formatCount(u(t).injected), { num: true }],
    ['Delivered', (t) => formatCount(u(t).delivered), { num: true }],
    ['Out', (t) => formatCount(u(t).outputs), { num: true }],
    ['Dropped', (t) => formatCount(u(t).dropped), { num: true }],
    ['Throttled', (t) => formatCount(u(t).throttled), { num: true }],
  ], job.tasks);
}

function outputBlock(output) {
  if (output.error) return h('p', { class: 'muted' }, 'Output: ' + output.error);
  const part = (name, o) => [
    h('h3', {}, name, o.size > o.offset + o.text.length
      ? h('span', { class: 'muted' }, ` (the first ${formatCount(o.text.length)} of ${formatCount(o.size)} bytes; snnctl logs has the rest)`)
      : null),
    o.text ? h('pre', { class: 'output' }, o.text) : h('p', { class: 'muted' }, '(empty)'),
  ];
  return h('div', {}, part('Standard output', output.stdout), part('Standard error', output.stderr));
}

function resultsBlock(task, results, download) {
  const heading = h('h3', {}, 'Results ', h('span', { class: 'muted' }, '($SNN_OUTPUT_DIR)'));
  if (results.error) return h('div', {}, heading, h('p', { class: 'muted' }, results.error));
  if (!results.files.length) return h('div', {}, heading, h('p', { class: 'muted' }, 'None.'));
  return h('div', {}, heading, table(null, [
    ['File', (f) => f.name], ['Bytes', (f) => formatCount(f.size), { num: true }],
    ['Written', (f) => formatTime(f.mtime_ms)],
    ['', (f) => h('button', { type: 'button', onclick: (e) => {
      e.target.disabled = true;
      download(task, f.name).catch((err) => e.target.after(errorLine(err.message)))
        .finally(() => { e.target.disabled = false; });
    } }, 'Download ', h('span', { class: 'visually-hidden' }, f.name))],
  ], results.files, (f) => ({ 'data-result': f.name })));
}
