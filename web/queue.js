// The queue: jobs active in a recent window (pending, running, or ended within it), yours or,
// for readers and admins, every tenant's. Rows change as the event stream says; a job the page has
// not seen yet is read once and added.
import { api, withQuery } from './api.js';
import { h, table, stateText, errorLine, formatTime, show } from './dom.js';

const WINDOWS = [['1 hour', 3600e3], ['24 hours', 86400e3], ['7 days', 7 * 86400e3]];
const MAX_PAGES = 2;  // of 1,000 jobs: beyond, the page says so (snnctl jobs lists every one)
const MAX_EARLY = 200;  // events held while listing; beyond, the list is read again

export function jobKey(tenant, id) { return tenant + '/' + id; }
export function jobHref(tenant, id) {
  return '#/jobs/' + encodeURIComponent(tenant) + '/' + encodeURIComponent(id);
}

export function queueView(main, params) {
  const all = params.get('all') === '1';
  const tenant = all ? '' : params.get('tenant') || '';  // '' : the caller's own
  const windowMs = Number(params.get('window')) || WINDOWS[1][1];
  const jobs = new Map();  // by jobKey: the row's fields
  const tenants = new Set();
  let loaded = false;
  let truncated = false;
  const early = [];  // events that came while the list was read (at most MAX_EARLY)
  let overflowed = false;
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));

  const go = (a, w, t) => {
    location.hash = withQuery('#/jobs', { all: a ? '1' : '', window: w, tenant: t });
  };
  const allBox = h('input', { type: 'checkbox', id: 'all-tenants', checked: all,
                              onchange: (e) => go(e.target.checked, windowMs, '') });
  const windowSelect = h('select', { id: 'window', onchange: (e) => go(all, e.target.value, tenant) },
    WINDOWS.map(([name, ms]) => h('option', { value: ms, selected: ms === windowMs }, name)));
  const tenantBox = h('input', { id: 'tenant', size: 12, value: tenant, disabled: all,
                                 placeholder: 'yours', onchange: (e) => go(false, windowMs,
                                                                          e.target.value.trim()) });
  show(main, h('h1', {}, 'Queue'),
    h('p', {}, h('label', { for: 'window' }, 'Jobs active in the last'), windowSelect, ' ',
      h('label', { for: 'tenant' }, 'of tenant'), tenantBox, ' or ',
      allBox, h('label', { for: 'all-tenants' }, "every tenant's (readers and admins)")),
    body);

  function put(j) {
    const key = jobKey(j.tenant, j.tenant_job_id);
    const row = jobs.get(key) || {};
    Object.assign(row, { id: j.id, tenant: j.tenant, tenant_job_id: j.tenant_job_id,
                         name: j.name ?? row.name, user: j.user ?? row.user, state: j.state,
                         reason: j.reason, submit_ms: j.submit_ms ?? row.submit_ms,
                         start_ms: j.start_ms ?? row.start_ms, end_ms: j.end_ms ?? row.end_ms });
    jobs.set(key, row);
    tenants.add(j.tenant);
  }
  const fromRecord = (r) => ({ ...r, name: r.spec.name, user: r.spec.user });

  function render() {
    const rows = [...jobs.values()].sort((a, b) => Number(b.id) - Number(a.id));
    body.replaceChildren(...[
      rows.length ? table(null, [
        ['Job', (r) => h('a', { href: jobHref(r.tenant, r.tenant_job_id) }, r.tenant_job_id)],
        ['Tenant', (r) => r.tenant], ['Name', (r) => r.name], ['User', (r) => r.user],
        ['State', (r) => stateText(r.state)], ['Reason', (r) => r.reason],
        ['Submitted', (r) => formatTime(r.submit_ms)], ['Started', (r) => formatTime(r.start_ms)],
        ['Ended', (r) => formatTime(r.end_ms)],
      ], rows, (r) => ({ 'data-job': jobKey(r.tenant, r.tenant_job_id), 'data-state': r.state }))
        : h('p', {}, 'No jobs in this window.'),
      truncated ? h('p', { class: 'muted' },
        `Showing the first ${MAX_PAGES * 1000} jobs; snnctl jobs lists every one.`) : null,
    ].filter(Boolean));
  }

  async function readOne(tenant, id) {
    const data = await api(withQuery('/v1/jobs/' + encodeURIComponent(id), { tenant }));
    put(fromRecord(data.job));
  }

  async function load() {
    try {
      let after = '';
      const since = Date.now() - windowMs;
      for (let page = 0; page < MAX_PAGES; ++page) {
        const data = await api(withQuery('/v1/jobs', { all_tenants: all ? 'true' : '', tenant,
                                                       since_ms: since, after_id: after }));
        for (const r of data.jobs) put(fromRecord(r));
        truncated = data.more;
        if (!data.more) break;
        after = data.next_after_id;
      }
      if (overflowed) {  // more changed while listing than is worth reading one by one
        overflowed = false;
        early.length = 0;
        return load();
      }
      loaded = true;
      // An event read while listing may be older than the list: read those jobs again.
      await Promise.all(early.splice(0).map((e) => readOne(e.tenant, e.tenant_job_id)));
      render();
    } catch (e) {
      body.replaceChildren(errorLine(e.message));
    }
  }

  async function onJobEvent(e) {
    if (!loaded) {
      if (early.length < MAX_EARLY) early.push(e); else overflowed = true;
      return;
    }
    const key = jobKey(e.tenant, e.tenant_job_id);
    if (jobs.has(key)) {
      put(e);
      return render();
    }
    // A job this view has not listed: of its tenant (or any, with every tenant's).
    if (tenant && e.tenant !== tenant) return;
    if (!all && !tenant && tenants.size && !tenants.has(e.tenant)) return;
    try {
      await readOne(e.tenant, e.tenant_job_id);
      render();
    } catch (err) { /* gone or not readable: nothing to add */ }
  }

  load();
  return {
    onEvent(type, event) {
      if (type === 'job') onJobEvent(event.job);
      else if (type === 'reset') { jobs.clear(); loaded = false; load(); }
    },
  };
}
